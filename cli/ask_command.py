"""`tg-confidence ask`: one question over Pulsar, its messages printed as they arrive."""

from __future__ import annotations

import argparse
import json
import sys
import uuid

from cli.ask import AskTimeout, ask
from cli.errors import FAILED, UNREACHABLE_OR_BAD_INPUT, error
from cli.render import render
from contracts.names import workflow_id_for
from contracts.wire import AgentRequest, AgentResponse
from contracts.wire_codec import response_to_wire
from service import defaults
from service.config import ServiceConfig
from service.flags import add_flow_args, config_from_args


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:  # type: ignore[type-arg]
    a = sub.add_parser("ask", parents=[common], help="ask one question over Pulsar")
    add_flow_args(a)
    a.add_argument("question")
    a.add_argument("-C", "--collection", default="default", help="TrustGraph collection the request names")
    a.add_argument("--streaming", action="store_true", help="ask for the answer in chunks")
    a.add_argument("--json", action="store_true", dest="json_output",
                   help="print each response as one line of JSON (TrustGraph's wire format), for scripts")
    a.add_argument("--plan", default="", help='legacy request-level config JSON, e.g. \'{"max_retries": 1}\'')
    a.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for the final answer")
    a.add_argument("--ui-url", help="Temporal Web UI, for the link to the run (default: the temporal_ui_url "
                                    f"setting, env TGCA_TEMPORAL_UI_URL, else {defaults.TEMPORAL_UI_URL}; '' for none)")
    a.add_argument("--conversation", default="", metavar="ID",
                   help="continue conversation ID (the service remembers its earlier turns); 'new' starts one "
                        "and prints its id for the next question")


async def run_ask(pulsar_url: str, question: str, *, request_topic: str, response_topic: str, timeout_s: float,
                  streaming: bool = False, plan: str = "", ui_url: str | None = None,
                  namespace: str = defaults.TEMPORAL_NAMESPACE, conversation_id: str = "",
                  json_output: bool = False, collection: str = "default", group: list[str] | None = None,
                  answer_only: bool = False) -> int:
    """Ask, print what comes back, return the exit code. `answer_only`: the answer's text and any error, as
    TrustGraph's `tg-invoke-agent` prints without -v (no question echo, thoughts or observations)."""
    request_id = str(uuid.uuid4())
    request = AgentRequest(question=question, streaming=streaming, plan=plan, conversation_id=conversation_id,
                           collection=collection, group=group)
    if json_output:  # stdout carries nothing but the responses, one JSON object per line
        ui_url = None
    elif not answer_only:
        print(f"? {question}", flush=True)
    status = FAILED
    try:
        async for message in ask(pulsar_url, request, request_topic=request_topic, response_topic=response_topic,
                                 timeout_s=timeout_s, request_id=request_id):
            if json_output:
                print(json.dumps(response_to_wire(message)), flush=True)
            elif answer_only:
                print_answer_only(message)
            else:
                line = render(message)
                if line:
                    print(line, flush=True)
            if message.end_of_dialog:
                status = 0 if message.error is None else FAILED
    except AskTimeout as exc:
        return error(str(exc), FAILED)
    except ConnectionError as exc:
        return error(str(exc), UNREACHABLE_OR_BAD_INPUT)
    if ui_url:
        print(f"\nRun in the Temporal Web UI: {ui_url}/namespaces/{namespace}/workflows/{workflow_id_for(request_id)}")
    if conversation_id:  # on stderr with --json: stdout stays one JSON object per line
        print(f"Continue this conversation: tg-confidence ask --conversation {conversation_id} \"...\"",
              file=sys.stderr if json_output else sys.stdout)
    return status


def print_answer_only(message: AgentResponse) -> None:
    """The answer's text as it arrives (chunks joined), a newline at its end; an error on stderr."""
    if message.message_type == "answer":
        # streamed chunks join into one text; the closing message (the last of the answer) ends the line
        print(message.content, end="\n" if message.end_of_dialog else "", flush=True)
    if message.error is not None:
        print(f"error: {message.error.message}", file=sys.stderr, flush=True)


def conversation_of(value: str) -> str:
    """The conversation id to send: a new one for 'new', the given one otherwise ('' for none)."""
    return f"cli-{uuid.uuid4().hex[:12]}" if value.strip().lower() == "new" else value.strip()


def agent_topics(config: ServiceConfig) -> dict[str, str]:
    """Where a client asks (the flow's first request topic) and where its answer comes back (the paired one)."""
    request_topic = config.request_topics[0]
    return {"request_topic": request_topic, "response_topic": config.response_topic_for(request_topic)}


async def ask_command(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    return await run_ask(config.pulsar_url, args.question, **agent_topics(config), timeout_s=args.timeout,
                         streaming=args.streaming,
                         plan=args.plan, ui_url=config.temporal_ui_url if args.ui_url is None else args.ui_url,
                         namespace=config.temporal_namespace,
                         conversation_id=conversation_of(args.conversation), json_output=args.json_output,
                         collection=args.collection)
