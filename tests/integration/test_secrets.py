"""A secret planted in a question (and so in the query, the tool's reasoning and the answer) leaves the run
nowhere in clear: not in its thoughts, observations or answer, nor in its audit record."""

from __future__ import annotations

import json
from pathlib import Path

from contracts.run import AgentRunResult
from tests.agent_harness import plan, responder

SECRET = "sk-abcdefghijklmnop1234"


async def test_a_secret_in_the_question_is_redacted_from_every_message_and_the_audit(
    harness_factory, seed_graph: str, tmp_path: Path
) -> None:
    query = f"MATCH (e:Entity) WHERE e.name = '{SECRET}' RETURN e.name AS name"
    harness = await harness_factory(
        responder(
            [plan(("s1", "GraphQuery", {"query": query}, []))],
            text=lambda b: "",
            answer=f"No entity is named {SECRET}.",
        ),
        seed_graph,
    )
    result: AgentRunResult = await (await harness.start(f"Is there an entity named '{SECRET}'?")).result()

    assert result.error is None and harness.messages[-1].message_type == "answer"
    assert "[REDACTED]" in harness.text() and "Confidence: " in harness.messages[-1].content
    assert SECRET not in harness.text()
    audit = (tmp_path / "audit.jsonl").read_text()
    assert json.loads(audit.splitlines()[-1])["request"]["question"] == "Is there an entity named '[REDACTED]'?"
    assert SECRET not in audit
