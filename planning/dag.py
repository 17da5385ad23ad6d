"""Deterministic DAG scheduling helpers for the flow controller (no I/O, safe in workflows)."""

from __future__ import annotations

from contracts.plan import ExecutionPlan, ExecutionStep


def ready_steps(plan: ExecutionPlan, done: set[str], blocked: set[str]) -> list[ExecutionStep]:
    """Steps not yet run whose dependencies all finished successfully, in plan order."""
    return [
        s for s in plan.steps if s.id not in done and s.id not in blocked and all(d in done for d in s.dependencies)
    ]


def dependents_of(plan: ExecutionPlan, failed: str) -> list[str]:
    """Every step that transitively depends on `failed`, in plan order."""
    hit = {failed}
    changed = True
    while changed:
        changed = False
        for s in plan.steps:
            if s.id not in hit and any(d in hit for d in s.dependencies):
                hit.add(s.id)
                changed = True
    return [s.id for s in plan.steps if s.id in hit and s.id != failed]
