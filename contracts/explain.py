"""A run's provenance in TrustGraph's own explainability form: PROV-O triples in the named graph
`urn:graph:retrieval`, under TrustGraph's agent URIs (`urn:trustgraph:agent:<session>...`) and types (tg:Question,
tg:Plan, tg:StepResult, tg:Synthesis, tg:Conclusion), so that TrustGraph's clients and CLI read them as they read
its own agent's. What TrustGraph has no words for (attempts, repairs, human decisions, and every confidence
figure with the evidence behind it) uses this service's vocabulary (TGCA). docs/trustgraph-contract.md,
"Explainability".

The run records what each explain message is about as an entity (`Explained`: the question, the plan, a step,
the answer, a failure); the publisher builds its triples from it, once per destination, never in workflow code.
Each entity has a core (the triples TrustGraph's agent sends for such an entity, and each confidence figure
with the facts that moved it), which the caller's response topic carries, and the detail (attempts, repairs,
human decisions, every measured fact, summaries), which only the triples store and the librarian document keep.
Pure functions."""

from __future__ import annotations

import json
import urllib.parse
from dataclasses import dataclass, field
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from contracts.redaction import redact_text
from contracts.wire import Term, Triple

# Where a run's explain entities go (the `explain` setting): inline on the caller's response topic (its core)
# and into the flow's triples store and the librarian (all of it); store-only, the latter alone; off, nowhere.
ExplainMode = Literal["inline", "store-only", "off"]

GRAPH_RETRIEVAL = "urn:graph:retrieval"  # TrustGraph's named graph for query-time explainability

RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
XSD_DECIMAL = "http://www.w3.org/2001/XMLSchema#decimal"
PROV = "http://www.w3.org/ns/prov#"
PROV_ENTITY, PROV_ACTIVITY = PROV + "Entity", PROV + "Activity"
PROV_DERIVED, PROV_GENERATED_BY, PROV_USED = PROV + "wasDerivedFrom", PROV + "wasGeneratedBy", PROV + "used"
PROV_INFORMED_BY, PROV_STARTED, PROV_ENDED = PROV + "wasInformedBy", PROV + "startedAtTime", PROV + "endedAtTime"
TG = "https://trustgraph.ai/ns/"
TGCA = "urn:tgca:ns:"  # this service's additions

TEXT_CHARS = 500  # tool outputs and answers are summarised in a trace, never copied whole


def iri(value: str) -> Term:
    return Term(type="i", iri=value)


def literal(value: object) -> Term:
    if isinstance(value, float):
        return Term(type="l", value=f"{value:.4g}", datatype=XSD_DECIMAL)
    return Term(type="l", value=str(value))


