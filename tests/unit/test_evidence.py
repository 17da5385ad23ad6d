"""An answer's evidence as the calibrator reads it: from the tools' measured signals, never from a domain."""

from __future__ import annotations

import pytest

from confidence.evidence import FEATURES, MAX_PROGRAM_LEAD, MAY_BE_MISSING, program_evidence, run_evidence
from confidence.overall import text_result_confidence
from contracts.plan import ConfidenceMetrics
from cypher.text import query_shape
from tools.graph_query import score_rows

pytestmark = pytest.mark.unit


def test_rows_that_name_only_existing_values() -> None:
    evidence = run_evidence([score_rows(12, None, False, 0, [("Acme", "exact", True)])], planned_steps=1)
    assert evidence["graph_rows"] == 1.0
    assert evidence["empty_result"] == evidence["unmatched_value"] == evidence["absent_name"] == 0.0
    assert evidence["step_score"] == pytest.approx(0.9)
    assert 0.3 < evidence["row_count"] < 0.4  # log10(13) / 3


def test_an_empty_result_about_a_name_that_exists_nowhere() -> None:
    evidence = run_evidence([score_rows(0, None, False, 1, [], ["Zyxwv Holdings"])], planned_steps=1)
    assert evidence["empty_result"] == evidence["absent_name"] == 1.0
    assert evidence["row_count"] == 0.0
    assert evidence["retries"] == pytest.approx(1 / 3)


def test_an_empty_result_from_a_value_the_graph_lacks() -> None:
    evidence = run_evidence([score_rows(0, None, False, 0, [("Acme Corp", "exact", False)])], planned_steps=1)
    assert evidence["unmatched_value"] == evidence["empty_result"] == 1.0


def test_text_only_answers_are_told_apart_and_their_grounding_counts() -> None:
    grounded = text_result_confidence("Acme supplies bolts", "Acme supplies bolts and nuts")
    ungrounded = text_result_confidence("Globex supplies widgets", "Acme supplies bolts")
    evidence = run_evidence([grounded, ungrounded], planned_steps=3)
    assert evidence["text_only"] == 1.0 and evidence["graph_rows"] == 0.0
    assert evidence["ungrounded_text"] == pytest.approx(1.0 - 1 / 3, abs=0.01)  # "supplies" only
    assert evidence["coverage"] == pytest.approx(2 / 3)
    assert evidence["multi_step"] == 1.0


def test_a_refusal_and_the_verification_outcome_are_features() -> None:
    evidence = run_evidence([text_result_confidence("I don't know.", "")], planned_steps=1, verification="composed")
    assert evidence["refusal"] == evidence["composed"] == 1.0
    assert evidence["rewritten"] == 0.0


def test_no_usable_step_is_no_coverage() -> None:
    evidence = run_evidence([], planned_steps=2)
    assert evidence["coverage"] == 0.0 and evidence["step_score"] == 0.0


def test_every_feature_is_named_and_explained() -> None:
    evidence = run_evidence([ConfidenceMetrics(score=0.5)], planned_steps=1)
    # the token log-probabilities come from the LLM calls, not the steps (confidence/token_evidence.py)
    assert set(evidence) == set(FEATURES) - MAY_BE_MISSING
    assert all(0.0 <= v <= 1.0 for v in evidence.values())


def test_a_plan_whose_every_query_misses_what_was_asked_for_is_an_unasked_label() -> None:
    missed = score_rows(3, None, False).model_copy(update={"signals": {"rows": 3.0, "unasked": 1.0}})
    matched = score_rows(3, None, False)
    assert run_evidence([missed], planned_steps=1)["unasked_label"] == 1.0
    # another step of the plan matches it: the plan as a whole does not miss it
    assert run_evidence([missed, matched], planned_steps=2)["unasked_label"] == 0.0


def test_a_declined_answer_is_a_feature() -> None:
    assert run_evidence([score_rows(3, None, False)], planned_steps=1, verification="declined")["declined"] == 1.0


def test_the_shape_of_the_queries_is_evidence_whatever_they_are_about() -> None:
    def graph_step(query: str) -> ConfidenceMetrics:
        scored = score_rows(1, None, False)
        return scored.model_copy(update={"signals": {**scored.signals, **query_shape(query)}})

    lookup = run_evidence([graph_step("MATCH (i:Invoice {number: 'max(2)'}) RETURN i.due")], planned_steps=1)
    assert lookup["aggregates"] == lookup["hops"] == 0.0  # a function name inside a string is not a call
    counted = run_evidence(
        [
            graph_step("MATCH (a:A)-[:R]->(b:B) RETURN count(b)"),
            graph_step("MATCH (a)<-[:R]-(b)--(c)-->(d)-[*..3]-(e) RETURN a"),
        ],
        planned_steps=2,
    )
    assert counted["aggregates"] == 1.0  # one of the answer's queries aggregates
    assert counted["hops"] == 1.0  # four relationships: counted up to three


def test_how_clearly_codes_program_led_the_next() -> None:
    assert program_evidence([14]) == {"program_margin": 1.0}  # nothing else it could have run
    assert program_evidence([14, 14]) == {"program_margin": 0.0}
    assert program_evidence([14, 14 - MAX_PROGRAM_LEAD // 2]) == {"program_margin": 0.5}
    assert program_evidence([40, 2]) == {"program_margin": 1.0}
    assert program_evidence([14, 14], 0.5) == {"program_margin": 0.0, "rivals_disagree": 0.5}
    assert "rivals_disagree" in MAY_BE_MISSING  # absent where code proposed no program
    assert program_evidence([]) == {}  # the planner wrote the plan: no program, no margin
    assert "program_margin" in MAY_BE_MISSING
