"""Action targets against the gold set: labelled action requests (bench/kgqa/action_requests.py) planned by the
real local model and resolved on the real graph, each plan's targets compared with the set the request
names. Side by side in one run: the model's plan as it came (before) and after the request's scope check
(actions/scope.py). Reports the share of plans whose targets equal the gold set, the
overreaching plans (targets beyond the gold set) and how many of those were stated at or above the approval
threshold, per kind of request; with --route, also the router's share of ACTION.

    .venv/bin/python bench/action_targets.py --seed 7 --per-kind 1 --out bench/results/actions-seed7.jsonl
    .venv/bin/python bench/action_targets.py --score bench/results/actions-seed7.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shlex
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from actions.catalogue import about_actions
from actions.intent import checked_intent
from actions.ontology import Ontology
from activities.action_planning import ActionPlanningActivities
from activities.actions import ActionTools
from backends.graph_store import GraphStore
from backends.llm import LLMClient
from bench.kgqa.action_requests import KINDS, ROUTING_KINDS, generate
from contracts.action_path import ActionIntent, ResolveTargetsInput
from contracts.routing import RouteInput
from embedded import demo_graph
from embedded.model_weights import resolve_model
from embedded.parts import falkordb_server, llm_server
from embedded.processes import free_port
from service.prompts import PromptTemplates

APPROVAL_THRESHOLD = 0.9  # the default action_confidence_threshold


class RecordingLLM:
    """The real client, keeping each completion's text (the model's own plan, before any check)."""

    def __init__(self, inner: LLMClient) -> None:
        self.inner = inner
        self.texts: list[str] = []

    async def chat(self, *args: Any, **kwargs: Any) -> Any:
        completion = await self.inner.chat(*args, **kwargs)
        self.texts.append(completion.text)
        return completion


def judged(targets: list[str] | None, confidence: float, gold: list[str]) -> dict[str, Any]:
    got, want = set(targets or []), set(gold)
    over = len(got - want)
    return {
        "targets": len(got),
        "exact": targets is not None and got == want,
        "overreach": over,
        "overreach_confident": over > 0 and confidence >= APPROVAL_THRESHOLD,
        "confidence": confidence,
    }


async def resolve(
    tools: ActionTools, intent: ActionIntent | None, left_out: list[str]
) -> tuple[list[str] | None, float, str]:
    if intent is None:
        return None, 0.0, "no plan"
    found = await tools.resolve_action_targets(ResolveTargetsInput(intent=intent, max_targets=5000, left_out=left_out))
    if found.error:
        return None, 0.0, found.error
    return [t.entity_id for t in found.targets], found.confidence, found.reasoning


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    data = Path(tempfile.mkdtemp(prefix="bench-actions-"))
    db_port, llm_port = free_port(), free_port()
    servers = [falkordb_server(data, db_port), llm_server(data, resolve_model().path, llm_port, "local")]
    for server in servers:
        server.start()
    records = []
    try:
        await asyncio.gather(*(s.wait_ready(300) for s in servers))
        url = f"redis://127.0.0.1:{db_port}"
        await demo_graph.load(url, "procurement")
        ontology = Ontology.load(demo_graph.ONTOLOGY_PATH)
        graph = GraphStore(url, "procurement")
        requests = await generate(
            graph,
            ontology,
            seed=args.seed,
            per_kind=args.per_kind,
            kinds=tuple(args.kinds.split(",")) if args.kinds else (*KINDS, *ROUTING_KINDS),
        )
        print(f"{len(requests)} requests (seed {args.seed})", flush=True)
        client = LLMClient(f"http://127.0.0.1:{llm_port}/v1", "local", timeout_s=300)
        llm = RecordingLLM(client)
        planner = ActionPlanningActivities(llm, ontology, PromptTemplates.load(), graph)  # type: ignore[arg-type]
        tools = ActionTools(graph, ontology)
        for r in requests:
            record: dict[str, Any] = {
                "id": r.id,
                "kind": r.kind,
                "request": r.request,
                "gold": r.gold,
                "action": f"{r.entity_type}.{r.action}",
                "route": r.route,
            }
            if r.route != "ACTION":  # a routing question: where it goes is all there is to judge
                started = time.perf_counter()
                routed = await planner.route(RouteInput(question=r.request))
                record.update(
                    routed=routed.intent.value,
                    route_s=round(time.perf_counter() - started, 2),
                    route_reasoning=routed.reasoning,
                    catalogue=routed.intent.value == "ANSWER" and about_actions(ontology, r.request),
                )
                records.append(record)
                print(json.dumps({k: record[k] for k in ("id", "kind", "request", "routed")}), flush=True)
                continue
            if args.route:
                started = time.perf_counter()
                record["routed"] = (await planner.route(RouteInput(question=r.request))).intent.value
                record["route_s"] = round(time.perf_counter() - started, 2)
            llm.texts.clear()
            started = time.perf_counter()
            planned = await planner.plan_action(RouteInput(question=r.request))
            record["plan_s"] = round(time.perf_counter() - started, 2)
            record["right_action"] = planned.intent is not None and (
                planned.intent.entity_type,
                planned.intent.action_name,
            ) == (r.entity_type, r.action)
            before = None
            try:  # the model's own last plan, checked as before the scope check (unstated filters dropped)
                before, problems = checked_intent(ontology, ActionIntent.model_validate_json(llm.texts[-1]))
                before = None if problems else planner._stated_filters_only(before, r.request)[0]
            except ValueError:
                pass
            targets, confidence, why = await resolve(tools, before, [])
            record["before"] = {
                **judged(targets, confidence, r.gold),
                "reasoning": why,
                "intent": before.model_dump() if before else None,
            }
            targets, confidence, why = await resolve(tools, planned.intent, planned.left_out)
            record["after"] = {
                **judged(targets, confidence, r.gold),
                "reasoning": why,
                "intent": planned.intent.model_dump() if planned.intent else None,
                "added": planned.notes,
                "left_out": planned.left_out,
                "error": planned.error,
            }
            records.append(record)
            print(
                json.dumps({k: record[k] for k in ("id", "kind", "request")}),
                f"before exact={record['before']['exact']} over={record['before']['overreach']} | "
                f"after exact={record['after']['exact']} over={record['after']['overreach']} "
                f"conf={record['after']['confidence']:.2f}",
                flush=True,
            )
        await client.aclose()
        await graph.aclose()
    finally:
        for server in servers:
            server.stop()
    return records


def routing_report(records: list[dict[str, Any]]) -> list[str]:
    """Per right route, how often the router chose it (and for questions about the actions, answered them
    from the definitions)."""
    judged = [r for r in records if "routed" in r]
    if not judged:
        return []
    lines = [
        "",
        "| right route | requests | routed right | routed QUERY | routed ACTION | routed ANSWER | routing p50 s |",
        "|---|---|---|---|---|---|---|",
    ]
    for route in ("ACTION", "QUERY", "ANSWER"):
        rs = [r for r in judged if r.get("route", "ACTION") == route]
        if not rs:
            continue
        seconds = sorted(r["route_s"] for r in rs)
        counts = {i: sum(r["routed"] == i for r in rs) for i in ("QUERY", "ACTION", "ANSWER")}
        lines.append(
            f"| {route} | {len(rs)} | {counts[route]}/{len(rs)} | {counts['QUERY']} | {counts['ACTION']} | "
            f"{counts['ANSWER']} | {seconds[len(seconds) // 2]:.1f} |"
        )
    return lines


def report(records: list[dict[str, Any]], command: str) -> str:
    routing = routing_report(records)
    records = [r for r in records if r.get("route", "ACTION") == "ACTION"]
    kinds: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        kinds[r["kind"]].append(r)
        kinds["all"].append(r)

    def row(name: str, rs: list[dict[str, Any]]) -> str:
        def share(side: str, key: str) -> str:
            return f"{sum(bool(r[side][key]) for r in rs)}/{len(rs)}"

        routed = f"{sum(r.get('routed') == 'ACTION' for r in rs)}/{len(rs)}" if any("routed" in r for r in rs) else "-"
        held = sum(bool(r["after"]["left_out"]) and r["after"]["confidence"] < APPROVAL_THRESHOLD for r in rs)
        return (
            f"| {name} | {len(rs)} | {share('before', 'exact')} | {share('after', 'exact')} | "
            f"{share('before', 'overreach')} | {share('after', 'overreach')} | "
            f"{share('before', 'overreach_confident')} | {share('after', 'overreach_confident')} | "
            f"{held} | {routed} |"
        )

    lines = [
        f"Command: `{command}` ({time.strftime('%Y-%m-%d')})",
        "",
        "| kind | requests | targets = gold, before | after | overreaching, before | after | "
        f"overreaching at >= {APPROVAL_THRESHOLD}, before | after | held for a human (left out) | routed ACTION |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    lines += [row(k, kinds[k]) for k in [*KINDS, "all"] if k in kinds]
    plan_s = sorted(r["plan_s"] for r in records)
    if plan_s:
        lines.append(f"\nplan_action p50 {plan_s[len(plan_s) // 2]:.1f} s over {len(plan_s)} requests")
    return "\n".join(lines + routing)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--per-kind", type=int, default=1, help="requests of each kind per action")
    parser.add_argument("--kinds", default="", help=f"comma-separated subset of {','.join((*KINDS, *ROUTING_KINDS))}")
    parser.add_argument(
        "--route",
        action="store_true",
        help="also ask the router about each change request (routing questions always are)",
    )
    parser.add_argument("--out", type=Path, help="write each request's record as JSON lines")
    parser.add_argument("--score", type=Path, nargs="+", help="report on records written before; nothing run")
    args = parser.parse_args()
    command = " ".join([".venv/bin/python", "bench/action_targets.py", *(shlex.quote(a) for a in sys.argv[1:])])
    if args.score:
        records = [json.loads(line) for p in args.score for line in p.read_text().splitlines() if line.strip()]
    else:
        records = asyncio.run(run(args))
        if args.out:
            args.out.write_text("".join(json.dumps(r) + "\n" for r in records))
    print(report(records, command))


if __name__ == "__main__":
    main()
