"""What a caller makes of a run's delivery ids: repeats dropped, holes noticed, and what a closed run hands over
when its messages never came."""

from __future__ import annotations

from contracts.delivery import Repeats, Sequence, sequence_number
from contracts.run import AgentRunResult
from contracts.wire import AgentResponse
from service.run_recovery import RunOutcome, closing_of, ended_without_result


def message(delivery_id: str, kind: str = "thought", end: bool = False) -> AgentResponse:
    return AgentResponse(
        message_type=kind,
        content=delivery_id,
        end_of_message=True,
        end_of_dialog=end,
        message_id=delivery_id,
        delivery_id=delivery_id,
    )


def test_a_run_numbers_its_messages_and_a_streamed_sentence_stands_outside_the_count() -> None:
    assert sequence_number("agent-1#7") == 7
    assert sequence_number("agent-1#answer.2") is None
    assert sequence_number("no-number") is None
    assert sequence_number("agent-1#٣") is None  # a digit, but not one a run writes


def test_a_hole_is_seen_once_and_repeats_or_late_messages_are_no_hole() -> None:
    sequence = Sequence()
    seen = [sequence.gap(message(f"run#{n}")) for n in (1, 2, 4, 4, 3, 5, 9)]
    assert seen == [False, False, True, False, False, False, True]


def test_the_first_message_missing_is_a_hole() -> None:
    assert Sequence().gap(message("run#2"))


def test_a_sentence_streamed_as_written_never_makes_a_hole() -> None:
    sequence = Sequence()
    assert not any(sequence.gap(message(i)) for i in ("run#1", "run#answer.0", "run#answer.1", "run#2"))


def test_a_recovered_message_the_caller_already_had_is_dropped() -> None:
    repeats = Repeats()
    arrived = message("run#5", "answer", end=True)
    assert not repeats.repeated(arrived)
    assert repeats.repeated(arrived.model_copy())  # the same delivery, taken from Temporal


def test_a_completed_run_hands_over_its_closing_messages_as_sent() -> None:
    closing = [message("run#answer.0", "answer"), message("run#9", "answer", end=True)]
    assert closing_of("agent-x", AgentRunResult(answer="A.", closing=closing)) == closing


def test_a_result_without_closing_messages_becomes_one_final_message() -> None:
    [answer] = closing_of("agent-x", AgentRunResult(answer="It is 42.", confidence=0.9))
    assert answer.message_type == "answer" and answer.content == "It is 42." and answer.end_of_dialog
    assert answer.delivery_id == "agent-x#closed"
    [error] = closing_of("agent-x", AgentRunResult(answer="", error="the LLM is down"))
    assert error.message_type == "error" and error.error is not None and "the LLM is down" in error.error.message


def test_a_run_handed_to_the_fallback_agent_hands_over_nothing() -> None:
    assert closing_of("agent-x", AgentRunResult(answer="", error="x", needs_fallback=True)) == []


def test_a_run_that_ended_without_a_result_tells_the_caller_once() -> None:
    [error] = ended_without_result("agent-x", "TERMINATED", "operator stopped it")
    assert error.end_of_dialog and error.error is not None
    assert "ended terminated without an answer: operator stopped it" in error.error.message
    outcome = RunOutcome("agent-x", "TERMINATED", [error])
    assert outcome.closed and outcome.waiting is None
    assert not RunOutcome("agent-x", "RUNNING").closed and not RunOutcome("agent-x").closed
