"""Conversation memory, as pure functions: record a turn within the bounds, render the memory for a prompt,
read TrustGraph's `history` field, and summarise what a turn did. The ConversationWorkflow and the agent
workflow call these; nothing here does I/O."""

from __future__ import annotations

import json
import re
from typing import Any

from contracts.action_path import BatchSummary, parameters_text
from contracts.conversation import (
    ANSWER_CHARS,
    EARLIER_LINES,
    LINE_CHARS,
    LISTED_OUTCOMES,
    RESULTS_CHARS,
    WINDOW,
    ActionRecordSummary,
    ConversationMemory,
    ConversationTurn,
    EntityResult,
)
from contracts.wire import AgentStep
from planning.step_context import trim
from questions.named_terms import mentions

HISTORY_STEPS = 12  # the last steps of a request's own history that a prompt gets to see
HISTORY_STEP_CHARS = 600


def bounded(turn: ConversationTurn) -> ConversationTurn:
    """The turn as it is kept: long answers and results trimmed, outcome lists capped."""
    action = turn.action
    if action is not None:
        action = action.model_copy(
            update={
                "succeeded_ids": action.succeeded_ids[:LISTED_OUTCOMES],
                "failures": action.failures[:LISTED_OUTCOMES],
            }
        )
    return turn.model_copy(
        update={
            "answer": trim(turn.answer, ANSWER_CHARS),
            "results": trim(turn.results, RESULTS_CHARS),
            "action": action,
        }
    )


def remember(memory: ConversationMemory, turn: ConversationTurn) -> ConversationMemory:
    """`memory` with `turn` added last; a turn already kept (same request) changes nothing."""
    if any(t.request_id == turn.request_id for t in memory.turns):
        return memory
    turns = [*memory.turns, bounded(turn)]
    earlier = list(memory.earlier)
    while len(turns) > WINDOW:
        earlier.append(one_line(turns.pop(0)))
    return memory.model_copy(
        update={"turns": turns, "earlier": earlier[-EARLIER_LINES:], "turn_count": memory.turn_count + 1}
    )


def one_line(turn: ConversationTurn) -> str:
    question = turn.standalone_question or turn.question
    answer = turn.answer.strip().splitlines()[0] if turn.answer.strip() else "(no answer)"
    return trim(f"Q: {question} -> A: {answer}", LINE_CHARS)


def action_text(action: ActionRecordSummary) -> str:
    name = action.action_name + (f" with {parameters_text(action.parameters)}" if action.parameters else "")
    if not action.executed:
        return f"{name} on {action.total} {action.entity_type}: not executed, nothing changed"
    lines = [f"{name} on {action.total} {action.entity_type}: {action.succeeded} succeeded, {action.failed} failed"]
    if action.succeeded_ids:
        more = action.succeeded - len(action.succeeded_ids)
        lines.append("succeeded: " + ", ".join(action.succeeded_ids) + (f" and {more} more" if more > 0 else ""))
    for failure in action.failures:
        lines.append(f"failed: {failure.entity_id} ({failure.error})")
    if action.failed > len(action.failures):
        lines.append(f"and {action.failed - len(action.failures)} more failures")
    return "\n".join(lines)


def render_turn(turn: ConversationTurn, number: int) -> str:
    lines = [f"Turn {number}", f"User: {turn.question}"]
    if turn.standalone_question and turn.standalone_question != turn.question:
        lines.append(f"(read as: {turn.standalone_question})")
    confidence = f" (confidence {turn.confidence:.2f})" if turn.confidence is not None else ""
    lines.append(f"Agent{confidence}: {turn.answer.strip() or '(no answer)'}")
    if turn.results.strip():
        lines.append(f"Results the agent used:\n{turn.results.strip()}")
    if turn.action is not None:
        lines.append(f"Action taken:\n{action_text(turn.action)}")
    return "\n".join(lines)


