"""Side by side in one run: TrustGraph's own ReAct agent (trustgraph-flow 2.11.1's agent-manager-react) and this
service, on the same broker, calling the same scripted TrustGraph services, asked by the same TrustGraph client.

    .venv/bin/python bench/trustgraph_side_by_side.py --runs 20

The first run builds .bench-venv-trustgraph/ (trustgraph-flow without its heavy dependencies); the project's own
.venv never gets trustgraph-flow. Then: the real Temporal dev server, pulsar-lite and FalkorDB, this service's
worker and bridge in TrustGraph mode (`tool_backend: trustgraph`: its planner and synthesis call TrustGraph's
text-completion, its KnowledgeQuery steps TrustGraph's graph-rag), and the ReAct agent-manager configured as
TrustGraph configures it (a config service answering with its flow and its knowledge-query tools, a push when
the tools change). Both agents' LLM and graph-rag calls go to the same scripted services (bench/trustgraph_services.py),
which wait the LLM delay per LLM call and the tool delay per graph-rag call. Each agent has its own flow.

Per cell (LLM / tool delay x number of tools): a warm-up, then `--runs` questions per agent, one at a time,
alternating between the agents (ABBA...) so the machine's noise hits both alike. Each question is asked with
trustgraph-base's AgentClient on a RequestResponseClient, wired as TrustGraph's own processors wire it.

`--baseline DIR` adds a third agent: this service from another checkout (say `git archive` of the commit before a
change), its own worker and bridge run with this interpreter from DIR on a flow of their own, asked in the same
alternation, so a before/after comparison shares the machine's noise too:

    git archive HEAD | tar -x -C /tmp/before
    .venv/bin/python bench/trustgraph_side_by_side.py --runs 20 --baseline /tmp/before
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

from trustgraph.base.agent_client import AgentClient
from trustgraph.base.pubsub import get_async_pubsub
from trustgraph.base.request_response_client import RequestResponseClient
from trustgraph.base.request_response_spec import _make_impl_wrapper
from trustgraph.schema import AgentRequest, AgentResponse

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Deployment, deployment, percentile
from trustgraph_services import (
    BASELINE_FLOW,
    FINAL_ANSWER,
    REACT_FLOW,
    SERVICE_FLOW,
    WORKSPACE,
    Script,
    ScriptedTrustGraph,
    ensure_venv,
    queue_id,
    react_process,
)

from embedded.processes import ManagedProcess, free_port

QUESTION = "Are orders, invoices and payments in order?"
NUMBERS = itertools.count(1)
CELLS = [(0.0, 0.0, 1), (0.0, 0.0, 3), (0.3, 0.05, 1), (0.3, 0.05, 3)]  # (LLM s, tool s, tools)
ZERO_DELAY_CELLS = [cell for cell in CELLS if cell[0] == 0]


def not_the_llm(body: dict[str, Any]) -> tuple[int, str]:
    """The OpenAI-compatible server the harness starts: in TrustGraph mode nothing may call it."""
    return 500, "this bench runs the service in TrustGraph mode: its LLM is TrustGraph's text-completion"


async def agent_client(backend: Any, flow: str) -> tuple[Any, RequestResponseClient]:
    rr = await RequestResponseClient.create(
        backend=backend,
        request_topic=queue_id("request", "agent", flow),
        response_topic=queue_id("response", "agent", flow),
        request_schema=AgentRequest,
        response_schema=AgentResponse,
        default_timeout=120,
    )
    return _make_impl_wrapper(rr, AgentClient), rr


async def ask(agent: Any, timeout_s: float) -> float:
    """One question to the end of its dialog, in ms; an error or a wrong answer stops the bench. Each question
    is numbered: the same question again would let this service answer its tools from its result cache."""
    asked = f"{QUESTION} (question #{next(NUMBERS)})"
    started = time.perf_counter()
    answer = await agent.invoke(asked, timeout=timeout_s)
    elapsed = (time.perf_counter() - started) * 1000
    if FINAL_ANSWER not in answer:
        raise RuntimeError(f"unexpected answer: {answer!r}")
    return elapsed


async def until_answers(agent: Any, name: str, within_s: float) -> None:
    """A non-persistent request sent before the agent subscribed is lost: ask until one is answered."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            await ask(agent, 10)
            return
        except TimeoutError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name} did not answer within {within_s:.0f}s") from None


def cpu_seconds() -> tuple[float, float]:
    """(the machine's busy CPU seconds, this bench's: itself, its live descendants and the children it reaped),
    so the report can say how much of the machine other work took meanwhile."""
    tick = os.sysconf("SC_CLK_TCK")
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    busy = sum(int(v) for v in fields[:3] + fields[5:8]) / tick  # user nice system, irq softirq steal
    stats: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stats[int(entry.name)] = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
    mine, todo = set(), [os.getpid()]
    while todo:
        pid = todo.pop()
        mine.add(pid)
        todo += [p for p, st in stats.items() if int(st[1]) == pid and p not in mine]
    # after ")": state ppid ... utime(11) stime(12) cutime(13) cstime(14)
    own = sum(sum(int(stats[p][i]) for i in (11, 12, 13, 14)) for p in mine if p in stats) / tick
    return busy, own


