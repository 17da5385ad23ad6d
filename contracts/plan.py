"""Execution plans: a DAG of tool steps, each with a confidence threshold, and the scored results."""

from __future__ import annotations

from pydantic import BaseModel, Field, model_validator


class ConfidenceMetrics(BaseModel):
    score: float = Field(ge=0.0, le=1.0)
    reasoning: str = ""
    retry_count: int = Field(default=0, ge=0)
    # The measured facts behind the score, named by the tool (rows returned, names found nowhere, share of a
    # text grounded in its evidence, ...): the calibrator's inputs (confidence/evidence.py).
    signals: dict[str, float] = Field(default_factory=dict)
    # The names behind a count among the signals ("unused_names" -> the question's names the query ignores), so
    # the answer's confidence line can quote them (confidence/evidence_words.py).
    names: dict[str, list[str]] = Field(default_factory=dict)


class ExecutionStep(BaseModel):
    id: str = Field(min_length=1, max_length=64)
    function: str = Field(min_length=1, max_length=64)
    arguments: dict[str, str] = Field(default_factory=dict)
    dependencies: list[str] = Field(default_factory=list)
    confidence_threshold: float = Field(default=0.75, ge=0.0, le=1.0)
    timeout_ms: int = Field(default=30000, gt=0, le=3_600_000)


class PlanValidationError(ValueError):
    """A plan that cannot run: the message lists every problem found."""


def find_cycle(steps: list[ExecutionStep]) -> list[str] | None:
    """Return one dependency cycle as a list of step ids, or None when the graph is acyclic."""
    deps = {s.id: s.dependencies for s in steps}
    state: dict[str, int] = {}  # 1 = on the current path, 2 = finished

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for dep in deps.get(node, []):
            if state.get(dep) == 1:
                return [*path[path.index(dep) :], dep]
            if dep in deps and state.get(dep) is None:
                cycle = visit(dep, path)
                if cycle:
                    return cycle
        path.pop()
        state[node] = 2
        return None

    for step in steps:
        if state.get(step.id) is None:
            cycle = visit(step.id, [])
            if cycle:
                return cycle
    return None


class ExecutionPlan(BaseModel):
    id: str = Field(min_length=1)
    steps: list[ExecutionStep] = Field(min_length=1)
    context: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _check_graph(self) -> ExecutionPlan:
        problems: list[str] = []
        ids = [s.id for s in self.steps]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            problems.append(f"duplicate step ids: {', '.join(duplicates)}")
        known = set(ids)
        for step in self.steps:
            if step.id in step.dependencies:
                problems.append(f"step {step.id} depends on itself")
            missing = [d for d in step.dependencies if d not in known]
            if missing:
                problems.append(f"step {step.id} depends on unknown steps: {', '.join(missing)}")
        if not problems:
            cycle = find_cycle(self.steps)
            if cycle:
                problems.append(f"dependency cycle: {' -> '.join(cycle)}")
        if problems:
            raise PlanValidationError("; ".join(problems))
        return self

    def step(self, step_id: str) -> ExecutionStep:
        for s in self.steps:
            if s.id == step_id:
                return s
        raise KeyError(step_id)


class StepResult(BaseModel):
    step_id: str
    success: bool
    output: str = ""
    confidence: ConfidenceMetrics
    execution_time_ms: int = Field(default=0, ge=0)
