"""DAG scheduling: which steps may run now, and which must be skipped after a step fails."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contracts.plan import ExecutionPlan, ExecutionStep
from planning.dag import dependents_of, ready_steps

pytestmark = pytest.mark.unit


def step(step_id: str, *deps: str) -> ExecutionStep:
    return ExecutionStep(
        id=step_id, function="GraphQuery", arguments={"query": "MATCH (n) RETURN n"}, dependencies=list(deps)
    )


def plan(*steps: ExecutionStep) -> ExecutionPlan:
    return ExecutionPlan(id="p", steps=list(steps))


def ids(steps: list[ExecutionStep]) -> list[str]:
    return [s.id for s in steps]


# a -> b -> d, a -> c -> d, e independent: a diamond plus a lone step
DIAMOND = plan(step("a"), step("b", "a"), step("c", "a"), step("d", "b", "c"), step("e"))


@st.composite
def dags(draw: st.DrawFn) -> ExecutionPlan:
    """Random valid plans: each step depends only on steps listed before it, so there is no cycle."""
    count = draw(st.integers(min_value=1, max_value=10))
    steps = []
    for i in range(count):
        deps = draw(st.sets(st.integers(min_value=0, max_value=i - 1), max_size=3)) if i else set()
        steps.append(step(f"s{i}", *(f"s{d}" for d in sorted(deps))))
    return plan(*steps)


def test_at_the_start_only_steps_without_dependencies_are_ready() -> None:
    """A step never runs before its dependencies; independent steps start together, in plan order."""
    assert ids(ready_steps(DIAMOND, done=set(), blocked=set())) == ["a", "e"]


def test_a_step_is_ready_only_when_every_dependency_is_done() -> None:
    """A join step waits for all of its inputs, not just the first to finish."""
    assert ids(ready_steps(DIAMOND, done={"a", "b", "e"}, blocked=set())) == ["c"]
    assert ids(ready_steps(DIAMOND, done={"a", "b", "c", "e"}, blocked=set())) == ["d"]


def test_finished_steps_are_never_ready_again() -> None:
    """A step runs once: when everything is done nothing is ready."""
    everything = {s.id for s in DIAMOND.steps}
    assert ready_steps(DIAMOND, done=everything, blocked=set()) == []


def test_ready_steps_come_in_plan_order() -> None:
    """Parallel batches take the first ready steps in the order the planner wrote them."""
    wide = plan(step("z"), step("y"), step("x"), step("w", "z"))
    assert ids(ready_steps(wide, done=set(), blocked=set())) == ["z", "y", "x"]


def test_a_step_whose_dependency_failed_is_never_ready() -> None:
    """The flow controller marks a failed step done and blocks its dependents: none of them runs."""
    done = {"a", "b", "e"}  # b failed
    blocked = set(dependents_of(DIAMOND, "b"))
    assert blocked == {"d"}
    assert "d" not in ids(ready_steps(DIAMOND, done, blocked))
    done.add("c")
    assert ready_steps(DIAMOND, done, blocked) == []


def test_dependents_are_found_transitively_in_plan_order() -> None:
    """A failure skips every step downstream of it, however indirectly, and nothing upstream or beside it."""
    assert dependents_of(DIAMOND, "a") == ["b", "c", "d"]
    assert dependents_of(DIAMOND, "c") == ["d"]
    assert dependents_of(DIAMOND, "d") == []
    assert dependents_of(DIAMOND, "e") == []


def test_dependents_follow_a_long_chain_written_out_of_order() -> None:
    """Transitive dependents are found even when the plan lists a dependent before its dependency."""
    chain = plan(step("c", "b"), step("d", "c"), step("b", "a"), step("a"))
    assert dependents_of(chain, "a") == ["c", "d", "b"]


@given(dags(), st.data())
@settings(database=None, max_examples=60)
def test_no_step_downstream_of_a_failure_ever_runs(dag: ExecutionPlan, data: st.DataObject) -> None:
    """Simulate the flow controller with random failures: a step runs only if all its dependencies succeeded."""
    failing = data.draw(st.sets(st.sampled_from([s.id for s in dag.steps])))
    done: set[str] = set()
    blocked: set[str] = set()
    succeeded: set[str] = set()
    while ready := ready_steps(dag, done, blocked):
        current = ready[0]
        assert set(current.dependencies) <= succeeded
        done.add(current.id)
        if current.id in failing:
            blocked.update(dependents_of(dag, current.id))
        else:
            succeeded.add(current.id)
    # every step either ran or was blocked by an upstream failure
    assert done | blocked == {s.id for s in dag.steps}
    assert not done & blocked