def summary(text: str, limit: int = TEXT_CHARS) -> str:
    text = redact_text(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass
class Graph:
    """Triples about one explain entity, all in GRAPH_RETRIEVAL. What a builder adds to `detail` is kept only
    when the graph is built with its detail (for the store), so one builder says both what the caller gets and
    what is stored."""

    with_detail: bool = True
    triples: list[Triple] = field(default_factory=list)

    def add(self, s: str, p: str, o: Term) -> None:
        self.triples.append(Triple(s=iri(s), p=iri(p), o=o, g=GRAPH_RETRIEVAL))

    def types(self, s: str, *kinds: str) -> None:
        for kind in kinds:
            self.add(s, RDF_TYPE, iri(kind))

    @property
    def detail(self) -> Graph:
        return self if self.with_detail else _DISCARDED


class _Discarded(Graph):
    """The detail of a graph built without it: whatever is added goes nowhere."""

    def add(self, s: str, p: str, o: Term) -> None:
        pass


_DISCARDED = _Discarded(with_detail=False)


@dataclass(frozen=True)
class Uris:
    """TrustGraph's agent URIs for one session, and this service's below them. `steps`: the plan's step ids in
    plan order, once there is a plan (TrustGraph numbers a plan's step results from 0 in that order)."""

    session_id: str
    steps: tuple[str, ...] = ()

    @property
    def session(self) -> str:
        return f"urn:trustgraph:agent:{urllib.parse.quote(self.session_id, safe='-_.:')}"

    @property
    def plan(self) -> str:
        return f"{self.session}/plan"

    def step(self, step_id: str) -> str:
        """The step's result, by its place in the plan (`.../step/0`), as TrustGraph names its own; the plan's
        id for it is the `tgca:stepId` of that URI."""
        return f"{self.session}/step/{self.steps.index(step_id)}"

    @property
    def synthesis(self) -> str:
        return f"{self.session}/synthesis"

    @property
    def decomposition(self) -> str:
        """A supervisor's decomposition of its question into sub-goals (TrustGraph's `<session>/decompose`)."""
        return f"{self.session}/decompose"

    @property
    def final(self) -> str:
        return f"{self.session}/final"


@dataclass(frozen=True)
class Evidence:
    """One measured fact behind a confidence figure: its name, what it means, its value, and (for an answer's
    calibrated confidence) whether it raised or lowered the figure."""

    name: str
    value: float | str
    meaning: str = ""
    effect: str = ""  # "raised", "lowered" or ""


@dataclass(frozen=True)
class Confidence:
    score: float
    reasoning: str
    evidence: list[Evidence]
    threshold: float | None = None


def add_confidence(g: Graph, owner: str, confidence: Confidence, derived_from: list[str] | None = None) -> str:
    """A confidence node for `owner` naming every piece of evidence behind it: its measured facts, or, when the
    scorer measured none, its stated reasoning. Its core: the figure (and threshold), and each fact that moved it
    (an answer's calibrated confidence says which raised or lowered it) with its value."""
    node = f"{owner}/confidence"
    d = g.detail
    g.add(owner, TGCA + "confidence", iri(node))
    d.types(node, PROV_ENTITY, TGCA + "Confidence")
    d.add(node, RDFS_LABEL, literal(f"Confidence {confidence.score:.2f}"))
    g.add(node, TGCA + "score", literal(float(confidence.score)))
    if confidence.threshold is not None:
        g.add(node, TGCA + "threshold", literal(float(confidence.threshold)))
    d.add(node, TGCA + "reasoning", literal(summary(confidence.reasoning, 2000)))
    d.add(node, PROV_DERIVED, iri(owner))
    for source in derived_from or []:
        d.add(node, PROV_DERIVED, iri(source))
    evidence = confidence.evidence or [
        Evidence(
            "reasoning", summary(confidence.reasoning, 2000), "the scorer's stated reasons (it measured nothing more)"
        )
    ]
    for item in evidence:
        kept = g if item.effect else d
        fact = f"{node}/evidence/{urllib.parse.quote(item.name, safe='-_.')}"
        kept.add(node, TGCA + "evidence", iri(fact))
        d.types(fact, PROV_ENTITY, TGCA + "Evidence")
        kept.add(fact, TGCA + "feature", literal(item.name))
        d.add(fact, RDFS_LABEL, literal(item.meaning or item.name))
        kept.add(fact, TGCA + "value", literal(item.value))
        if item.effect:
            kept.add(fact, TGCA + "effect", literal(item.effect))
    return node


def _session(g: Graph, uris: Uris, session: SessionEntity) -> None:
    """The question; a supervisor's sub-goal's derived from the supervisor's decomposition, as TrustGraph links its
    sub-agents' sessions (so that its trace reader lists it under the supervisor's, not as one of its own)."""
    s = uris.session
    g.types(s, PROV_ENTITY, TG + "Question", TG + "AgentQuestion")
    g.add(s, RDFS_LABEL, literal("Agent Question"))
    g.add(s, PROV_STARTED, literal(session.started))
    g.add(s, TG + "query", literal(redact_text(session.question)))
    if session.parent:
        g.add(s, PROV_DERIVED, iri(session.parent))
    g.detail.add(s, TGCA + "collection", literal(session.collection))


def _plan(g: Graph, uris: Uris, plan: PlanEntity) -> None:
    """The plan's core is its steps as TrustGraph's plan lists them (tg:planStep); how each is to run, and what it
    depends on, is detail."""
    p, d = uris.plan, g.detail
    g.types(p, PROV_ENTITY, TG + "Plan")
    g.add(p, RDFS_LABEL, literal(f"Plan with {len(plan.steps)} steps"))
    g.add(p, PROV_DERIVED, iri(uris.session))
    for step in plan.steps:
        g.add(p, TG + "planStep", literal(step_goal(step.step_id, step.tool, step.arguments)))
        s = uris.step(step.step_id)
        d.add(p, TGCA + "plannedStep", iri(s))
        d.add(s, TGCA + "stepId", literal(step.step_id))
        d.add(s, TG + "action", literal(step.tool))
        d.add(s, TG + "arguments", literal(redact_text(json.dumps(step.arguments, sort_keys=True))))
        d.add(s, TGCA + "threshold", literal(float(step.threshold)))
        for dependency in step.dependencies:
            d.add(s, TGCA + "dependsOn", iri(uris.step(dependency)))


def step_goal(step_id: str, tool: str, arguments: dict[str, str]) -> str:
    shown = "; ".join(f"{k}={v}" for k, v in arguments.items())
    return summary(f"{step_id}: {tool}({shown})")


@dataclass(frozen=True)
class Attempt:
    """One call of a step's tool: the retry-ladder rung that chose its arguments, and how it scored."""

    rung: str  # initial, or the retry ladder's rung (same, repair, adjusted, simplified) or human
    arguments: dict[str, str]
    confidence: Confidence
    output: str
    error: str = ""


@dataclass(frozen=True)
class Decision:
    decision: str  # accept, retry, skip, abort
    by: str
    reason: str


@dataclass(frozen=True)
class StepTrace:
    step_id: str
    tool: str
    outcome: str  # the step's final state (succeeded, accepted_by_override, low_confidence, skipped, failed)
    usable: bool
    started: str
    ended: str
    attempts: list[Attempt]
    confidence: Confidence
    output: str
    dependencies: list[str]
    decision: Decision | None = None


def _step(g: Graph, uris: Uris, step: StepTrace) -> None:
    """tg:StepResult derived from the plan alone, as TrustGraph's plan-then-execute has it: its trace reader
    follows every prov:wasDerivedFrom and drops no repeat, so a step also derived from the steps it depends on
    would be printed once per path: those are `tgca:dependsOn` instead. Generated by its last attempt; each attempt a
    prov:Activity informed by the one before (the retries and repairs); a human's decision, when one was made;
    and the step's confidence with its evidence. Its core: what TrustGraph's agent sends of a step result, and the
    step's confidence figure against its threshold."""
    s, d = uris.step(step.step_id), g.detail
    goal = step_goal(step.step_id, step.tool, step.attempts[-1].arguments if step.attempts else {})
    g.types(s, PROV_ENTITY, TG + "StepResult", TG + "Answer")
    g.add(s, RDFS_LABEL, literal(f"Step result: {goal[:60]}"))
    g.add(s, TG + "planStep", literal(goal))
    d.add(s, TGCA + "stepId", literal(step.step_id))
    g.add(s, PROV_DERIVED, iri(uris.plan))
    for dependency in step.dependencies:
        d.add(s, TGCA + "dependsOn", iri(uris.step(dependency)))
    d.add(s, TGCA + "outcome", literal(step.outcome))
    d.add(s, TGCA + "usable", literal("true" if step.usable else "false"))
    d.add(s, TGCA + "retries", literal(max(0, len(step.attempts) - 1)))
    d.add(s, TGCA + "outputSummary", literal(summary(step.output)))
    previous = ""
    for number, attempt in enumerate(step.attempts, start=1):
        a = f"{s}/attempt/{number}"
        d.types(a, PROV_ACTIVITY, TG + "ToolUse", TGCA + "Attempt")
        d.add(a, RDFS_LABEL, literal(f"Attempt {number} ({attempt.rung}): {step.tool}"))
        d.add(a, TGCA + "rung", literal(attempt.rung))
        d.add(a, TG + "action", literal(step.tool))
        d.add(a, TG + "arguments", literal(redact_text(json.dumps(attempt.arguments, sort_keys=True))))
        d.add(a, PROV_USED, iri(uris.plan))
        d.add(a, TGCA + "outputSummary", literal(summary(attempt.output)))
        if attempt.error:
            d.types(a, TG + "Error")
            d.add(a, TG + "toolError", literal(summary(attempt.error)))
        if previous:
            d.add(a, PROV_INFORMED_BY, iri(previous))
        d.add(s, TGCA + "attempt", iri(a))
        add_confidence(d, a, attempt.confidence)
        previous = a
    if step.started:
        d.add(s, PROV_STARTED, literal(step.started))
    if step.ended:
        d.add(s, PROV_ENDED, literal(step.ended))
    if previous:
        d.add(s, PROV_GENERATED_BY, iri(previous))
    if step.decision is not None:
        decided = f"{s}/decision"
        d.types(decided, PROV_ACTIVITY, TGCA + "HumanDecision")
        d.add(decided, RDFS_LABEL, literal(f"{step.decision.decision} by {step.decision.by or 'a human'}"))
        d.add(decided, TGCA + "decision", literal(step.decision.decision))
        d.add(decided, TGCA + "decidedBy", literal(step.decision.by))
        d.add(decided, TGCA + "reason", literal(summary(step.decision.reason)))
        if previous:
            d.add(decided, PROV_USED, iri(previous))
        d.add(s, TGCA + "decision", iri(decided))
    add_confidence(g, s, step.confidence, [f"{s}/attempt/{len(step.attempts)}/confidence"] if step.attempts else [])


def _answer(g: Graph, uris: Uris, answer: AnswerEntity) -> None:
    """The final answer: tg:Synthesis (a plan ran), else tg:Conclusion (AnswerEntity.synthesis); with its stated
    confidence and the evidence that moved it. Derived from `after` alone, the entity the trace ends on before it
    (the last step result, as TrustGraph's plan-then-execute links its synthesis, else the plan or the question),
    so TrustGraph's trace reader reaches it once; the step results it was written from are `tgca:writtenFrom`."""
    a, d = uris.synthesis if answer.synthesis else uris.final, g.detail
    g.types(a, PROV_ENTITY, TG + ("Synthesis" if answer.synthesis else "Conclusion"), TG + "Answer")
    g.add(a, RDFS_LABEL, literal("Synthesis" if answer.synthesis else "Conclusion"))
    g.add(a, PROV_DERIVED, iri(answer.after))
    for step_id in answer.usable:
        d.add(a, TGCA + "writtenFrom", iri(uris.step(step_id)))
    g.add(a, TG + "terminationReason", literal(answer.termination))
    d.add(a, TGCA + "answerSummary", literal(summary(answer.answer)))
    if answer.confidence is None:
        g.add(a, TGCA + "confidenceNote", literal(summary(answer.not_scored or "no confidence stated")))
    else:
        add_confidence(g, a, answer.confidence, [f"{uris.step(s)}/confidence" for s in answer.steps])


def _failure(g: Graph, uris: Uris, failure: FailureEntity) -> None:
    """A run that ended without an answer (an error, or a human's abort): tg:Conclusion with tg:Error, derived
    from `after` (as the answer is)."""
    a = uris.final
    g.types(a, PROV_ENTITY, TG + "Conclusion", TG + "Error")
    g.add(a, RDFS_LABEL, literal("Conclusion"))
    g.add(a, PROV_DERIVED, iri(failure.after))
    g.add(a, TG + "terminationReason", literal(failure.termination))
    g.add(a, TG + "toolError", literal(summary(failure.message)))


# -- the entities a run explains ------------------------------------------------------------------------


@dataclass(frozen=True)
class PlannedStep:
    step_id: str
    tool: str
    arguments: dict[str, str]
    dependencies: list[str]
    threshold: float


class SessionEntity(BaseModel):
    """The question (tg:Question), when it was asked and the collection it was asked of; `parent`: for a
    supervisor's sub-goal, the supervisor's decomposition (Uris.decomposition), which it is derived from."""

    kind: Literal["session"] = "session"
    question: str
    started: str
    collection: str
    parent: str = ""


class PlanEntity(BaseModel):
    """The plan (tg:Plan): its steps in plan order."""

    kind: Literal["plan"] = "plan"
    steps: list[PlannedStep]


class StepEntity(BaseModel):
    """A step's result (tg:StepResult)."""

    kind: Literal["step"] = "step"
    step: StepTrace


class AnswerEntity(BaseModel):
    """The answer (tg:Synthesis after a plan, tg:Conclusion without one, or in a supervisor's sub-goal). `answer`:
    its whole text (the librarian document's); `confidence` None when it states none (`not_scored` says why);
    `steps`: the steps whose confidence its own derives from; `usable`: those it was written from; `after`: the
    entity it hangs from; `subgoal`: it answers a supervisor's sub-goal."""

    kind: Literal["answer"] = "answer"
    answer: str
    confidence: Confidence | None
    not_scored: str
    steps: list[str]
    usable: list[str]
    planned: bool
    termination: str
    after: str
    subgoal: bool = False

    @property
    def synthesis(self) -> bool:
        """Whether it is a tg:Synthesis (`<session>/synthesis`), else a tg:Conclusion (`<session>/final`). A
        sub-goal's answer is a Conclusion whatever ran: TrustGraph's supervisor derives its finding from the
        sub-agent's `<session>/final`, as its ReAct sub-agents end their sessions."""
        return self.planned and not self.subgoal


class FailureEntity(BaseModel):
    """A run that ended without an answer (tg:Conclusion with tg:Error), hanging from `after`."""

    kind: Literal["failure"] = "failure"
    message: str
    termination: str
    after: str


ExplainEntity = Annotated[
    SessionEntity | PlanEntity | StepEntity | AnswerEntity | FailureEntity, Field(discriminator="kind")
]


class Explained(BaseModel):
    """What one explain message is about: an entity, under the URIs of its run's session (the plan's steps as
    known when it was explained)."""

    uris: Uris
    entity: ExplainEntity

    @property
    def explain_id(self) -> str:
        """The entity's URI: the message's explain_id, the subject TrustGraph's clients read it under."""
        entity, uris = self.entity, self.uris
        if isinstance(entity, SessionEntity):
            return uris.session
        if isinstance(entity, PlanEntity):
            return uris.plan
        if isinstance(entity, StepEntity):
            return uris.step(entity.step.step_id)
        if isinstance(entity, AnswerEntity) and entity.synthesis:
            return uris.synthesis
        return uris.final

    def triples(self, detail: bool = True) -> list[Triple]:
        """The entity's triples: with `detail`, everything (the triples store's); else its core (the caller's)."""
        g = Graph(with_detail=detail)
        entity = self.entity
        if isinstance(entity, SessionEntity):
            _session(g, self.uris, entity)
        elif isinstance(entity, PlanEntity):
            _plan(g, self.uris, entity)
        elif isinstance(entity, StepEntity):
            _step(g, self.uris, entity.step)
        elif isinstance(entity, AnswerEntity):
            _answer(g, self.uris, entity)
        else:
            _failure(g, self.uris, entity)
        return g.triples
