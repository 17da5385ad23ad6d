"""The run's provenance, sent as it happens in TrustGraph's explainability form: one `explain` message per
entity (the question, the plan, each step, the answer or the failure), as TrustGraph's agent sends them
(contracts/explain.py builds the triples). None go to callers that cannot read them
(contracts/topics.py: hears_explain).

The entities hang together as TrustGraph's plan-then-execute links its own: the plan from the question, each
step result from the plan, the answer (or a failure) from the last step result. TrustGraph's trace reader
(`tg-show-explain-trace`) follows every `prov:wasDerivedFrom` from the question and prints what it reaches
each time it reaches it, so each entity has one path to it; the rest of the links (a step's dependencies, the
steps an answer was written from) use this service's vocabulary, which the reader does not follow."""

from __future__ import annotations

from collections.abc import Callable

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from confidence.evidence import FEATURES
    from contracts.explain import (
        GRAPH_RETRIEVAL,
        Attempt,
        Confidence,
        Decision,
        Evidence,
        StepTrace,
        Uris,
        answer_triples,
        failure_triples,
        plan_triples,
        session_triples,
        step_triples,
    )
    from contracts.plan import ConfidenceMetrics, ExecutionPlan, ExecutionStep
    from contracts.records import StepAudit
    from contracts.wire import AgentResponse, Triple


def step_confidence(metrics: ConfidenceMetrics, threshold: float | None = None) -> Confidence:
    """A tool's confidence with the measured facts it named (confidence/evidence.py says what each means)."""
    evidence = [Evidence(name, value, FEATURES.get(name, "")) for name, value in sorted(metrics.signals.items())]
    return Confidence(metrics.score, metrics.reasoning, evidence, threshold)


class ExplainTrace:
    def __init__(self, emit: Callable[[AgentResponse], None], session_id: str, enabled: bool) -> None:
        self._emit = emit
        self.uris = Uris(session_id)
        self.enabled = enabled  # whether explain messages are sent (the entities' URIs are named either way)
        self.plan: ExecutionPlan | None = None
        self._attempts: dict[str, list[Attempt]] = {}
        self._confident: list[str] = []  # steps whose confidence the answer builds on
        self._usable: list[str] = []
        self._explained: set[str] = set()  # steps whose result has been sent

    def _message(self, explain_id: str, triples: list[Triple]) -> AgentResponse:
        # end_of_message false, as TrustGraph's agent leaves it on its explain messages
        return AgentResponse(message_type="explain", content="", end_of_message=False, explain_id=explain_id,
                             explain_graph=GRAPH_RETRIEVAL, explain_triples=triples)

    def _send(self, explain_id: str, triples: list[Triple]) -> None:
        if self.enabled:
            self._emit(self._message(explain_id, triples))

    def _tail(self) -> str:
        """What the trace's end (the answer or a failure) is derived from: the last step result in plan order, as
        TrustGraph's plan-then-execute links its synthesis to its last step; else the plan, else the question.
        TrustGraph's FalkorDB store returns a plan's step results in the order it first met their URIs, which is
        plan order (the plan's message names every step), so the reader prints the end after every step, also
        when the steps ran in parallel and finished in another order."""
        if self.plan is None:
            return self.uris.session
        explained = [s.id for s in self.plan.steps if s.id in self._explained]
        return self.uris.step(explained[-1]) if explained else self.uris.plan

    @property
    def answer_uri(self) -> str:
        """The answer's entity: its explain message's explain_id, and the message_id of its chunks (as
        TrustGraph's agent names its answer messages), whether or not explain messages are sent."""
        return self.uris.synthesis if self.plan is not None else self.uris.final

    def session(self, question: str, started: str, collection: str) -> None:
        self._send(self.uris.session, session_triples(self.uris, question, started, collection))

    def planned(self, plan: ExecutionPlan) -> None:
        self.plan = plan
        self.uris = Uris(self.uris.session_id, tuple(s.id for s in plan.steps))
        self._send(self.uris.plan, plan_triples(self.uris, [
            (s.id, s.function, s.arguments, s.dependencies, s.confidence_threshold) for s in plan.steps]))

    def attempt(self, step_id: str, rung: str, arguments: dict[str, str], metrics: ConfidenceMetrics, output: str,
                error: str = "") -> None:
        if self.enabled:
            self._attempts.setdefault(step_id, []).append(
                Attempt(rung, dict(arguments), step_confidence(metrics), output, error))

    def step(self, step: ExecutionStep, audit: StepAudit, metrics: ConfidenceMetrics, output: str,
             usable: bool) -> None:
        if not self.enabled:
            return
        decided = audit.override
        decision = (Decision(decided.get("decision", ""), decided.get("by", ""), decided.get("reason", ""))
                    if decided else None)
        trace = StepTrace(step_id=step.id, tool=step.function, outcome=audit.outcome, usable=usable,
                          started=audit.start_time, ended=audit.end_time,
                          attempts=self._attempts.pop(step.id, []),
                          confidence=step_confidence(metrics, step.confidence_threshold), output=output,
                          dependencies=step.dependencies, decision=decision)
        self._confident.append(step.id)
        if usable:
            self._usable.append(step.id)
        self._explained.add(step.id)
        self._send(self.uris.step(step.id), step_triples(self.uris, trace))

    def answer(self, answer: str, score: float | None, reasons: str, evidence: dict[str, float],
               moved: dict[str, str]) -> AgentResponse | None:
        """The answer's explain message, not sent: the caller places it among the answer's own messages, where
        TrustGraph's agent sends it (workflows/run_context.answer). None when explain messages are not sent.
        `moved`: the evidence the calibrator says raised or lowered `score` (SynthesisOutput.evidence_effects)."""
        if not self.enabled:
            return None
        confidence = None
        if score is not None:
            confidence = Confidence(score, reasons, [
                Evidence(name, value, FEATURES.get(name, ""), moved.get(name, ""))
                for name, value in sorted(evidence.items())])
        planned = self.plan is not None
        return self._message(self.answer_uri, answer_triples(
            self.uris, answer, confidence, reasons, [s for s in self._confident if s in self._usable], self._usable,
            planned, "plan-complete" if planned else "final-answer", after=self._tail()))

    def failure(self, message: str, termination: str) -> None:
        self._send(self.uris.final, failure_triples(self.uris, message, termination, self._tail()))
