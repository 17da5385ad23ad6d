"""A run's provenance in TrustGraph's own explainability form: PROV-O triples in the named graph
`urn:graph:retrieval`, under TrustGraph's agent URIs (`urn:trustgraph:agent:<session>...`) and types (tg:Question,
tg:Plan, tg:StepResult, tg:Synthesis, tg:Conclusion), so that TrustGraph's clients and CLI read them as they read
its own agent's. What TrustGraph has no words for (attempts, repairs, human decisions, and every confidence
figure with the evidence behind it) uses this service's vocabulary (TGCA). docs/trustgraph-contract.md,
"Explainability". Pure functions: the workflow builds its trace with them."""

from __future__ import annotations

import json
import urllib.parse
from dataclasses import dataclass, field

from contracts.redaction import redact_text
from contracts.wire import Term, Triple

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
    """Triples about one explain entity, all in GRAPH_RETRIEVAL."""

    triples: list[Triple] = field(default_factory=list)

    def add(self, s: str, p: str, o: Term) -> None:
        self.triples.append(Triple(s=iri(s), p=iri(p), o=o, g=GRAPH_RETRIEVAL))

    def types(self, s: str, *kinds: str) -> None:
        for kind in kinds:
            self.add(s, RDF_TYPE, iri(kind))


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
    scorer measured none, its stated reasoning."""
    node = f"{owner}/confidence"
    g.add(owner, TGCA + "confidence", iri(node))
    g.types(node, PROV_ENTITY, TGCA + "Confidence")
    g.add(node, RDFS_LABEL, literal(f"Confidence {confidence.score:.2f}"))
    g.add(node, TGCA + "score", literal(float(confidence.score)))
    if confidence.threshold is not None:
        g.add(node, TGCA + "threshold", literal(float(confidence.threshold)))
    g.add(node, TGCA + "reasoning", literal(summary(confidence.reasoning, 2000)))
    g.add(node, PROV_DERIVED, iri(owner))
    for source in derived_from or []:
        g.add(node, PROV_DERIVED, iri(source))
    evidence = confidence.evidence or [Evidence("reasoning", summary(confidence.reasoning, 2000),
                                                "the scorer's stated reasons (it measured nothing more)")]
    for item in evidence:
        fact = f"{node}/evidence/{urllib.parse.quote(item.name, safe='-_.')}"
        g.add(node, TGCA + "evidence", iri(fact))
        g.types(fact, PROV_ENTITY, TGCA + "Evidence")
        g.add(fact, TGCA + "feature", literal(item.name))
        g.add(fact, RDFS_LABEL, literal(item.meaning or item.name))
        g.add(fact, TGCA + "value", literal(item.value))
        if item.effect:
            g.add(fact, TGCA + "effect", literal(item.effect))
    return node


def session_triples(uris: Uris, question: str, started: str, collection: str) -> list[Triple]:
    g = Graph()
    s = uris.session
    g.types(s, PROV_ENTITY, TG + "Question", TG + "AgentQuestion")
    g.add(s, RDFS_LABEL, literal("Agent Question"))
    g.add(s, PROV_STARTED, literal(started))
    g.add(s, TG + "query", literal(redact_text(question)))
    g.add(s, TGCA + "collection", literal(collection))
    return g.triples


def plan_triples(uris: Uris, steps: list[tuple[str, str, dict[str, str], list[str], float]]) -> list[Triple]:
    """`steps`: (id, tool, arguments, dependencies, threshold) in plan order."""
    g = Graph()
    p = uris.plan
    g.types(p, PROV_ENTITY, TG + "Plan")
    g.add(p, RDFS_LABEL, literal(f"Plan with {len(steps)} steps"))
    g.add(p, PROV_DERIVED, iri(uris.session))
    for step_id, tool, arguments, dependencies, threshold in steps:
        g.add(p, TG + "planStep", literal(step_goal(step_id, tool, arguments)))
        s = uris.step(step_id)
        g.add(p, TGCA + "plannedStep", iri(s))
        g.add(s, TGCA + "stepId", literal(step_id))
        g.add(s, TG + "action", literal(tool))
        g.add(s, TG + "arguments", literal(redact_text(json.dumps(arguments, sort_keys=True))))
        g.add(s, TGCA + "threshold", literal(float(threshold)))
        for dependency in dependencies:
            g.add(s, TGCA + "dependsOn", iri(uris.step(dependency)))
    return g.triples


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


def step_triples(uris: Uris, step: StepTrace) -> list[Triple]:
    """tg:StepResult derived from the plan alone, as TrustGraph's plan-then-execute has it: its trace reader
    follows every prov:wasDerivedFrom and drops no repeat, so a step also derived from the steps it depends on
    would be printed once per path: those are `tgca:dependsOn` instead. Generated by its last attempt; each attempt a
    prov:Activity informed by the one before (the retries and repairs); a human's decision, when one was made;
    and the step's confidence with its evidence."""
    g = Graph()
    s = uris.step(step.step_id)
    goal = step_goal(step.step_id, step.tool, step.attempts[-1].arguments if step.attempts else {})
    g.types(s, PROV_ENTITY, TG + "StepResult", TG + "Answer")
    g.add(s, RDFS_LABEL, literal(f"Step result: {goal[:60]}"))
    g.add(s, TG + "planStep", literal(goal))
    g.add(s, TGCA + "stepId", literal(step.step_id))
    g.add(s, PROV_DERIVED, iri(uris.plan))
    for dependency in step.dependencies:
        g.add(s, TGCA + "dependsOn", iri(uris.step(dependency)))
    g.add(s, TGCA + "outcome", literal(step.outcome))
    g.add(s, TGCA + "usable", literal("true" if step.usable else "false"))
    g.add(s, TGCA + "retries", literal(max(0, len(step.attempts) - 1)))
    g.add(s, TGCA + "outputSummary", literal(summary(step.output)))
    previous = ""
    for number, attempt in enumerate(step.attempts, start=1):
        a = f"{s}/attempt/{number}"
        g.types(a, PROV_ACTIVITY, TG + "ToolUse", TGCA + "Attempt")
        g.add(a, RDFS_LABEL, literal(f"Attempt {number} ({attempt.rung}): {step.tool}"))
        g.add(a, TGCA + "rung", literal(attempt.rung))
        g.add(a, TG + "action", literal(step.tool))
        g.add(a, TG + "arguments", literal(redact_text(json.dumps(attempt.arguments, sort_keys=True))))
        g.add(a, PROV_USED, iri(uris.plan))
        g.add(a, TGCA + "outputSummary", literal(summary(attempt.output)))
        if attempt.error:
            g.types(a, TG + "Error")
            g.add(a, TG + "toolError", literal(summary(attempt.error)))
        if previous:
            g.add(a, PROV_INFORMED_BY, iri(previous))
        g.add(s, TGCA + "attempt", iri(a))
        add_confidence(g, a, attempt.confidence)
        previous = a
    if step.started:
        g.add(s, PROV_STARTED, literal(step.started))
    if step.ended:
        g.add(s, PROV_ENDED, literal(step.ended))
    if previous:
        g.add(s, PROV_GENERATED_BY, iri(previous))
    if step.decision is not None:
        d = f"{s}/decision"
        g.types(d, PROV_ACTIVITY, TGCA + "HumanDecision")
        g.add(d, RDFS_LABEL, literal(f"{step.decision.decision} by {step.decision.by or 'a human'}"))
        g.add(d, TGCA + "decision", literal(step.decision.decision))
        g.add(d, TGCA + "decidedBy", literal(step.decision.by))
        g.add(d, TGCA + "reason", literal(summary(step.decision.reason)))
        if previous:
            g.add(d, PROV_USED, iri(previous))
        g.add(s, TGCA + "decision", iri(d))
    add_confidence(g, s, step.confidence, [f"{s}/attempt/{len(step.attempts)}/confidence"] if step.attempts else [])
    return g.triples


