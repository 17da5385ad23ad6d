"""The plan and wire models reject what cannot run and read what TrustGraph writes."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from contracts.plan import ConfidenceMetrics, ExecutionPlan, ExecutionStep
from contracts.wire import AgentRequest


def step(step_id: str, *deps: str) -> ExecutionStep:
    return ExecutionStep(
        id=step_id, function="GraphQuery", arguments={"query": "MATCH (n) RETURN n"}, dependencies=list(deps)
    )


@pytest.mark.parametrize("score", [-0.01, 1.01, float("nan")])
def test_confidence_score_outside_zero_to_one_is_rejected(score: float) -> None:
    with pytest.raises(ValidationError):
        ConfidenceMetrics(score=score, reasoning="x")


def test_a_valid_dag_is_accepted() -> None:
    plan = ExecutionPlan(id="p", steps=[step("a"), step("b", "a"), step("c", "a", "b")])
    assert [s.id for s in plan.steps] == ["a", "b", "c"]


@pytest.mark.parametrize(
    ("steps", "words"),
    [
        ([step("a"), step("a")], "duplicate step ids: a"),
        ([step("a", "ghost")], "depends on unknown steps: ghost"),
        ([step("a", "a")], "step a depends on itself"),
        ([step("a", "c"), step("b", "a"), step("c", "b")], "dependency cycle: a -> c -> b -> a"),
    ],
)
def test_invalid_plans_are_rejected_with_the_reason(steps: list[ExecutionStep], words: str) -> None:
    with pytest.raises(ValidationError, match=words):
        ExecutionPlan(id="p", steps=steps)


def test_a_plan_needs_a_step_and_thresholds_stay_in_range() -> None:
    with pytest.raises(ValidationError):
        ExecutionPlan(id="p", steps=[])
    with pytest.raises(ValidationError):
        ExecutionStep(id="a", function="GraphQuery", confidence_threshold=1.5)


def test_agent_request_reads_trustgraph_nulls_and_ignores_unknown_keys() -> None:
    request = AgentRequest.model_validate(
        {
            "question": "q",
            "state": None,
            "group": None,
            "history": None,
            "collection": "c",
            "session_id": None,
            "some_future_field": 1,
        }
    )
    assert request.state == "" and request.history == [] and request.session_id == "" and request.group is None
