"""TrustGraph wire codec: what a caller's AgentRequest bytes decode to, and what every client reads back."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contracts.payload_limits import PLAN_CHARS
from contracts.wire import AgentRequest, AgentResponse, AgentStep, ErrorInfo
from contracts.wire_codec import (
    AGENT_ERROR,
    MAX_QUESTION_CHARS,
    RequestDecodeError,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
    error_response,
    response_to_wire,
)

pytestmark = pytest.mark.unit

MESSAGE_TYPES = ["thought", "action", "observation", "answer", "explain", "error"]
SUPERSET_KEYS = {
    "message_type",
    "chunk_type",
    "content",
    "end_of_message",
    "end_of_dialog",
    "explain_id",
    "explain_graph",
    "explain_triples",
    "message_id",
    "answer",
    "thought",
    "observation",
    "error",
    "in_token",
    "out_token",
    "model",
}
RESPONSES = st.builds(
    AgentResponse,
    message_type=st.sampled_from(MESSAGE_TYPES),
    content=st.text(max_size=40),
    end_of_message=st.booleans(),
    end_of_dialog=st.booleans(),
    message_id=st.text(max_size=10),
    error=st.none() | st.builds(ErrorInfo, type=st.text(min_size=1, max_size=10), message=st.text(max_size=20)),
)


def payload(**fields: object) -> bytes:
    return json.dumps(fields).encode()


# -- requests --------------------------------------------------------------------------------------


def test_a_minimal_request_gets_trustgraph_defaults() -> None:
    """A question alone is a complete request; every other field takes TrustGraph's default."""
    request = decode_request(payload(question="Which suppliers ship bolts?"))
    assert request.question == "Which suppliers ship bolts?"
    assert (request.state, request.collection, request.streaming, request.plan) == ("", "default", False, "")
    assert request.history == [] and request.group is None


def test_the_question_is_passed_on_verbatim() -> None:
    """Whitespace and non-ASCII text in the question reach the agent unchanged."""
    question = "  Wer liefert Schrauben nach Köln?\n "
    assert decode_request(payload(question=question)).question == question


def test_a_request_exactly_at_the_byte_limit_is_accepted_and_one_byte_more_is_refused() -> None:
    """The size limit is inclusive and the refusal states both sizes."""
    body = payload(question="q", framing="")
    pad = 300 - len(body)
    at_limit = payload(question="q", framing="f" * pad)
    assert len(at_limit) == 300
    assert decode_request(at_limit, max_bytes=300).framing == "f" * pad
    over = payload(question="q", framing="f" * (pad + 1))
    with pytest.raises(RequestDecodeError, match="request is 301 bytes; the limit is 300 bytes"):
        decode_request(over, max_bytes=300)


def test_a_question_at_the_character_limit_is_accepted_and_longer_is_refused() -> None:
    """The question limit counts characters, not bytes, and names the limit."""
    longest = "é" * MAX_QUESTION_CHARS
    assert decode_request(payload(question=longest)).question == longest
    with pytest.raises(RequestDecodeError, match=f"question is {MAX_QUESTION_CHARS + 1} characters"):
        decode_request(payload(question=longest + "é"))


@pytest.mark.parametrize(
    ("fields", "where"),
    [
        ({"question": "q", "history": [{"arguments": {"k": ["not", "a", "string"]}}]}, "history.0.arguments.k"),
        ({"question": "q", "history": [None]}, "history.0"),
        ({"question": "q", "group": "not-a-list"}, "group"),
        ({"question": "q", "expected_siblings": "two"}, "expected_siblings"),
    ],
)
def test_a_field_of_the_wrong_type_is_refused_naming_the_field(fields: dict[str, object], where: str) -> None:
    """The caller learns which field is wrong, down to the list index and key."""
    with pytest.raises(RequestDecodeError, match=f"wrong types: {where}"):
        decode_request(json.dumps(fields).encode())


def test_decode_errors_are_value_errors() -> None:
    """Callers that catch ValueError also catch a bad request."""
    with pytest.raises(ValueError, match="not valid JSON"):
        decode_request(b"{")


def test_a_request_survives_encoding_and_decoding() -> None:
    """What the CLI sends is what the bridge decodes, history and legacy plan config included."""
    request = AgentRequest(
        question="q?",
        state="override",
        group=["g"],
        collection="c",
        streaming=True,
        session_id="s",
        plan='{"max_retries": 1}',
        history=[AgentStep(thought="t", action="GraphQuery", arguments={"query": "MATCH (n)"}, observation="3 rows")],
    )
    assert decode_request(encode_request(request)) == request


# -- responses -------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", MESSAGE_TYPES)
def test_every_response_carries_the_full_superset_of_fields(kind: str) -> None:
    """Old and new clients both find every key they look for, null when it does not apply."""
    wire = response_to_wire(AgentResponse(message_type=kind, content="c"))
    assert set(wire) == SUPERSET_KEYS
    assert wire["chunk_type"] == wire["message_type"] == kind
    assert wire["explain_triples"] == []


@pytest.mark.parametrize(("kind", "legacy_field"), [("thought", "thought"), ("observation", "observation")])
def test_thoughts_and_observations_fill_their_legacy_field_only(kind: str, legacy_field: str) -> None:
    """A <= 2.2 client shows a thought as a thought, and never mistakes it for the answer."""
    wire = response_to_wire(AgentResponse(message_type=kind, content="text"))
    others = {"answer", "thought", "observation"} - {legacy_field}
    assert wire[legacy_field] == "text"
    assert all(wire[field] is None for field in others)


