"""The answer's confidence line as a user reads it, through the real workflow, tools, synthesis worker and demo
graph (the model scripted): what raised and lowered the number is said in plain words with the run's own figures
and names, not as the calibrator's feature names."""

from __future__ import annotations

import json
import re

from confidence.calibrator import Calibrator
from confidence.evidence import FEATURES
from contracts.run import AgentRunResult
from tests.agent_harness import plan
from tests.integration.test_grounded_answers import GRAPH, Conversation

# Ignores the supplier the question names, and ranks every invoice.
LARGEST = "MATCH (i:Invoice) RETURN i.invoice_number AS invoice, i.amount AS amount ORDER BY amount DESC LIMIT 5"


async def test_the_confidence_line_says_what_moved_it_with_the_runs_figures(harness_factory, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # A calibrator of known weights, so that the line's words, not the shipped file's fit, are what is tested.
    calibrator = tmp_path / "calibrator.json"
    calibrator.write_text(
        Calibrator(weights={"unused_name": -1.0, "ranked_first": 0.5, "row_count": -1.0}, bias=1.0).to_json()
    )
    llm = Conversation([plan(("s1", "GraphQuery", {"query": LARGEST}, []))], answer="See the rows.")
    harness = await harness_factory(llm, GRAPH, calibrator_path=str(calibrator))
    result: AgentRunResult = await (
        await harness.start("Which invoices of Globex Supply have the largest amounts?")
    ).result()

    step = result.step_results[0]
    assert len(json.loads(step.output)["rows"]) == 5 and step.confidence.names["unused_names"] == ["Globex Supply"]
    line = harness.messages[-1].content.splitlines()[-1]
    assert re.match(
        rf"Confidence: {result.confidence:.2f}( \(low\))? - calibrated: raised because the answer names "
        r"the first of the 5 rows the query ranked; lowered because the query ignores the question's name "
        r"'Globex Supply' and the query returned 5 rows; ",
        line,
    ), line
    assert "_" not in line and not any(words in line for words in FEATURES.values()), line