def render(memory: ConversationMemory, max_chars: int) -> str:
    """The memory as prompt text, most recent turn last. Over `max_chars`, the oldest parts go first: a
    follow-up most often refers to the turn just before it."""
    if memory.empty:
        return "(no earlier turns)"
    first_number = memory.turn_count - len(memory.turns) + 1
    parts = [render_turn(t, first_number + i) for i, t in enumerate(memory.turns)]
    if memory.earlier:
        title = "Steps so far" if memory.source == "history" else "Earlier turns, oldest first"
        parts.insert(0, title + ":\n" + "\n".join(f"- {line}" for line in memory.earlier))
    kept: list[str] = []
    used = 0
    for part in reversed(parts):
        if used + len(part) > max_chars:
            if not kept:  # the latest turn alone is too long: keep what fits of it
                kept.append(trim(part, max_chars))
            break
        kept.append(part)
        used += len(part) + 2
    return "\n\n".join(reversed(kept))


def memory_from_history(history: list[AgentStep]) -> ConversationMemory:
    """TrustGraph's own `history` (the steps a client sends back with its request) as memory."""
    lines = []
    for step in history[-HISTORY_STEPS:]:
        parts = []
        if step.thought:
            parts.append(f"thought: {step.thought}")
        if step.action:
            arguments = json.dumps(step.arguments, ensure_ascii=False) if step.arguments else ""
            parts.append(f"action: {step.action}{(' ' + arguments) if arguments else ''}")
        if step.observation:
            parts.append(f"observation: {step.observation}")
        if parts:
            lines.append(trim("; ".join(parts), HISTORY_STEP_CHARS))
    return ConversationMemory(earlier=lines, turn_count=len(lines), source="history")


def action_summary(
    entity_type: str, action_name: str, summary: BatchSummary, parameters: dict[str, Any] | None = None
) -> ActionRecordSummary:
    """An executed batch's outcome as the conversation keeps it."""
    return ActionRecordSummary(
        entity_type=entity_type,
        action_name=action_name,
        total=summary.total,
        succeeded=summary.succeeded,
        failed=summary.failed,
        succeeded_ids=[o.entity_id for o in summary.successes[:LISTED_OUTCOMES]],
        failures=[EntityResult(entity_id=o.entity_id, error=o.error) for o in summary.failures[:LISTED_OUTCOMES]],
        parameters=parameters or {},
    )


def plausible_rewrite(original: str, rewritten: str) -> bool:
    """A rewrite the resolver may stand behind: not empty, not a wall of text, not an answer in disguise."""
    text = rewritten.strip()
    return bool(text) and len(text) <= max(400, 4 * len(original)) and "\n\n" not in text


def names_beyond(question: str, conversation: str) -> list[str]:
    """The names the question gives that the conversation never states ("... based in Germany?" after a
    turn that listed suppliers without their countries): a question about them cannot be answered from the
    conversation, whatever a model says."""
    said = set(re.findall(r"\w+", conversation.lower()))
    return [name for name in mentions(question, set()) if not set(_carrying_words(name)) <= said]


def _carrying_words(name: str) -> list[str]:
    """The words that carry a name (capitalised or with a digit), lower-cased; not a connective caught with
    it (the "of" in "Bank of Spain")."""
    return [word.lower() for word in re.findall(r"\w+", name) if word[0].isupper() or any(c.isdigit() for c in word)]


UNSCORED_BASIS = 0.5  # an answer drawn from turns that carry no confidence (a client's own history)


def conversation_confidence(memory: ConversationMemory, verification: str, unsupported: list[str]) -> tuple[float, str]:
    """An answer read from the conversation is as sure as the latest scored turn it restates, and only when
    every name and figure in it is in the conversation; otherwise half that."""
    scored = [t for t in memory.turns if t.confidence is not None]
    if scored:
        basis = scored[-1].confidence or 0.0
        source = f"the conversation's latest scored turn had confidence {basis:.2f}"
    else:
        basis, source = UNSCORED_BASIS, "the conversation carries no confidence of its own"
    if verification == "verified":
        return basis, f"answered from the conversation, every name and figure found in it; {source}"
    return basis / 2, (f"answered from the conversation, but it does not state {', '.join(unsupported[:5])}; {source}")
