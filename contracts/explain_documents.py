"""What a TrustGraph user reads behind a run's step results and its answer: the librarian documents TrustGraph's
agent writes for its own (`urn:trustgraph:agent:<session>/step/<n>/doc`, `.../synthesis/doc`, `.../answer`) and
links from the entity with `tg:document` once the librarian confirmed it stored the document, which
`tg-show-explain-trace` fetches and prints. Ours say, in plain
words, the step's confidence figure and the evidence behind it, and the answer with its stated confidence and
the evidence that moved it: TrustGraph's CLIs print no `tgca:` triple. Written from the explained entity itself
(contracts/explain.py), with the figures formatted as its triples state them. docs/trustgraph-contract.md,
"Explainability". Pure functions."""

from __future__ import annotations

from dataclasses import dataclass

from contracts.explain import (
    GRAPH_RETRIEVAL,
    TG,
    AnswerEntity,
    Confidence,
    Evidence,
    Explained,
    StepEntity,
    StepTrace,
    iri,
    literal,
    step_goal,
    summary,
)
from contracts.wire import Triple

TG_DOCUMENT = TG + "document"  # TrustGraph's link from an explain entity to its librarian document


@dataclass(frozen=True)
class ExplainDocument:
    """One librarian document: its id (TrustGraph's naming), title and text."""

    id: str
    title: str
    content: str


def _figure(value: float) -> str:
    """A figure as a document states it: two decimals of the value its triple holds."""
    return f"{float(literal(float(value)).value):.2f}"


def _reasoning(confidence: Confidence) -> str:
    return summary(confidence.reasoning, 2000)


def _evidence_lines(confidence: Confidence) -> list[str]:
    """Each measured fact behind a confidence figure: `name = value (what it means), raised/lowered it`; those
    that moved the figure first. A scorer that measured nothing names its reasoning, as the trace does."""
    evidence = confidence.evidence or [
        Evidence("reasoning", _reasoning(confidence), "the scorer's stated reasons (it measured nothing more)")
    ]
    lines = []
    for item in sorted(evidence, key=lambda e: not e.effect):
        line = f"- {item.name} = {literal(item.value).value}"
        if item.meaning and item.meaning != item.name:
            line += f" ({item.meaning})"
        if item.effect:
            line += f", {item.effect} the figure"
        lines.append(line)
    return lines


def _step(explained: Explained, step: StepTrace) -> ExplainDocument:
    goal = step_goal(step.step_id, step.tool, step.attempts[-1].arguments if step.attempts else {})
    lines = [
        f"Step {goal}",
        f"Outcome: {step.outcome or 'unknown'} - its result is {'used' if step.usable else 'not used'} by the answer",
    ]
    dependencies = [str(explained.uris.steps.index(d)) for d in step.dependencies]
    if dependencies:  # numbered as the plan lists its steps, which TrustGraph's CLIs print
        steps = "steps" if len(dependencies) > 1 else "step"
        lines.append(f"Depends on: {steps} {', '.join(dependencies)} of the plan")
    confidence = step.confidence
    stated = f"Confidence {_figure(confidence.score)}"
    if confidence.threshold is not None:
        met = float(literal(float(confidence.score)).value) >= float(literal(float(confidence.threshold)).value)
        stated += f" {'meets' if met else 'is below'} the threshold {_figure(confidence.threshold)}"
    lines += [f"{stated}: {_reasoning(confidence)}", "Evidence behind this confidence:", *_evidence_lines(confidence)]
    if len(step.attempts) > 1:
        lines.append(f"Retries: {len(step.attempts) - 1} (each attempt is in the trace: tgca:attempt)")
    if step.decision is not None:
        decided = f"{step.decision.decision} by {step.decision.by or 'a human'}"
        lines.append(f"Human decision: {decided} - {summary(step.decision.reason)}")
    output = summary(step.output)
    if output:
        lines += ["Output:", output]
    return ExplainDocument(f"{explained.explain_id}/doc", f"Step result: {goal[:60]}", "\n".join(lines))


def _answer(explained: Explained, answer: AnswerEntity) -> ExplainDocument:
    text = answer.answer
    lines = [text]
    if answer.confidence is not None:
        score = _figure(answer.confidence.score)
        if f"Confidence: {score}" not in text:  # an answer written without its stated confidence
            lines += ["", f"Confidence: {score} - {_reasoning(answer.confidence)}"]
        lines += ["", "Evidence behind the stated confidence:", *_evidence_lines(answer.confidence)]
    else:
        lines += ["", f"Confidence: {summary(answer.not_scored or 'no confidence stated')}"]
    document_id = document_of(explained)
    assert document_id is not None
    return ExplainDocument(document_id, "Synthesis" if answer.synthesis else "Agent Answer", "\n".join(lines))


def document_of(explained: Explained) -> str | None:
    """The id of the document behind an entity, when it has one: a step result's (`<step>/doc`) or an answer's
    (`<session>/synthesis/doc`, or `<session>/answer` as TrustGraph's agent names its conclusion's). A failure's
    reason is in its triples, which TrustGraph's CLIs print."""
    entity = explained.entity
    if isinstance(entity, StepEntity) or (isinstance(entity, AnswerEntity) and entity.synthesis):
        return f"{explained.explain_id}/doc"
    if isinstance(entity, AnswerEntity):
        return f"{explained.uris.session}/answer"
    return None


def explain_document(explained: Explained) -> ExplainDocument | None:
    """The document behind a step result or an answer (the answer's whole text, then its stated confidence and
    the evidence that moved it); None for any other entity."""
    entity = explained.entity
    if isinstance(entity, StepEntity):
        return _step(explained, entity.step)
    if isinstance(entity, AnswerEntity):
        return _answer(explained, entity)
    return None


def document_link(explained: Explained, document_id: str) -> Triple:
    """The entity's `tg:document` link, as TrustGraph's agent links its own: stored with the entity's triples only
    once the librarian confirmed it stored the document (contracts/explain_delivery.StoredEntity)."""
    return Triple(s=iri(explained.explain_id), p=iri(TG_DOCUMENT), o=iri(document_id), g=GRAPH_RETRIEVAL)