@pytest.mark.parametrize("kind", ["action", "explain", "error"])
def test_other_message_types_fill_no_legacy_content_field(kind: str) -> None:
    """Actions, explanations and errors are never shown as an answer, thought or observation by old clients."""
    wire = response_to_wire(AgentResponse(message_type=kind, content="text", end_of_dialog=True))
    assert wire["answer"] is None and wire["thought"] is None and wire["observation"] is None


def test_token_counts_and_model_reach_the_wire() -> None:
    """Callers that account for tokens see the counts and the model on the final message."""
    wire = response_to_wire(
        AgentResponse(message_type="answer", content="a", end_of_dialog=True, in_token=120, out_token=30, model="qwen")
    )
    assert (wire["in_token"], wire["out_token"], wire["model"]) == (120, 30, "qwen")


def test_error_response_is_final_and_says_what_went_wrong() -> None:
    """An error ends the dialog, carries the message in both content and error, and keeps the message id."""
    response = error_response("the graph is unreachable", message_id="req-1#7")
    assert response.message_type == "error" and response.end_of_message and response.end_of_dialog
    assert response.content == "the graph is unreachable" and response.message_id == "req-1#7"
    assert response.error == ErrorInfo(type=AGENT_ERROR, message="the graph is unreachable")


def test_error_response_decodes_as_an_error_for_every_client() -> None:
    """The CLI reading an error message back sees an error, not an answer."""
    decoded = decode_response(encode_response(error_response("boom", message_id="m")))
    assert decoded.message_type == "error" and decoded.end_of_dialog
    assert decoded.error == ErrorInfo(type=AGENT_ERROR, message="boom") and decoded.message_id == "m"


def test_a_chunk_type_only_message_decodes() -> None:
    """1.6-2.3 servers write chunk_type without message_type."""
    decoded = decode_response(b'{"chunk_type": "thought", "content": "hmm", "end_of_dialog": false}')
    assert decoded.message_type == "thought" and decoded.content == "hmm" and not decoded.end_of_dialog


@pytest.mark.parametrize(("kind", "final"), [("thought", False), ("observation", False), ("answer", True)])
def test_pre_chunk_type_messages_decode_by_their_filled_field(kind: str, final: bool) -> None:
    """<= 1.5 servers set one of answer/thought/observation; only an answer ends the dialog."""
    legacy = {"answer": None, "thought": None, "observation": None, "error": None, kind: f"the {kind}"}
    decoded = decode_response(json.dumps(legacy).encode())
    assert decoded.message_type == kind and decoded.end_of_dialog is final
    assert decoded.content == f"the {kind}"


def test_an_error_field_makes_any_message_an_error() -> None:
    """A server that reports an error on an answer-typed message is read as an error."""
    decoded = decode_response(
        b'{"message_type": "answer", "content": "", "error": {"type": "llm-error", "message": "rate limited"}}'
    )
    assert decoded.message_type == "error" and decoded.end_of_dialog
    assert decoded.error == ErrorInfo(type="llm-error", message="rate limited")


@given(RESPONSES)
@settings(database=None)
def test_what_the_bridge_encodes_the_cli_reads_back(response: AgentResponse) -> None:
    """Message type, content, framing flags, message id and error survive the wire."""
    decoded = decode_response(encode_response(response))
    expected_type = "error" if response.error else response.message_type
    assert decoded.message_type == expected_type
    assert decoded.content == response.content
    assert decoded.end_of_message == response.end_of_message
    assert decoded.end_of_dialog == response.end_of_dialog
    assert decoded.message_id == response.message_id
    assert decoded.error == response.error


@given(RESPONSES)
@settings(database=None)
def test_legacy_clients_see_an_answer_only_on_the_final_answer(response: AgentResponse) -> None:
    """Old clients stop at the first non-null answer, so streamed chunks and other messages keep it null."""
    wire = json.loads(encode_response(response))
    final_answer = response.message_type == "answer" and response.end_of_dialog
    assert (wire["answer"] is not None) is final_answer
    assert wire["error"] == (response.error.model_dump() if response.error else None)


@pytest.mark.parametrize(
    "payload",
    [
        b"[]",
        b"null",
        b"42",
        b'"text"',
        b"\xff\xfe",
        b"{not json",
        b"[" * 100_000 + b"]" * 100_000,
        b'{"error": "boom"}',
        b'{"message_type": "answer", "content": ["a"]}',
        b'{"error": {"type": 1}}',
    ],
)
def test_anything_but_a_response_object_is_one_clear_decode_error(payload: bytes) -> None:
    from contracts.wire_codec import ResponseDecodeError

    with pytest.raises(ResponseDecodeError):
        decode_response(payload)


def test_a_final_answer_s_usage_is_read_back_and_nonsense_counts_as_none() -> None:
    """The CLI and the chat read the run's usage off the final answer; a count that is no count is left out
    rather than losing the message."""
    final = AgentResponse(
        message_type="answer", content="", end_of_dialog=True, in_token=40, out_token=20, model="scripted"
    )
    decoded = decode_response(encode_response(final))
    assert (decoded.in_token, decoded.out_token, decoded.model) == (40, 20, "scripted")
    odd = decode_response(
        b'{"message_type": "answer", "content": "a", "in_token": "many", "out_token": -1, "model": 7}'
    )
    assert odd.content == "a" and (odd.in_token, odd.out_token, odd.model) == (None, None, None)


def test_a_plan_field_longer_than_request_settings_need_is_refused() -> None:
    """The workflow reads the field itself: the bridge takes only what request-level settings need."""
    assert decode_request(json.dumps({"question": "q", "plan": "x" * PLAN_CHARS}).encode()).plan
    with pytest.raises(RequestDecodeError, match=f"plan is {PLAN_CHARS + 1} characters; the limit is {PLAN_CHARS}"):
        decode_request(json.dumps({"question": "q", "plan": "x" * (PLAN_CHARS + 1)}).encode())
