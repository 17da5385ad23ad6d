"""A small OpenAI-compatible HTTP server whose answers a test scripts.

The agent talks to it through its real LLM client over real HTTP; only the model is replaced.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from worker.prompt_warm_up import WARM_UP_QUESTION


@dataclass
class Pause:
    """A point in a streamed answer where the model stops writing until `gate` is set (by the test, once it
    saw what was sent so far). `opened` says afterwards whether the gate was set or the wait gave up."""

    gate: threading.Event = field(default_factory=threading.Event)
    timeout_s: float = 120.0
    opened: bool | None = None


@dataclass
class Hangup:
    """A point in a streamed answer where the model's server stops: the connection closes mid-answer, after a
    `[DONE]` with no finish reason when `done` (llama-cpp-python's server interrupted for another request)."""

    done: bool = False


# What a model writes: a text, or (for a streamed request) its pieces with pauses and hang-ups between them;
# a request that does not stream gets the pieces' text whole.
Written = str | Sequence[str | Pause | Hangup]
# A responder gets the request body and returns (HTTP status, completion text or error body).
Responder = Callable[[dict[str, Any]], tuple[int, Written]]


def text_of(written: Written) -> str:
    return written if isinstance(written, str) else "".join(p for p in written if isinstance(p, str))


def pieces_of(written: Written) -> list[str | Pause | Hangup]:
    """A streamed completion's pieces: a plain text is sent a few words at a time, as a model writes."""
    if isinstance(written, str):
        return [p for p in re.split(r"(?<=\s)(?=\S)", written) if p] or [""]
    return list(written)


def _schema_fields(body: dict[str, Any]) -> set[str]:
    fmt = body.get("response_format") or {}
    schema = fmt.get("json_schema", {}).get("schema") or fmt.get("schema") or {}
    return set(schema.get("properties", {}))


def is_routing(body: dict[str, Any]) -> bool:
    return _schema_fields(body) == {"intent"}


def is_action_planning(body: dict[str, Any]) -> bool:
    return "entity_type" in _schema_fields(body)


def is_follow_up(body: dict[str, Any]) -> bool:
    """Reading a follow-up in its conversation (activities/follow_up.py)."""
    return _schema_fields(body) == {"question", "from_conversation"}


def is_conversation_answer(body: dict[str, Any]) -> bool:
    return "response_format" not in body and body["messages"][-1]["content"].startswith("Conversation so far:")


def is_query_form(body: dict[str, Any]) -> bool:
    """Filling in the query form of a graph step's cross-check (tools/intent_writer.py)."""
    return {"start", "steps", "combine"} <= _schema_fields(body)


def is_program_choice(body: dict[str, Any]) -> bool:
    """Choosing a graph question's program among those shown (tools/program_chooser.py)."""
    return _schema_fields(body) == {"reading", "program"}


def is_planning(body: dict[str, Any]) -> bool:
    return (
        "response_format" in body
        and not is_routing(body)
        and not is_program_choice(body)
        and not is_action_planning(body)
        and not is_follow_up(body)
        and not is_query_form(body)
    )


def question_of(body: dict[str, Any]) -> str:
    return body["messages"][-1]["content"]


def is_warm_up(body: dict[str, Any]) -> bool:
    """A worker warming the model's prompt cache at start (worker/prompt_warm_up.py): one token asked."""
    return body.get("max_tokens") == 1 and question_of(body) == WARM_UP_QUESTION


def is_link_judgement(body: dict[str, Any]) -> bool:
    """The planner asking which part of the schema a question's words mean (tools/link_judge.py)."""
    return "Words, each with the parts it may refer to" in question_of(body)


def is_synthesis(body: dict[str, Any]) -> bool:
    return "step results" in body["messages"][-1]["content"].lower()


def plan_then_answer(plan: str, answer: str) -> Callable[[dict[str, Any]], tuple[int, str]]:
    """A model that plans every question with `plan` and answers every synthesis with `answer`."""

    def respond(body: dict[str, Any]) -> tuple[int, str]:
        if is_planning(body):
            return 200, plan
        if is_synthesis(body):
            return 200, answer
        return 200, "noted"

    return respond


def scripted_logprobs(text: str, logprob: float) -> list[dict[str, Any]]:
    """OpenAI's `logprobs.content` for `text`, cut into 4-character tokens, each at `logprob`."""
    return [
        {"token": text[i : i + 4], "logprob": logprob, "bytes": None, "top_logprobs": []}
        for i in range(0, len(text), 4)
    ]


class ScriptedLLM:
    def __init__(
        self,
        responder: Responder,
        *,
        raw: bool = False,
        warm_up_gate: threading.Event | None = None,
        script_link_judgements: bool = False,
    ) -> None:
        """With raw=True a 200's text is sent as the whole HTTP body (to script malformed servers). A responder
        with a `token_logprob(body) -> float` attribute answers requests asking for `logprobs` with every token
        at that log-probability (a server that gives none, otherwise). With `warm_up_gate`, a warm-up is
        answered only once the gate opens (at most 60 s): a server busy with it, while questions are answered.
        A judgement of a question's words (tools/link_judge.py) decides nothing and is kept in
        `link_judgements`, unless `script_link_judgements` hands it to the responder like any request."""
        self.responder = responder
        self.warm_up_gate = warm_up_gate
        self.script_link_judgements = script_link_judgements
        self.link_judgements: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.warm_ups: list[dict[str, Any]] = []  # kept apart: a script answers the questions it is given
        self.gets: list[dict[str, Any]] = []  # GET requests (the model listing): path and Authorization
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _event(self, chunk: dict[str, Any] | str) -> None:
                data = chunk if isinstance(chunk, str) else json.dumps(chunk)
                self.wfile.write(f"data: {data}\n\n".encode())
                self.wfile.flush()

            def _stream(self, body: dict[str, Any], pieces: list[str | Pause | Hangup]) -> None:
                """OpenAI's streamed chat completion: one chunk per piece, the usage last, then [DONE]."""
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()  # HTTP/1.0: the body ends when the connection closes
                logprob = getattr(owner.responder, "token_logprob", None)
                for piece in pieces:
                    if isinstance(piece, Pause):
                        piece.opened = piece.gate.wait(piece.timeout_s)
                        continue
                    if isinstance(piece, Hangup):
                        if piece.done:
                            self._event("[DONE]")
                        return  # no finish reason: the stream just stops
                    choice: dict[str, Any] = {"index": 0, "delta": {"content": piece}, "finish_reason": None}
                    if body.get("logprobs") and logprob is not None:
                        choice["logprobs"] = {"content": scripted_logprobs(piece, logprob(body))}
                    self._event(
                        {"id": "cmpl-s", "object": "chat.completion.chunk", "model": "scripted", "choices": [choice]}
                    )
                self._event(
                    {
                        "id": "cmpl-s",
                        "object": "chat.completion.chunk",
                        "model": "scripted",
                        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                    }
                )
                if (body.get("stream_options") or {}).get("include_usage"):
                    self._event(
                        {
                            "id": "cmpl-s",
                            "object": "chat.completion.chunk",
                            "model": "scripted",
                            "choices": [],
                            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                        }
                    )
                self._event("[DONE]")

            def do_GET(self) -> None:
                owner.gets.append({"path": self.path, "authorization": self.headers.get("Authorization")})
                if self.path != "/v1/models":  # the one listing an OpenAI-compatible server has
                    self._send(404, {"error": {"message": f"no {self.path}"}})
                    return
                self._send(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if is_warm_up(body):
                    owner.warm_ups.append(body)
                    if owner.warm_up_gate is not None:
                        owner.warm_up_gate.wait(60)
                    status, written = 200, "OK"
                    text = written
                elif is_link_judgement(body) and not owner.script_link_judgements:
                    # Not the test's script: the model decides none of the words (the sentence vectors' links
                    # stand), as a model that could not tell would.
                    owner.link_judgements.append(body)
                    status, written = 200, "{}"
                    text = written
                else:
                    owner.requests.append(body)
                    status, written = owner.responder(body)
                    text = text_of(written)
                if status != 200:
                    self._send(status, {"error": {"message": text}})
                    return
                if raw and not is_warm_up(body):
                    data = text.encode()
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                if body.get("stream") and not is_warm_up(body):
                    self._stream(body, pieces_of(written))
                    return
                choice: dict[str, Any] = {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
                logprob = getattr(owner.responder, "token_logprob", None)
                if body.get("logprobs") and logprob is not None and not is_warm_up(body):
                    choice["logprobs"] = {"content": scripted_logprobs(text, logprob(body))}
                self._send(
                    200,
                    {
                        "id": f"cmpl-{len(owner.requests)}",
                        "object": "chat.completion",
                        "model": "scripted",
                        "choices": [choice],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                    },
                )

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> ScriptedLLM:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
