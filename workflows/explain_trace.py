"""The run's provenance, sent as it happens in TrustGraph's explainability form: one `explain` message per
entity (the question, the plan, each step, the answer or the failure), as TrustGraph's agent sends them. The
run records each entity (contracts/explain.py); the publisher builds its triples and, as the worker's `explain`
setting says, sends their core to the caller and keeps all of them in the flow's triples store and its librarian
(contracts/explain_delivery.py). None go to callers that cannot read them (contracts/topics.py: hears_explain),
and none once the publisher says the worker explains nothing (`explain: off`).

The entities hang together as TrustGraph's plan-then-execute links its own: the plan from the question, each
step result from the plan, the answer (or a failure) from the last step result. A run that answers a supervisor's
sub-goal is linked as TrustGraph links its sub-agents: its question derived from the supervisor's decomposition,
its answer a Conclusion (`<session>/final`), which the supervisor's finding is derived from. A service a step's
tool calls links its own trace under the step's result (graph-rag, given it as `parent_uri`), and its explain
messages reach the caller between the step's attempt and its result, as TrustGraph's agent forwards them.

TrustGraph's trace reader (`tg-show-explain-trace`) follows every `prov:wasDerivedFrom` from the question and
prints what it reaches each time it reaches it, so each entity has one path to it; the rest of the links (a step's
dependencies, the steps an answer was written from) use this service's vocabulary, which the reader does not
follow."""

from __future__ import annotations

from collections.abc import Callable

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from confidence.evidence import FEATURES
    from contracts.explain import (
        GRAPH_RETRIEVAL,
        AnswerEntity,
        Attempt,
        Confidence,
        Decision,
        Evidence,
        Explained,
        ExplainEntity,
        FailureEntity,
        PlanEntity,
        PlannedStep,
        SessionEntity,
        StepEntity,
        StepTrace,
        Uris,
        summary,
    )
    from contracts.explain_delivery import ExplainMessage
    from contracts.plan import ConfidenceMetrics, ExecutionPlan, ExecutionStep
    from contracts.records import StepAudit
    from contracts.subagent import SubagentReturn
    from contracts.wire import AgentResponse


def step_confidence(metrics: ConfidenceMetrics, threshold: float | None = None) -> Confidence:
    """A tool's confidence with the measured facts it named (confidence/evidence.py says what each means)."""
    evidence = [Evidence(name, value, FEATURES.get(name, "")) for name, value in sorted(metrics.signals.items())]
    return Confidence(metrics.score, metrics.reasoning, evidence, threshold)


