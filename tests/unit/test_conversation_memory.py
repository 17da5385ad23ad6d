"""Conversation memory stays bounded, keeps one turn per request, and renders the most recent turns first
when a prompt has little room."""

from __future__ import annotations

from contracts.action_path import BatchSummary, EntityOutcome
from contracts.conversation import (
    ANSWER_CHARS,
    EARLIER_LINES,
    WINDOW,
    ConversationMemory,
    ConversationTurn,
    conversation_workflow_id,
)
from contracts.wire import AgentStep
from planning.conversation_memory import (
    action_summary,
    conversation_confidence,
    memory_from_history,
    names_beyond,
    plausible_rewrite,
    remember,
    render,
)


def turn(n: int, **fields: object) -> ConversationTurn:
    values: dict[str, object] = {"request_id": f"r{n}", "question": f"question {n}?", "answer": f"answer {n}."}
    return ConversationTurn.model_validate({**values, **fields})


def test_a_turn_recorded_twice_is_kept_once() -> None:
    memory = remember(remember(ConversationMemory(), turn(1)), turn(1))
    assert [t.request_id for t in memory.turns] == ["r1"] and memory.turn_count == 1


def test_older_turns_fold_into_one_line_each_and_the_oldest_lines_go() -> None:
    memory = ConversationMemory()
    total = WINDOW + EARLIER_LINES + 5
    for n in range(1, total + 1):
        memory = remember(memory, turn(n))
    assert [t.request_id for t in memory.turns] == [f"r{n}" for n in range(total - WINDOW + 1, total + 1)]
    assert len(memory.earlier) == EARLIER_LINES
    assert memory.earlier[-1] == f"Q: question {total - WINDOW}? -> A: answer {total - WINDOW}."
    assert memory.turn_count == total


def test_long_answers_are_trimmed_when_kept() -> None:
    memory = remember(ConversationMemory(), turn(1, answer="x" * (ANSWER_CHARS * 3)))
    assert len(memory.turns[0].answer) == ANSWER_CHARS


def test_render_keeps_the_latest_turn_when_room_is_short() -> None:
    memory = ConversationMemory()
    for n in range(1, 5):
        memory = remember(memory, turn(n, results="row " * 50))
    text = render(memory, 400)
    assert "question 4?" in text and "question 1?" not in text
    full = render(memory, 100_000)
    assert full.index("Turn 1") < full.index("Turn 4")


def test_action_outcomes_are_rendered_per_entity() -> None:
    summary = BatchSummary()
    summary.add(EntityOutcome(entity_id="PO-1", success=True))
    summary.add(EntityOutcome(entity_id="PO-2", success=False, error="Insufficient funds"))
    memory = remember(ConversationMemory(), turn(1, action=action_summary("PurchaseOrder", "makePayment", summary)))
    text = render(memory, 10_000)
    assert "makePayment on 2 PurchaseOrder: 1 succeeded, 1 failed" in text
    assert "succeeded: PO-1" in text and "failed: PO-2 (Insufficient funds)" in text


def test_trustgraph_history_becomes_memory() -> None:
    history = [
        AgentStep(
            thought="look up the supplier",
            action="knowledge-query",
            arguments={"question": "who supplies X?"},
            observation="Acme supplies X",
        )
    ]
    memory = memory_from_history(history)
    assert memory.source == "history" and not memory.empty
    text = render(memory, 10_000)
    assert "Acme supplies X" in text and "knowledge-query" in text and "who supplies X?" in text


def test_confidence_of_an_answer_from_the_conversation() -> None:
    memory = remember(ConversationMemory(), turn(1, confidence=0.9))
    score, why = conversation_confidence(memory, "verified", [])
    assert score == 0.9 and "every name and figure found in it" in why
    low, why = conversation_confidence(memory, "unsupported", ["Zeta"])
    assert low == 0.45 and "Zeta" in why
    unscored, _ = conversation_confidence(memory_from_history([AgentStep(observation="o")]), "verified", [])
    assert unscored == 0.5


def test_rewrites_that_are_not_questions_are_refused() -> None:
    assert plausible_rewrite("pay them", "Pay purchase orders PO-1 and PO-2")
    assert not plausible_rewrite("pay them", "")
    assert not plausible_rewrite("pay them", "First paragraph.\n\nSecond paragraph of an answer.")
    assert not plausible_rewrite("hi", "x" * 1000)


def test_conversation_ids_become_safe_workflow_ids() -> None:
    assert conversation_workflow_id("c-1") == "conversation-c-1"
    odd = conversation_workflow_id("a b/c")
    assert odd.startswith("conversation-a_b_c-") and odd != conversation_workflow_id("a_b_c")


def test_names_a_question_gives_beyond_the_conversation() -> None:
    said = "Agent: Harbour City and Old Mill scored the most goals."
    assert names_beyond("Which of Harbour City and Old Mill play in Northport?", said) == ["Northport"]
    assert names_beyond("Which of Harbour City and Old Mill scored more?", said) == []
