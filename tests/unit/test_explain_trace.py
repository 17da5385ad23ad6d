"""Where the run's trace hangs its end (workflows/explain_trace.py): from the last step result in plan order, the
order TrustGraph's trace reader meets a plan's steps in, whatever order they finished in; as
tg-show-explain-trace prints it: tests/contract/test_trustgraph_gateway.py."""

from __future__ import annotations

from contracts.explain import PROV_DERIVED
from contracts.explain_delivery import ExplainMessage
from contracts.plan import ConfidenceMetrics, ExecutionPlan, ExecutionStep
from contracts.records import StepAudit
from contracts.wire import AgentResponse
from workflows.explain_trace import ExplainTrace

PLAN = ExecutionPlan(
    id="p",
    steps=[
        ExecutionStep(id="a", function="GraphQuery"),
        ExecutionStep(id="b", function="GraphQuery"),
        ExecutionStep(id="c", function="TextCompletion", dependencies=["a"]),
    ],
)


def finish(trace: ExplainTrace, step_id: str) -> None:
    step = next(s for s in PLAN.steps if s.id == step_id)
    audit = StepAudit(
        step_id=step_id,
        function=step.function,
        start_time="",
        end_time="",
        confidence_score=0.9,
        retry_count=0,
        success=True,
        outcome="succeeded",
    )
    trace.step(step, audit, ConfidenceMetrics(score=0.9), "rows", usable=True)


def derived_from(message: AgentResponse | None) -> set[str]:
    """What the entity of an explain message hangs from, in the core the caller gets."""
    assert isinstance(message, ExplainMessage) and message.explain_id == message.explained.explain_id
    return {
        t.o.iri
        for t in message.explained.triples(detail=False)
        if t.s.iri == message.explain_id and t.p.iri == PROV_DERIVED
    }


def test_the_answer_hangs_from_the_last_step_in_plan_order_though_another_finished_last() -> None:
    sent: list[AgentResponse] = []
    trace = ExplainTrace(sent.append, "run", enabled=True)
    trace.planned(PLAN)
    for step_id in ("b", "c", "a"):  # parallel steps, finished out of order
        finish(trace, step_id)
    assert [m.explain_id for m in sent[1:]] == [f"urn:trustgraph:agent:run/step/{n}" for n in (1, 2, 0)]
    answer = trace.answer("Acme.", 0.8, "fine", {}, {})
    assert derived_from(answer) == {"urn:trustgraph:agent:run/step/2"}
    assert sent[-1].explain_id == "urn:trustgraph:agent:run/step/0"  # the answer's message is the caller's to send
    assert all(not m.end_of_message for m in [*sent, answer])  # as TrustGraph's agent sends explain messages


def test_a_step_that_never_ran_is_passed_over_and_without_steps_the_end_hangs_from_the_plan() -> None:
    trace = ExplainTrace(lambda message: None, "run", enabled=True)
    trace.planned(PLAN)
    assert derived_from(trace.answer("none", None, "no step ran", {}, {})) == {"urn:trustgraph:agent:run/plan"}
    finish(trace, "b")  # c, skipped, has no result to hang from
    assert derived_from(trace.answer("Acme.", 0.8, "fine", {}, {})) == {"urn:trustgraph:agent:run/step/1"}


def test_without_a_plan_the_end_hangs_from_the_question_and_nothing_is_sent_when_explain_is_off() -> None:
    sent: list[AgentResponse] = []
    trace = ExplainTrace(sent.append, "run", enabled=True)
    trace.failure("boom", "error")
    assert derived_from(sent[-1]) == {"urn:trustgraph:agent:run"}
    assert ExplainTrace(sent.append, "run", enabled=False).answer("Hi.", None, "direct", {}, {}) is None


def test_a_stopped_trace_explains_nothing_more_and_no_message_carries_triples_from_workflow_code() -> None:
    sent: list[AgentResponse] = []
    trace = ExplainTrace(sent.append, "run", enabled=True)
    trace.session("Who leads?", "2026-01-01T00:00:00Z", "default")
    trace.planned(PLAN)
    assert [m.explain_triples for m in sent] == [[], []]  # the publisher builds them (activities/publish.py)
    trace.stop()  # the worker's `explain` setting is off
    finish(trace, "a")
    trace.failure("boom", "error")
    assert len(sent) == 2 and trace.answer("Acme.", 0.8, "fine", {}, {}) is None
