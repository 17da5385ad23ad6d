"""A small OpenAI-compatible HTTP server whose answers a test scripts.

The agent talks to it through its real LLM client over real HTTP; only the model is replaced.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from worker.prompt_warm_up import WARM_UP_QUESTION

# A responder gets the request body and returns (HTTP status, completion text or error body).
Responder = Callable[[dict[str, Any]], tuple[int, str]]


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


def is_planning(body: dict[str, Any]) -> bool:
    return ("response_format" in body and not is_routing(body) and not is_action_planning(body)
            and not is_follow_up(body) and not is_query_form(body))


def question_of(body: dict[str, Any]) -> str:
    return body["messages"][-1]["content"]


def is_warm_up(body: dict[str, Any]) -> bool:
    """A worker warming the model's prompt cache at start (worker/prompt_warm_up.py): one token asked."""
    return body.get("max_tokens") == 1 and question_of(body) == WARM_UP_QUESTION


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
    return [{"token": text[i:i + 4], "logprob": logprob, "bytes": None, "top_logprobs": []}
            for i in range(0, len(text), 4)]


class ScriptedLLM:
    def __init__(self, responder: Responder, *, raw: bool = False) -> None:
        """With raw=True a 200's text is sent as the whole HTTP body (to script malformed servers). A responder
        with a `token_logprob(body) -> float` attribute answers requests asking for `logprobs` with every token
        at that log-probability (a server that gives none, otherwise)."""
        self.responder = responder
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
                    status, text = 200, "OK"
                else:
                    owner.requests.append(body)
                    status, text = owner.responder(body)
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
                choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": text},
                                          "finish_reason": "stop"}
                logprob = getattr(owner.responder, "token_logprob", None)
                if body.get("logprobs") and logprob is not None and not is_warm_up(body):
                    choice["logprobs"] = {"content": scripted_logprobs(text, logprob(body))}
                self._send(200, {
                    "id": f"cmpl-{len(owner.requests)}", "object": "chat.completion", "model": "scripted",
                    "choices": [choice],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                })

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> ScriptedLLM:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
