"""The commands that act on runs through Temporal: `override`, `status` and `replay`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pydantic import ValidationError
from temporalio.client import WorkflowUpdateFailedError
from temporalio.service import RPCError

from cli.decide import NotAwaiting, default_decider, default_signing_key, signed_for_run
from cli.errors import FAILED, UNREACHABLE_OR_BAD_INPUT, error
from contracts.override import Decision, Override
from overrides.checks import refusal_reason, signed_decision
from overrides.signing import load_private_key
from service.connections import PartUnreachable, connect_temporal
from service.flags import config_from_args
from service.run_client import AgentRun
from workflows.replay import load_history, replay


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    o = sub.add_parser(
        "override", parents=[common], help="answer a run's override request (Temporal update submit_override)"
    )
    o.add_argument("workflow_id", help="the run, e.g. agent-<request id>")
    o.add_argument("step_id", help="the step that waits (named by the override request), e.g. s1, or approve")
    o.add_argument(
        "decision",
        choices=[d.value for d in Decision],
        help="accept the result, retry the step, skip it, or abort the run",
    )
    o.add_argument("--arguments", help='new arguments for retry, as JSON, e.g. \'{"query": "MATCH ..."}\'')
    o.add_argument("--reason", default="", help="why (recorded with the decision)")
    o.add_argument(
        "--by",
        default=default_decider(),
        help="who decides: the identity's name when the service checks signatures (recorded)",
    )
    o.add_argument(
        "--key",
        "--signing-key",
        dest="key",
        type=Path,
        default=default_signing_key(),
        help="sign the decision with this private key file (tg-confidence keys new; env "
        "TGCA_OVERRIDE_KEY); needed when the service has override_keys",
    )
    o.add_argument(
        "--print",
        dest="print_only",
        action="store_true",
        help="print the decision as JSON (for temporal workflow signal --input, or a Pulsar follow-up) "
        "instead of sending it",
    )
    o.add_argument(
        "--challenge",
        help="sign over this challenge (named by the override request) without asking Temporal for it; "
        "with --print, signs offline, e.g. for a Pulsar follow-up; needs --key",
    )
    st = sub.add_parser("status", parents=[common], help="show a run's status")
    st.add_argument("workflow_id", help="the run, e.g. agent-<request id>")
    rp = sub.add_parser("replay", parents=[common], help="replay histories against the current workflow code")
    rp.add_argument("workflow_ids", nargs="*", help="runs to fetch from Temporal and replay")
    rp.add_argument("--file", type=Path, action="append", default=[], help="an exported history JSON (repeatable)")
    rp.add_argument("--export", type=Path, help="also write each fetched history to this directory")


async def override(args: argparse.Namespace) -> int:
    try:
        arguments = json.loads(args.arguments) if args.arguments else None
        decision = Override(
            step_id=args.step_id, decision=args.decision, arguments=arguments, reason=args.reason, by=args.by
        )
    except (json.JSONDecodeError, ValidationError) as exc:
        return error(f"--arguments must be a JSON object of strings: {exc}", UNREACHABLE_OR_BAD_INPUT)
    if args.challenge and not args.key:
        return error("--challenge signs a decision: give the private key with --key", UNREACHABLE_OR_BAD_INPUT)
    try:
        private = load_private_key(args.key) if args.key else None
    except (OSError, ValueError) as exc:
        return error(f"cannot read the key {args.key}: {exc}", UNREACHABLE_OR_BAD_INPUT)
    if private is not None and args.challenge and args.print_only:  # offline: nothing to ask Temporal
        print(
            signed_decision(decision, private, args.workflow_id, args.challenge).model_dump_json(exclude_defaults=True)
        )
        return 0
    config = config_from_args(args)
    try:
        client = await connect_temporal(config.temporal_address, config.temporal_namespace)
        run = AgentRun(client, args.workflow_id)
        if private is not None:  # sign over the challenge of the request the run is waiting on
            decision = await signed_for_run(run, decision, private, args.challenge or "")
        if args.print_only:
            print(decision.model_dump_json(exclude_defaults=True))
            return 0
        outcome = await run.submit_override(decision)
    except NotAwaiting as exc:
        return error(str(exc), FAILED)
    except PartUnreachable as exc:
        return error(str(exc), UNREACHABLE_OR_BAD_INPUT)
    except WorkflowUpdateFailedError as exc:
        return error(f"override rejected: {refusal_reason(exc.cause)}", FAILED)
    except RPCError as exc:
        return error(f"{args.workflow_id}: {exc.message}", FAILED)
    print(outcome)
    return 0


async def status(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    try:
        client = await connect_temporal(config.temporal_address, config.temporal_namespace)
        run = await AgentRun(client, args.workflow_id).status()
    except PartUnreachable as exc:
        return error(str(exc), UNREACHABLE_OR_BAD_INPUT)
    except RPCError as exc:
        return error(f"{args.workflow_id}: {exc.message}", FAILED)
    print(run.model_dump_json(indent=2, exclude={"plan"}))
    return 0


async def replay_command(args: argparse.Namespace) -> int:
    histories = []
    try:
        histories += [load_history(path) for path in args.file]
    except (OSError, ValueError) as exc:
        return error(f"cannot read the history: {exc}", UNREACHABLE_OR_BAD_INPUT)
    if args.workflow_ids:
        config = config_from_args(args)
        try:
            client = await connect_temporal(config.temporal_address, config.temporal_namespace)
            for workflow_id in args.workflow_ids:
                history = await client.get_workflow_handle(workflow_id).fetch_history()
                histories.append(history)
                if args.export:
                    args.export.mkdir(parents=True, exist_ok=True)
                    (args.export / f"{workflow_id}.json").write_text(history.to_json())
        except PartUnreachable as exc:
            return error(str(exc), UNREACHABLE_OR_BAD_INPUT)
        except RPCError as exc:
            return error(exc.message, FAILED)
    if not histories:
        return error("give workflow ids or --file", UNREACHABLE_OR_BAD_INPUT)
    failed = 0
    for outcome in await replay(histories):
        if outcome.ok:
            print(f"ok            {outcome.workflow_id}")
        else:
            failed += 1
            print(f"NONDETERMINISM {outcome.workflow_id}: {outcome.error}")
    if failed:
        print(
            f"\n{failed} of {len(histories)} histories do not replay on this code: runs like them would fail if "
            "it were deployed. Guard the change with workflow.patched() (see docs/operations.md).",
            file=sys.stderr,
        )
    return FAILED if failed else 0
