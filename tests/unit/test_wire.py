"""Wire codec: every bad payload gets a clear reason; responses are the 1.x + 2.x superset."""

from __future__ import annotations

import json

import pytest

from contracts.wire import AgentResponse
from contracts.wire_codec import RequestDecodeError, decode_request, decode_response, encode_response, error_response


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (b'{"question": ', "not valid JSON"),
        (b"\xff\xfe", "not UTF-8"),
        (b'["question"]', "must be a JSON object"),
        (b'{"state": "x"}', "has no question"),
        (b'{"question": "   "}', "has no question"),
        (b'{"question": 42}', "has no question"),
        (b'{"question": "q", "history": "not a list"}', "wrong types: history"),
        (b'{"question": "q", "streaming": {"a": 1}}', "wrong types: streaming"),
        (json.dumps({"question": "x" * 300_000}).encode(), "the limit is"),
    ],
)
def test_bad_requests_are_refused_with_a_reason(payload: bytes, reason: str) -> None:
    with pytest.raises(RequestDecodeError, match=reason):
        decode_request(payload)


def test_legacy_request_with_plan_config_and_history_decodes() -> None:
    legacy = {
        "question": "What links A and B?",
        "plan": '{"confidence_threshold": 0.8, "max_retries": 3}',
        "state": "initial",
        "history": [{"thought": "t", "action": "a", "arguments": {"x": "1"}, "observation": "o"}],
    }
    request = decode_request(json.dumps(legacy).encode())
    assert json.loads(request.plan)["max_retries"] == 3
    assert request.history[0].arguments == {"x": "1"}


def test_non_final_messages_keep_answer_null_and_error_explicit() -> None:
    wire = json.loads(encode_response(AgentResponse(message_type="thought", content="thinking", message_id="m1")))
    assert wire["answer"] is None and "error" in wire and wire["error"] is None
    assert wire["thought"] == "thinking" and wire["observation"] is None
    assert wire["message_type"] == wire["chunk_type"] == "thought"


def test_final_answer_sets_the_legacy_answer_field() -> None:
    final = AgentResponse(message_type="answer", content="42", end_of_dialog=True)
    wire = json.loads(encode_response(final))
    assert wire["answer"] == "42" and wire["end_of_dialog"] is True


def test_streaming_chunk_is_not_final_for_legacy_clients() -> None:
    chunk = AgentResponse(message_type="answer", content="4", end_of_message=False)
    assert json.loads(encode_response(chunk))["answer"] is None


def test_error_response_shape_matches_trustgraph() -> None:
    wire = json.loads(encode_response(error_response("boom")))
    assert wire["message_type"] == "error" and wire["end_of_message"] and wire["end_of_dialog"]
    assert wire["error"] == {"type": "agent-error", "message": "boom"}


def test_responses_round_trip_and_old_generation_messages_decode() -> None:
    original = AgentResponse(message_type="observation", content="rows", message_id="id#3")
    assert decode_response(encode_response(original)).content == "rows"
    old = decode_response(b'{"answer": "final", "thought": null, "observation": null, "error": null}')
    assert old.message_type == "answer" and old.content == "final" and old.end_of_dialog
