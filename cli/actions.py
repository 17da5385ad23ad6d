"""`tg-confidence actions`: the action history (list) and undo through each definition's inverse."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from actions.ontology import Ontology, UnknownName
from activities.actions import ActionTools
from backends.action_history import ActionHistory, HistoryEntry
from backends.graph_store import GraphQueryError, GraphStore
from cli.decide import default_signing_key
from cli.errors import FAILED, UNREACHABLE_OR_BAD_INPUT, error
from contracts.action_path import parameters_text
from embedded.demo_graph import ONTOLOGY_PATH
from overrides.undo_policy import undo_refusal
from service.flags import config_from_args


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("actions", parents=[common], help="list executed actions, undo reversible ones")
    p.add_argument("--falkordb-url", help="FalkorDB URL (env TGCA_FALKORDB_URL)")
    p.add_argument("--graph-name", help="the graph (env TGCA_GRAPH_NAME)")
    p.add_argument(
        "--ontology",
        "--ontology-path",
        dest="ontology_path",
        help="the domain's ontology YAML, whose action definitions name the inverses "
        "(env TGCA_ONTOLOGY_PATH; default: the demo's)",
    )
    verbs = p.add_subparsers(dest="verb", required=True)
    ls = verbs.add_parser("list", help="the most recent executed actions")
    ls.add_argument("--run", default="", help="only this run (workflow id, e.g. agent-<request id>)")
    ls.add_argument("--entity", default="", help="only this entity id")
    ls.add_argument("--limit", type=int, default=50, help="at most this many, newest first")
    ls.add_argument("--json", action="store_true", help="one JSON object per line")
    undo = verbs.add_parser("undo", help="apply the inverse of executed actions (once each)")
    which = undo.add_mutually_exclusive_group(required=True)
    which.add_argument("--key", help="one action record's key")
    which.add_argument("--run", help="every action of this run")
    undo.add_argument("--by", default=os.environ.get("USER", ""), help="who undoes (recorded)")
    undo.add_argument(
        "--signing-key",
        type=Path,
        default=default_signing_key(),
        help="the undoer's private key (tg-confidence keys new); needed when override_keys are "
        "configured: only an identity with the role 'undo' may undo",
    )


def _line(e: HistoryEntry) -> str:
    changes = ", ".join(f"{k}: {v.get('before')!r} -> {v.get('after')!r}" for k, v in e.changes.items())
    state = f" [undone by {e.undone_by}]" if e.undone_by else (f" [undo of {e.undoes}]" if e.undoes else "")
    given = f" with {parameters_text(e.parameters)}" if e.parameters else ""
    return f"{e.at}  {e.action}{given} {e.entity_type} {e.entity_id}  {changes or 'no change'}{state}\n    key {e.key}"


async def run(args: argparse.Namespace) -> int:
    if args.verb == "list" and args.limit <= 0:
        return error("--limit must be positive", UNREACHABLE_OR_BAD_INPUT)
    config = config_from_args(args)
    ontology_path = Path(config.ontology_path or ONTOLOGY_PATH)
    try:
        ontology = Ontology.load(ontology_path)
    except (OSError, ValueError) as exc:
        return error(f"cannot load the ontology {ontology_path}: {exc}", UNREACHABLE_OR_BAD_INPUT)
    store = GraphStore(config.falkordb_url, config.graph_name)
    history = ActionHistory(ActionTools(store, ontology))
    try:
        if args.verb == "list":
            for entry in await history.list(run_id=args.run, entity_id=args.entity, limit=args.limit):
                print(entry.model_dump_json() if args.json else _line(entry))
            return 0
        refused = undo_refusal(config.agent.override_keys, args.by, args.signing_key)
        if refused:
            return error(refused, FAILED)
        entries = await history.list(key=args.key or "", run_id=args.run or "", limit=100_000)
        entries = [e for e in entries if not e.undoes and not e.undone_by]
        if not entries:
            return error("no executed action to undo there", FAILED)
        failed = 0
        for entry in entries:
            outcome = await history.undo(entry, args.by)
            failed += not outcome.success
            print(
                f"{'undone' if outcome.success else 'NOT undone'}: {entry.action} {entry.entity_id} - {outcome.detail}"
            )
        return 1 if failed else 0
    except (GraphQueryError, UnknownName, ConnectionError, OSError) as exc:
        return error(str(exc), UNREACHABLE_OR_BAD_INPUT)
    finally:
        await store.aclose()
