"""TrustGraph wire codec: AgentRequest JSON in, superset AgentResponse JSON out.

Decoding accepts the 2.x JSON and the legacy (<= 1.7) JSON: both are flat objects whose unknown keys
are ignored. Encoding writes one superset JSON that 1.x and 2.x clients both read
(docs/trustgraph-contract.md).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from contracts.payload_limits import PLAN_CHARS
from contracts.wire import AgentRequest, AgentResponse, ErrorInfo

MAX_REQUEST_BYTES = 256 * 1024
MAX_QUESTION_CHARS = 16_000
AGENT_ERROR = "agent-error"


class RequestDecodeError(ValueError):
    """The payload is not a usable AgentRequest; the message says why, in words for the caller."""


def decode_request(payload: bytes, max_bytes: int = MAX_REQUEST_BYTES) -> AgentRequest:
    if len(payload) > max_bytes:
        raise RequestDecodeError(f"request is {len(payload)} bytes; the limit is {max_bytes} bytes")
    try:
        data = json.loads(payload.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise RequestDecodeError(f"request is not UTF-8: {exc.reason} at byte {exc.start}") from exc
    except json.JSONDecodeError as exc:
        raise RequestDecodeError(f"request is not valid JSON: {exc.msg} at position {exc.pos}") from exc
    except RecursionError:
        raise RequestDecodeError("request is nested too deeply to read") from None
    if not isinstance(data, dict):
        raise RequestDecodeError(f"request must be a JSON object, got {type(data).__name__}")
    question = data.get("question")
    if not isinstance(question, str) or not question.strip():
        raise RequestDecodeError("request has no question: 'question' must be a non-empty string")
    if len(question) > MAX_QUESTION_CHARS:
        raise RequestDecodeError(f"question is {len(question)} characters; the limit is {MAX_QUESTION_CHARS}")
    plan = data.get("plan")
    if isinstance(plan, str) and len(plan) > PLAN_CHARS:
        # Request-level settings are a few keys; the workflow reads this field itself (planning/request_config.py).
        raise RequestDecodeError(f"plan is {len(plan)} characters; the limit is {PLAN_CHARS}")
    try:
        return AgentRequest.model_validate(data)
    except RecursionError:
        raise RequestDecodeError("request is nested too deeply to read") from None
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'request'}: {err['msg']}" for err in exc.errors()
        )
        raise RequestDecodeError(f"request fields have wrong types: {problems}") from exc


def encode_request(request: AgentRequest) -> bytes:
    """Compact JSON of every AgentRequest field, as TrustGraph's serializer writes it."""
    return request.model_dump_json().encode("utf-8")


def response_to_wire(response: AgentResponse) -> dict[str, object]:
    """The superset dict: 2.x fields, the 1.6-2.3 `chunk_type`, and the <= 2.2 legacy fields."""
    kind = response.message_type
    final_answer = kind == "answer" and response.end_of_dialog
    return {
        "message_type": kind,
        "chunk_type": kind,
        "content": response.content,
        "end_of_message": response.end_of_message,
        "end_of_dialog": response.end_of_dialog,
        "explain_id": response.explain_id,
        "explain_graph": response.explain_graph,
        "explain_triples": [t.model_dump() for t in response.explain_triples],
        "message_id": response.message_id,
        # Legacy clients treat a non-null answer as final: keep it null until the final message.
        "answer": response.content if final_answer else None,
        "thought": response.content if kind == "thought" else None,
        "observation": response.content if kind == "observation" else None,
        # Always explicit: a missing error decodes as a truthy default in old clients.
        "error": response.error.model_dump() if response.error else None,
        "in_token": response.in_token,
        "out_token": response.out_token,
        "model": response.model,
    }


def encode_response(response: AgentResponse) -> bytes:
    return json.dumps(response_to_wire(response), separators=(",", ":")).encode("utf-8")


def encode_explain_store(response: AgentResponse, collection: str) -> bytes:
    """An explain message's triples as the TrustGraph `Triples` message its agent writes to the flow's triples
    store (`metadata.id` the entity, `metadata.collection` the request's), so they can be queried later."""
    triples = {
        "metadata": {"id": response.explain_id or "", "root": "", "collection": collection},
        "triples": [t.model_dump() for t in response.explain_triples],
    }
    return json.dumps(triples, separators=(",", ":")).encode("utf-8")


class ResponseDecodeError(ValueError):
    """The payload is not a usable AgentResponse (not JSON, not an object, nested too deep, a field of the
    wrong type); the message says why."""


def decode_response(payload: bytes) -> AgentResponse:
    """Read any generation's AgentResponse (the CLI, the chat, tests). Anything else on the response topic is
    a ResponseDecodeError, whatever its shape: a reader logs it and goes on."""
    try:
        data = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ResponseDecodeError(f"not a JSON response: {type(exc).__name__}") from None
    if not isinstance(data, dict):
        raise ResponseDecodeError(f"a response is a JSON object, not {type(data).__name__}")
    try:
        return _response(data)
    except (ValidationError, TypeError, AttributeError, ValueError) as exc:
        raise ResponseDecodeError(f"not a usable response: {str(exc)[:200]}") from None


def _response(data: dict[str, Any]) -> AgentResponse:
    kind = data.get("message_type") or data.get("chunk_type")
    content = data.get("content")
    if not kind:  # <= 1.5: one of answer/thought/observation is set
        for legacy in ("answer", "thought", "observation"):
            if data.get(legacy) is not None:
                kind, content = legacy, data[legacy]
                break
    if data.get("error"):
        kind = "error"
    return AgentResponse.model_validate(
        {  # the sender's values, the message type among them: checked here
            "message_type": kind or "observation",
            "content": content or "",
            "end_of_message": bool(data.get("end_of_message", True)),
            "end_of_dialog": bool(data.get("end_of_dialog", kind in ("answer", "error"))),
            "explain_id": data.get("explain_id") or None,
            "explain_graph": data.get("explain_graph") or None,
            "explain_triples": data.get("explain_triples") or [],
            "message_id": data.get("message_id") or "",
            "error": ErrorInfo(**data["error"]) if data.get("error") else None,
            "in_token": _tokens(data.get("in_token")),
            "out_token": _tokens(data.get("out_token")),
            "model": data.get("model") if isinstance(data.get("model"), str) else None,
        }
    )


def _tokens(value: object) -> int | None:
    """A token count as sent, or None for anything that is not one: a reader never fails over accounting."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def error_response(message: str, message_id: str = "") -> AgentResponse:
    return AgentResponse(
        message_type="error",
        content=message,
        end_of_message=True,
        end_of_dialog=True,
        message_id=message_id,
        error=ErrorInfo(type=AGENT_ERROR, message=message),
    )
