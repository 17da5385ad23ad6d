"""`tg-confidence ask`: one question over Pulsar, its messages printed as they arrive."""

from __future__ import annotations

import argparse
import uuid
from pathlib import Path
from typing import TypedDict

from cli.ask import AskTimeout, ask
from cli.ask_view import AnswerOnlyView, AskView, JsonView, PlainView, TerminalView
from cli.decide import default_decider, default_signing_key
from cli.errors import FAILED, UNREACHABLE_OR_BAD_INPUT, error
from cli.inline_override import InlineDecider
from contracts.names import workflow_id_for
from contracts.wire import AgentRequest
from service import defaults
from service.config import ServiceConfig
from service.flags import add_flow_args, config_from_args
from service.run_recovery import RunLookup
from service.terminal import can_prompt, styled


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    a = sub.add_parser("ask", parents=[common], help="ask one question over Pulsar")
    add_flow_args(a)
    a.add_argument("question", help="the question, in quotes")
    a.add_argument("-C", "--collection", default="default", help="TrustGraph collection the request names")
    a.add_argument("--streaming", action="store_true", help="ask for the answer in chunks")
    a.add_argument(
        "--json",
        action="store_true",
        dest="json_output",
        help="print each response as one line of JSON (TrustGraph's wire format), for scripts",
    )
    a.add_argument("--plan", default="", help="legacy request-level config JSON, e.g. '{\"max_retries\": 1}'")
    a.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for the final answer")
    a.add_argument(
        "--ui-url",
        help="Temporal Web UI, for the link to the run (default: the temporal_ui_url "
        f"setting, env TGCA_TEMPORAL_UI_URL, else {defaults.TEMPORAL_UI_URL}; '' for none)",
    )
    a.add_argument(
        "--conversation",
        default="",
        metavar="ID",
        help="continue conversation ID (the service remembers its earlier turns); 'new' starts one "
        "and prints its id for the next question",
    )
    d = a.add_argument_group("deciding here (at a terminal, ask asks you when the run waits for a human)")
    d.add_argument(
        "--by",
        default=default_decider(),
        help="who asks and decides: the identity's name when the service checks signatures (recorded)",
    )
    d.add_argument(
        "--key",
        "--signing-key",
        dest="key",
        type=Path,
        default=default_signing_key(),
        help="sign decisions with this private key (env TGCA_OVERRIDE_KEY); without it, a run that "
        "takes signed decisions is answered with `tg-confidence override`",
    )


async def run_ask(
    pulsar_url: str,
    question: str,
    *,
    request_topic: str,
    response_topic: str,
    timeout_s: float,
    streaming: bool = False,
    plan: str = "",
    ui_url: str | None = None,
    namespace: str = defaults.TEMPORAL_NAMESPACE,
    conversation_id: str = "",
    json_output: bool = False,
    collection: str = "default",
    group: list[str] | None = None,
    answer_only: bool = False,
    decider: InlineDecider | None = None,
    user: str = "",
    temporal_address: str = "",
) -> int:
    """Ask, print what comes back, return the exit code. `answer_only`: the answer's text and any error, as
    TrustGraph's `tg-invoke-agent` prints without -v (no question echo, thoughts or observations).
    `decider`: answer the run's override requests at this terminal (see inline_decider). `user`: who asks (the
    request's user: the requester of any action it starts)."""
    request_id = str(uuid.uuid4())
    request = AgentRequest(
        question=question,
        streaming=streaming,
        plan=plan,
        conversation_id=conversation_id,
        collection=collection,
        group=group,
        user=user,
    )
    view = view_for(json_output=json_output, answer_only=answer_only)
    if json_output:  # stdout carries nothing but the responses, one JSON object per line
        ui_url = None
    view.question(question)
    status = FAILED
    failure: tuple[str, int] | None = None
    try:
        runs = RunLookup(address=temporal_address, namespace=namespace) if temporal_address else None
        async for message in ask(
            pulsar_url,
            request,
            request_topic=request_topic,
            response_topic=response_topic,
            timeout_s=timeout_s,
            request_id=request_id,
            runs=runs,
        ):
            view.message(message)
            if decider is not None and message.message_type == "observation":
                await decider.on_message(message.content, view)
            if message.end_of_dialog:
                status = 0 if message.error is None else FAILED
    except AskTimeout as exc:
        failure = (str(exc), FAILED)
    except ConnectionError as exc:
        failure = (str(exc), UNREACHABLE_OR_BAD_INPUT)
    finally:
        view.close()  # the live status line goes before anything else is printed
    if failure is not None:
        return error(*failure)
    if ui_url:
        view.say(
            f"\nRun in the Temporal Web UI: {ui_url}/namespaces/{namespace}/workflows/{workflow_id_for(request_id)}"
        )
    if conversation_id:  # on stderr with --json: stdout stays one JSON object per line
        view.say(f'Continue this conversation: tg-confidence ask --conversation {conversation_id} "..."')
    return status


def view_for(*, json_output: bool, answer_only: bool) -> AskView:
    """JSON and the bare answer are for programs wherever they go; colour and live lines only for a person
    at a terminal (service/terminal.py); otherwise the plain lines scripts already parse."""
    if json_output:
        return JsonView()
    if answer_only:
        return AnswerOnlyView()
    return TerminalView() if styled() else PlainView()


def inline_decider(
    config: ServiceConfig, by: str, key: Path | None, temporal_address: str | None = None
) -> InlineDecider | None:
    """The inline override prompt, when someone at a terminal can answer it; never for a script."""
    if not can_prompt():
        return None
    return InlineDecider(
        temporal_address or config.temporal_address,
        config.temporal_namespace,
        by=by,
        key_path=key,
        signed=bool(config.agent.override_keys),
    )


def conversation_of(value: str) -> str:
    """The conversation id to send: a new one for 'new', the given one otherwise ('' for none)."""
    return f"cli-{uuid.uuid4().hex[:12]}" if value.strip().lower() == "new" else value.strip()


class AgentTopics(TypedDict):
    request_topic: str
    response_topic: str


def agent_topics(config: ServiceConfig) -> AgentTopics:
    """Where a client asks (the flow's first request topic) and where its answer comes back (the paired one)."""
    request_topic = config.request_topics[0]
    return {"request_topic": request_topic, "response_topic": config.response_topic_for(request_topic)}


async def ask_command(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    return await run_ask(
        config.pulsar_url,
        args.question,
        **agent_topics(config),
        timeout_s=args.timeout,
        streaming=args.streaming,
        plan=args.plan,
        ui_url=config.temporal_ui_url if args.ui_url is None else args.ui_url,
        namespace=config.temporal_namespace,
        conversation_id=conversation_of(args.conversation),
        json_output=args.json_output,
        collection=args.collection,
        decider=None if args.json_output else inline_decider(config, args.by, args.key),
        user=args.by,
        temporal_address=config.temporal_address,
    )