def answer_triples(uris: Uris, answer: str, confidence: Confidence | None, not_scored: str, steps: list[str],
                   usable: list[str], planned: bool, termination: str, after: str) -> list[Triple]:
    """The final answer: tg:Synthesis (a plan ran), else tg:Conclusion; with its stated confidence and the
    evidence that moved it. Derived from `after` alone, the entity the trace ends on before it (the last step
    result, as TrustGraph's plan-then-execute links its synthesis, else the plan or the question), so TrustGraph's
    trace reader reaches it once; the step results it was written from are `tgca:writtenFrom`."""
    g = Graph()
    a = uris.synthesis if planned else uris.final
    g.types(a, PROV_ENTITY, TG + ("Synthesis" if planned else "Conclusion"), TG + "Answer")
    g.add(a, RDFS_LABEL, literal("Synthesis" if planned else "Conclusion"))
    g.add(a, PROV_DERIVED, iri(after))
    for step_id in usable:
        g.add(a, TGCA + "writtenFrom", iri(uris.step(step_id)))
    g.add(a, TG + "terminationReason", literal(termination))
    g.add(a, TGCA + "answerSummary", literal(summary(answer)))
    if confidence is None:
        g.add(a, TGCA + "confidenceNote", literal(summary(not_scored or "no confidence stated")))
    else:
        add_confidence(g, a, confidence, [f"{uris.step(s)}/confidence" for s in steps])
    return g.triples


def failure_triples(uris: Uris, message: str, termination: str, after: str) -> list[Triple]:
    """A run that ended without an answer (an error, or a human's abort): tg:Conclusion with tg:Error, derived
    from `after` (as the answer is)."""
    g = Graph()
    a = uris.final
    g.types(a, PROV_ENTITY, TG + "Conclusion", TG + "Error")
    g.add(a, RDFS_LABEL, literal("Conclusion"))
    g.add(a, PROV_DERIVED, iri(after))
    g.add(a, TG + "terminationReason", literal(termination))
    g.add(a, TG + "toolError", literal(summary(message)))
    return g.triples
