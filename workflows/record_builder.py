"""What a finished run leaves behind, built from its context: its measurements and its audit record."""

from __future__ import annotations

from datetime import datetime

from temporalio import workflow

from workflows.run_context import RunContext

with workflow.unsafe.imports_passed_through():
    from confidence.evidence import run_evidence
    from contracts.records import AuditRecord, RunRecord
    from contracts.run import AgentRunResult


def run_record(ctx: RunContext, result: AgentRunResult, started: datetime) -> RunRecord:
    elapsed = workflow.now() - started
    ctx.metrics.plan_seconds = elapsed.total_seconds()
    ctx.metrics.answer_confidence = result.confidence if result.error is None else None
    ctx.metrics.failed = result.error is not None
    ctx.metrics.step_attempts = sum(len(step.attempts) for step in ctx.audit.values())
    settings = ctx.settings
    steps = result.plan.steps if result.plan else []
    audit = None
    if settings.audit_enabled:
        audit = AuditRecord(
            execution_id=ctx.workflow_id,
            timestamp=started.isoformat().replace("+00:00", "Z"),
            request={
                "question": ctx.question,
                "request_id": ctx.inp.request_id,
                "confidence_threshold": settings.confidence_threshold,
                "max_retries": settings.max_retries,
            },
            plan={
                "steps": [
                    {
                        "id": s.id,
                        "function": s.function,
                        "confidence_threshold": s.confidence_threshold,
                        "dependencies": s.dependencies,
                        "arguments": s.arguments,
                    }
                    for s in steps
                ]
            },
            execution=[ctx.audit[s.id] for s in steps if s.id in ctx.audit],
            final_confidence=result.confidence,
            total_duration_ms=int(elapsed.total_seconds() * 1000),
            outcome=ctx.status.phase if result.error is None else f"{ctx.status.phase}: {result.error}",
            notes=ctx.notes,
            evidence=ctx.evidence or (run_evidence(ctx.finished, len(steps)) if ctx.finished else {}),
        )
    return RunRecord(metrics=ctx.metrics, audit=audit, include_raw_outputs=settings.include_raw_outputs)
