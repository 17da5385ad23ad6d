"""Plan and settings models, beyond tests/unit/test_models.py: every plan problem is reported, settings in bounds."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from contracts.plan import ExecutionPlan, ExecutionStep, PlanValidationError
from contracts.run import AgentSettings

pytestmark = pytest.mark.unit


def step(step_id: str, *deps: str) -> ExecutionStep:
    return ExecutionStep(
        id=step_id, function="GraphQuery", arguments={"query": "MATCH (n) RETURN n"}, dependencies=list(deps)
    )


# -- ExecutionPlan ---------------------------------------------------------------------------------


def test_every_problem_of_a_plan_is_reported_at_once() -> None:
    """The planner is told all it must fix in one round, not one problem per attempt."""
    with pytest.raises(ValidationError) as caught:
        ExecutionPlan(id="p", steps=[step("a"), step("a"), step("b", "b", "ghost"), step("c", "nowhere")])
    message = str(caught.value)
    for problem in [
        "duplicate step ids: a",
        "step b depends on itself",
        "step b depends on unknown steps: ghost",
        "step c depends on unknown steps: nowhere",
    ]:
        assert problem in message


def test_the_plan_error_is_a_value_error_carrying_the_words() -> None:
    """The validator raises PlanValidationError (a ValueError), which pydantic reports with its message."""
    with pytest.raises(ValidationError) as caught:
        ExecutionPlan(id="p", steps=[step("a", "b"), step("b", "a")])
    (error,) = caught.value.errors()
    assert isinstance(error["ctx"]["error"], PlanValidationError)
    assert isinstance(error["ctx"]["error"], ValueError)
    assert str(error["ctx"]["error"]) == "dependency cycle: a -> b -> a"


def test_a_cycle_beside_valid_steps_is_found_and_named() -> None:
    """A cycle is reported with the steps on it, not with the innocent steps around it."""
    with pytest.raises(ValidationError, match="dependency cycle: b -> d -> c -> b"):
        ExecutionPlan(id="p", steps=[step("a"), step("b", "a", "d"), step("c", "b"), step("d", "c"), step("e", "a")])


@st.composite
def acyclic_steps(draw: st.DrawFn) -> list[ExecutionStep]:
    """Steps that each depend only on earlier ones, listed in a random order."""
    count = draw(st.integers(min_value=1, max_value=10))
    steps = [
        step(f"s{i}", *(f"s{d}" for d in sorted(draw(st.sets(st.integers(0, i - 1), max_size=3))))) if i else step("s0")
        for i in range(count)
    ]
    return draw(st.permutations(steps))


@given(acyclic_steps())
@settings(database=None)
def test_any_acyclic_plan_is_accepted_in_any_order(steps: list[ExecutionStep]) -> None:
    """The planner may list steps in any order; only real cycles and bad references are refused."""
    plan = ExecutionPlan(id="p", steps=steps)
    assert [s.id for s in plan.steps] == [s.id for s in steps]


@given(acyclic_steps(), st.data())
@settings(database=None, max_examples=60)
def test_closing_a_loop_in_any_acyclic_plan_is_refused(steps: list[ExecutionStep], data: st.DataObject) -> None:
    """Making the first-numbered step depend on any step downstream of it always yields a cycle error."""
    by_id = {s.id: s for s in steps}
    downstream = [s.id for s in steps if s.id != "s0" and reaches(by_id, s.id, "s0")]
    assume(downstream)
    target = data.draw(st.sampled_from(sorted(downstream)))
    looped = [s.model_copy(update={"dependencies": [*s.dependencies, target]}) if s.id == "s0" else s for s in steps]
    with pytest.raises(ValidationError, match="dependency cycle"):
        ExecutionPlan(id="p", steps=looped)


def reaches(by_id: dict[str, ExecutionStep], start: str, goal: str) -> bool:
    """Does `start` depend on `goal`, directly or transitively?"""
    seen: set[str] = set()
    stack = [start]
    while stack:
        current = stack.pop()
        for dep in by_id[current].dependencies:
            if dep == goal:
                return True
            if dep not in seen:
                seen.add(dep)
                stack.append(dep)
    return False


def test_steps_are_looked_up_by_id() -> None:
    """The workflow finds a step by id, and an unknown id is a KeyError, not a wrong step."""
    plan = ExecutionPlan(id="p", steps=[step("a"), step("b", "a")])
    assert plan.step("b").dependencies == ["a"]
    with pytest.raises(KeyError):
        plan.step("z")


@pytest.mark.parametrize(
    "fields",
    [
        {"id": ""},
        {"id": "x" * 65},
        {"function": ""},
        {"timeout_ms": 0},
        {"timeout_ms": 3_600_001},
        {"arguments": {"limit": 5}},
    ],
)
def test_a_step_that_cannot_run_is_refused(fields: dict[str, object]) -> None:
    """Empty or oversized ids, no function, impossible timeouts and non-string arguments never reach a tool."""
    with pytest.raises(ValidationError):
        ExecutionStep(**{"id": "a", "function": "GraphQuery", **fields})


# -- AgentSettings ---------------------------------------------------------------------------------


def test_the_default_settings_are_the_documented_ones() -> None:
    """The documented defaults (docs/configuration.md): threshold 0.75, 3 retries, 8 steps, 8192 context, sequential."""
    defaults = AgentSettings()
    assert (defaults.confidence_threshold, defaults.max_retries, defaults.max_steps) == (0.75, 3, 8)
    assert defaults.max_context_size == 8192 and defaults.parallel_execution is False


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("confidence_threshold", -0.1),
        ("confidence_threshold", 1.1),
        ("max_retries", -1),
        ("max_retries", 11),
        ("retry_backoff_factor", 0.5),
        ("max_retry_delay_s", 0),
        ("step_timeout_ms", 0),
        ("max_steps", 0),
        ("max_steps", 51),
        ("max_context_size", 255),
        ("max_parallel_steps", 0),
        ("override_timeout_s", 0),
        ("action_confidence_threshold", 1.5),
        ("action_approval_above", -1),
        ("action_max_concurrent", 501),
    ],
)
def test_settings_outside_their_bounds_are_refused(field: str, value: float) -> None:
    """A misconfigured worker fails at start-up instead of running with impossible settings."""
    with pytest.raises(ValidationError, match=field):
        AgentSettings(**{field: value})


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("confidence_threshold", 0.0),
        ("confidence_threshold", 1.0),
        ("max_retries", 0),
        ("max_retries", 10),
        ("max_context_size", 256),
        ("max_steps", 50),
    ],
)
def test_settings_at_their_bounds_are_accepted(field: str, value: float) -> None:
    """The bounds themselves are valid settings (e.g. 0 retries turns the ladder off)."""
    assert getattr(AgentSettings(**{field: value}), field) == value