def per_question(
    services: ScriptedTrustGraph, before: dict[tuple[str, str], int], flow: str, kinds: tuple[str, ...], runs: int
) -> float:
    return sum(services.calls[(flow, k)] - before.get((flow, k), 0) for k in kinds) / runs


def start_baseline(d: Deployment, code: Path, settings: dict[str, str]) -> None:
    """This service's worker and bridge from the checkout `code`, on BASELINE_FLOW and a task queue of their own,
    beside the deployment's (same servers, same settings otherwise, and `settings`). Stopped with the deployment."""
    env = {
        **d.env,
        "TGCA_FLOW": BASELINE_FLOW,
        "TGCA_QUEUES__WORKFLOW": "tgca-workflows-baseline",
        "TGCA_AUDIT_PATH": str(d.data / "audit-baseline.jsonl"),
        "PYTHONPATH": str(code),
        **settings,
    }
    for name in ("worker", "bridge"):
        part = ManagedProcess(
            f"baseline {name}",
            [sys.executable, "-m", name],
            d.data / f"baseline-{name}.log",
            env={**env, "TGCA_METRICS_PORT": str(free_port())},
            cwd=code,
        )
        part.start()
        d.children.append(part)


async def measure(
    runs: int,
    warm_up: int,
    parallel: bool,
    baseline: Path | None = None,
    cells: list[tuple[float, float, int]] = CELLS,
    baseline_settings: dict[str, str] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    venv = ensure_venv()
    script = Script()
    agents = {"react": REACT_FLOW, "service": SERVICE_FLOW, **({"baseline": BASELINE_FLOW} if baseline else {})}
    extra = {
        "TGCA_TOOL_BACKEND": "trustgraph",
        "TGCA_WORKSPACE": WORKSPACE,
        "TGCA_FLOW": SERVICE_FLOW,
        "TGCA_AGENT__PARALLEL_EXECUTION": "true" if parallel else "false",
        # The stand-in config service tells when TrustGraph's agent has read its tools: this service's
        # worker reading them too would be taken for it. Its planner is measured on its own tools.
        "TGCA_TRUSTGRAPH_CONFIG": "false",
    }
    rows: list[dict[str, Any]] = []
    load: dict[str, Any] = {"before": os.getloadavg()}
    async with deployment(not_the_llm, **extra) as d:
        services = ScriptedTrustGraph(d.pulsar_url, script, tuple(agents.values()))
        await services.start()
        react = react_process(venv, d.pulsar_url, d.data / "agent-manager-react.log")
        react.start()
        d.children.append(react)  # stopped with the rest
        if baseline is not None:
            start_baseline(d, baseline, baseline_settings or {})
        backend = get_async_pubsub(pulsar_host=d.pulsar_url)
        clients = {name: await agent_client(backend, flow) for name, flow in agents.items()}
        asked = {name: 0 for name in agents}  # questions in the cells, for the librarian documents per question
        try:
            for name, (agent, _) in clients.items():
                await until_answers(agent, name, 90)
            cpu_before, wall_before = cpu_seconds(), time.monotonic()
            librarian_before = dict(services.calls)
            for llm_s, tool_s, tools in cells:
                script.llm_s, script.tool_s = llm_s, tool_s
                await services.set_tools(tools)
                for _ in range(warm_up):
                    for name, (agent, _) in clients.items():
                        await ask(agent, 60)
                        asked[name] += 1
                before = dict(services.calls)
                offered = len(services.tools_offered)
                times: dict[str, list[float]] = {name: [] for name in agents}
                order = list(agents)
                for _ in range(runs):
                    for name in order:
                        times[name].append(await ask(clients[name][0], 60))
                        asked[name] += 1
                    order.reverse()
                if set(services.tools_offered[offered:]) != {tools}:
                    raise RuntimeError(f"ReAct was offered {set(services.tools_offered[offered:])} tools, not {tools}")
                row: dict[str, Any] = {"llm_ms": llm_s * 1000, "tool_ms": tool_s * 1000, "tools": tools}
                for name, flow in agents.items():
                    row[name] = {
                        "p50": percentile(times[name], 0.5),
                        "p95": percentile(times[name], 0.95),
                        "llm_calls": per_question(services, before, flow, ("prompt", "text-completion"), runs),
                        "tool_calls": per_question(services, before, flow, ("graph-rag",), runs),
                        "latencies": times[name],
                    }
                rows.append(row)
                print(
                    f"{tools} tool(s), {llm_s * 1000:.0f}/{tool_s * 1000:.0f} ms: "
                    + ", ".join(f"{name} p50 {row[name]['p50']:.0f} ms" for name in agents),
                    flush=True,
                )
            (busy_after, own_after), wall = cpu_seconds(), time.monotonic() - wall_before
            load["machine_cores_busy"] = (busy_after - cpu_before[0]) / wall
            load["others_cores_busy"] = (busy_after - cpu_before[0] - own_after + cpu_before[1]) / wall
            load["untagged_calls"] = {flow: services.calls[(flow, "untagged")] for flow in agents.values()}
            await asyncio.sleep(1)  # this service writes its documents off the caller's path: let the last arrive
            documents = {
                flow: services.calls[(flow, "librarian")] - librarian_before.get((flow, "librarian"), 0)
                for flow in (REACT_FLOW, SERVICE_FLOW)
            }
            load["librarian_documents_per_question"] = {
                "react": documents[REACT_FLOW] / asked["react"],
                "service": documents[SERVICE_FLOW] / sum(n for a, n in asked.items() if a != "react"),
            }
        finally:
            for _, rr in clients.values():
                await rr.close()
            await backend.close()
            await services.stop()
    load["after"] = os.getloadavg()
    return rows, load


def table(rows: list[dict[str, Any]]) -> str:
    baseline = "baseline" in rows[0]
    lines = [
        "| tools | LLM / tool delay | ReAct p50 ms | ReAct p95 ms | ReAct LLM / tool calls | "
        "service p50 ms | service p95 ms | service LLM / tool calls | service / ReAct p50 |"
        + (" baseline p50 ms | baseline p95 ms | baseline / ReAct p50 | service / baseline p50 |" if baseline else ""),
        "|---|---|---|---|---|---|---|---|---|" + ("---|---|---|---|" if baseline else ""),
    ]
    for r in rows:
        react, service = r["react"], r["service"]
        line = (
            f"| {r['tools']} | {r['llm_ms']:.0f} / {r['tool_ms']:.0f} ms | {react['p50']:.0f} | {react['p95']:.0f} | "
            f"{react['llm_calls']:g} / {react['tool_calls']:g} | {service['p50']:.0f} | {service['p95']:.0f} | "
            f"{service['llm_calls']:g} / {service['tool_calls']:g} | {service['p50'] / react['p50']:.2f}x |"
        )
        if baseline:
            base = r["baseline"]
            line += (
                f" {base['p50']:.0f} | {base['p95']:.0f} | {base['p50'] / react['p50']:.2f}x | "
                f"{service['p50'] / base['p50']:.2f}x |"
            )
        lines.append(line)
    return "\n".join(lines)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20, help="measured questions per agent per cell")
    parser.add_argument("--warm-up", type=int, default=3, help="unmeasured questions per agent per cell")
    parser.add_argument(
        "--sequential",
        action="store_true",
        help="run this service's steps one after another (its default; the bench sets "
        "agent.parallel_execution, as a deployment would for independent steps)",
    )
    parser.add_argument(
        "--baseline", type=Path, help="a checkout of this service to measure beside the current code, as a third agent"
    )
    parser.add_argument(
        "--baseline-setting",
        action="append",
        default=[],
        metavar="TGCA_NAME=VALUE",
        help="a setting for the baseline's worker and bridge only (say TGCA_EXPLAIN=off, with the "
        "current code as the baseline); repeatable",
    )
    parser.add_argument("--zero-delay", action="store_true", help="only the rows without LLM and tool delays")
    parser.add_argument("--out", type=Path, help="also write the rows (with every latency) as JSON here")
    args = parser.parse_args()
    rows, load = await measure(
        args.runs,
        args.warm_up,
        not args.sequential,
        args.baseline.resolve() if args.baseline else None,
        ZERO_DELAY_CELLS if args.zero_delay else CELLS,
        dict(setting.split("=", 1) for setting in args.baseline_setting),
    )
    print(
        f"\nmachine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
        f"date {time.strftime('%Y-%m-%d')}; {args.runs} sequential runs per agent per row, alternating; "
        f"load average before {load['before'][0]:.2f}, after {load['after'][0]:.2f}; while measuring, "
        f"{load['machine_cores_busy']:.2f} cores busy on average, {load['others_cores_busy']:.2f} of them with "
        f"work outside this bench; this service's steps {'one after another' if args.sequential else 'in parallel'}"
        "\n"
    )
    print(table(rows))
    print(
        f"\nLLM and graph-rag requests that named no question (not counted above: this service's worker "
        f"warming its LLM's prompt cache at start): {load['untagged_calls']}"
    )
    documents = load["librarian_documents_per_question"]
    print(
        f"Librarian documents per question, all rows: ReAct {documents['react']:.1f}, this service "
        f"{documents['service']:.1f}" + (" (the baseline's counted with it)" if args.baseline else "")
    )
    if args.out:
        args.out.write_text(
            json.dumps(
                {
                    "rows": rows,
                    "load": load,
                    "runs": args.runs,
                    "parallel": not args.sequential,
                    "baseline": str(args.baseline) if args.baseline else None,
                    "baseline_settings": args.baseline_setting,
                },
                indent=1,
            )
        )


if __name__ == "__main__":
    asyncio.run(main())