class ExplainTrace:
    def __init__(
        self,
        emit: Callable[[AgentResponse], None],
        session_id: str,
        enabled: bool,
        subagent: SubagentReturn | None = None,
    ) -> None:
        self._emit = emit
        self.uris = Uris(session_id)
        self._subagent = subagent  # the supervisor's sub-goal this run answers, if it answers one
        # Whether the run explains itself (the entities' URIs are named either way); off for good once the
        # publisher says the worker's `explain` setting is off (stop).
        self.enabled = enabled
        self.plan: ExecutionPlan | None = None
        self._attempts: dict[str, list[Attempt]] = {}
        self._confident: list[str] = []  # steps whose confidence the answer builds on
        self._usable: list[str] = []
        self._explained: set[str] = set()  # steps whose result has been sent

    def stop(self) -> None:
        self.enabled = False
        self._attempts.clear()

    def _message(self, entity: ExplainEntity) -> ExplainMessage:
        explained = Explained(uris=self.uris, entity=entity)
        # end_of_message false, as TrustGraph's agent leaves it on its explain messages
        return ExplainMessage(
            message_type="explain",
            content="",
            end_of_message=False,
            explain_id=explained.explain_id,
            explain_graph=GRAPH_RETRIEVAL,
            explained=explained,
        )

    def _send(self, entity: ExplainEntity) -> None:
        if self.enabled:
            self._emit(self._message(entity))

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
        return self.uris.synthesis if self.plan is not None and self._subagent is None else self.uris.final

    def step_uri(self, step_id: str) -> str:
        """The step's result in this trace, which a service the step's tool calls links its own trace under (as
        TrustGraph's agent gives graph-rag `parent_uri`); "" while the run explains nothing."""
        return self.uris.step(step_id) if self.enabled and step_id in self.uris.steps else ""

    def forward(self, messages: list[AgentResponse]) -> None:
        """The explain messages of a service a step called (graph-rag's trace, linked under the step), passed on to
        the caller as they came, as TrustGraph's agent forwards them; the service keeps them in its own store."""
        if self.enabled:
            for message in messages:
                self._emit(
                    AgentResponse(
                        message_type="explain",
                        content="",
                        end_of_message=False,
                        explain_id=message.explain_id,
                        explain_graph=message.explain_graph,
                        explain_triples=message.explain_triples,
                    )
                )

    def session(self, question: str, started: str, collection: str) -> None:
        supervisor = self._subagent.parent_session_id if self._subagent is not None else ""
        parent = Uris(supervisor).decomposition if supervisor else ""
        self._send(SessionEntity(question=question, started=started, collection=collection, parent=parent))

    def planned(self, plan: ExecutionPlan) -> None:
        self.plan = plan
        self.uris = Uris(self.uris.session_id, tuple(s.id for s in plan.steps))
        self._send(
            PlanEntity(
                steps=[
                    PlannedStep(s.id, s.function, s.arguments, s.dependencies, s.confidence_threshold)
                    for s in plan.steps
                ]
            )
        )

    def attempt(
        self,
        step_id: str,
        rung: str,
        arguments: dict[str, str],
        metrics: ConfidenceMetrics,
        output: str,
        error: str = "",
    ) -> None:
        # Outputs are kept as the trace summarises them (a tool's may be large; the entity goes to the store
        # activity, whose input a run's history keeps).
        if self.enabled:
            self._attempts.setdefault(step_id, []).append(
                Attempt(rung, dict(arguments), step_confidence(metrics), summary(output), summary(error))
            )

    def step(
        self, step: ExecutionStep, audit: StepAudit, metrics: ConfidenceMetrics, output: str, usable: bool
    ) -> None:
        if not self.enabled:
            return
        decided = audit.override
        decision = (
            Decision(decided.get("decision", ""), decided.get("by", ""), decided.get("reason", "")) if decided else None
        )
        trace = StepTrace(
            step_id=step.id,
            tool=step.function,
            outcome=audit.outcome,
            usable=usable,
            started=audit.start_time,
            ended=audit.end_time,
            attempts=self._attempts.pop(step.id, []),
            confidence=step_confidence(metrics, step.confidence_threshold),
            output=summary(output),
            dependencies=step.dependencies,
            decision=decision,
        )
        self._confident.append(step.id)
        if usable:
            self._usable.append(step.id)
        self._explained.add(step.id)
        self._send(StepEntity(step=trace))

    def answer(
        self, answer: str, score: float | None, reasons: str, evidence: dict[str, float], moved: dict[str, str]
    ) -> ExplainMessage | None:
        """The answer's explain message, not sent: the caller places it among the answer's own messages, where
        TrustGraph's agent sends it (workflows/run_context.answer). None when explain messages are not sent.
        `answer`: its whole text, the librarian document's. `moved`: the evidence the calibrator says raised or
        lowered `score` (SynthesisOutput.evidence_effects)."""
        if not self.enabled:
            return None
        confidence = None
        if score is not None:
            confidence = Confidence(
                score,
                reasons,
                [
                    Evidence(name, value, FEATURES.get(name, ""), moved.get(name, ""))
                    for name, value in sorted(evidence.items())
                ],
            )
        planned = self.plan is not None
        return self._message(
            AnswerEntity(
                answer=answer,
                confidence=confidence,
                not_scored=reasons,
                steps=[s for s in self._confident if s in self._usable],
                usable=self._usable,
                planned=planned,
                termination="plan-complete" if planned else "final-answer",
                after=self._tail(),
                subgoal=self._subagent is not None,
            )
        )

    def failure(self, message: str, termination: str) -> None:
        self._send(FailureEntity(message=message, termination=termination, after=self._tail()))
