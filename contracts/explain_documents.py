"""What a TrustGraph user reads behind a run's step results and its answer: the librarian documents TrustGraph's
agent writes for its own (`urn:trustgraph:agent:<session>/step/<n>/doc`, `.../synthesis/doc`, `.../answer`) and
links from the entity with `tg:document`, which `tg-show-explain-trace` fetches and prints. Ours say, in plain
words, the step's confidence figure and the evidence behind it, and the answer with its stated confidence and
the evidence that moved it: TrustGraph's CLIs print no `tgca:` triple. Built from the explain message's own
triples (contracts/explain.py), so the publisher needs nothing else. docs/trustgraph-contract.md,
"Explainability". Pure functions."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from contracts.explain import GRAPH_RETRIEVAL, RDF_TYPE, RDFS_LABEL, TG, TGCA, iri
from contracts.wire import AgentResponse, Triple

TG_DOCUMENT = TG + "document"  # TrustGraph's link from an explain entity to its librarian document


@dataclass(frozen=True)
class ExplainDocument:
    """One librarian document: its id (TrustGraph's naming), title and text."""

    id: str
    title: str
    content: str


class _Facts:
    """An explain message's triples by subject: (predicate, object) pairs, in the order they were built."""

    def __init__(self, triples: list[Triple]) -> None:
        self.by_subject: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for t in triples:
            self.by_subject[t.s.iri].append((t.p.iri, t.o.iri if t.o.type == "i" else t.o.value))

    def all(self, s: str, p: str) -> list[str]:
        return [o for pred, o in self.by_subject.get(s, []) if pred == p]

    def one(self, s: str, p: str) -> str:
        found = self.all(s, p)
        return found[0] if found else ""


def _figure(value: str) -> str:
    try:
        return f"{float(value):.2f}"
    except ValueError:
        return value


def _evidence_lines(facts: _Facts, node: str) -> list[str]:
    """Each measured fact behind a confidence figure: `name = value (what it means), raised/lowered it`; those
    that moved the figure first."""
    lines = []
    facts_of = facts.all(node, TGCA + "evidence")
    for fact in sorted(facts_of, key=lambda f: not facts.one(f, TGCA + "effect")):
        name, meaning = facts.one(fact, TGCA + "feature"), facts.one(fact, RDFS_LABEL)
        line = f"- {name} = {facts.one(fact, TGCA + 'value')}"
        if meaning and meaning != name:
            line += f" ({meaning})"
        effect = facts.one(fact, TGCA + "effect")
        if effect:
            line += f", {effect} the figure"
        lines.append(line)
    return lines


def _step(facts: _Facts, uri: str) -> ExplainDocument:
    goal = facts.one(uri, TG + "planStep")
    lines = [f"Step {goal}", f"Outcome: {facts.one(uri, TGCA + 'outcome') or 'unknown'} - its result is "
             f"{'used' if facts.one(uri, TGCA + 'usable') == 'true' else 'not used'} by the answer"]
    dependencies = [d.rsplit("/", 1)[1] for d in facts.all(uri, TGCA + "dependsOn")]
    if dependencies:  # numbered as the plan lists its steps, which TrustGraph's CLIs print
        steps = "steps" if len(dependencies) > 1 else "step"
        lines.append(f"Depends on: {steps} {', '.join(dependencies)} of the plan")
    node = facts.one(uri, TGCA + "confidence")
    if node:
        score, threshold = facts.one(node, TGCA + "score"), facts.one(node, TGCA + "threshold")
        stated = f"Confidence {_figure(score)}"
        if threshold:
            met = float(score) >= float(threshold)
            stated += f" {'meets' if met else 'is below'} the threshold {_figure(threshold)}"
        lines.append(f"{stated}: {facts.one(node, TGCA + 'reasoning')}")
        evidence = _evidence_lines(facts, node)
        if evidence:
            lines += ["Evidence behind this confidence:", *evidence]
    retries = facts.one(uri, TGCA + "retries")
    if retries and retries != "0":
        lines.append(f"Retries: {retries} (each attempt is in the trace: tgca:attempt)")
    decision = facts.one(uri, TGCA + "decision")
    if decision:
        lines.append(f"Human decision: {facts.one(decision, RDFS_LABEL)} - {facts.one(decision, TGCA + 'reason')}")
    output = facts.one(uri, TGCA + "outputSummary")
    if output:
        lines += ["Output:", output]
    return ExplainDocument(f"{uri}/doc", f"Step result: {goal[:60]}", "\n".join(lines))


def _answer(facts: _Facts, uri: str, answer: str, planned: bool) -> ExplainDocument:
    text = answer or facts.one(uri, TGCA + "answerSummary")
    lines = [text]
    node = facts.one(uri, TGCA + "confidence")
    if node:
        score = _figure(facts.one(node, TGCA + "score"))
        if f"Confidence: {score}" not in text:  # a summary cut before the answer's stated confidence
            lines += ["", f"Confidence: {score} - {facts.one(node, TGCA + 'reasoning')}"]
        evidence = _evidence_lines(facts, node)
        if evidence:
            lines += ["", "Evidence behind the stated confidence:", *evidence]
    elif facts.one(uri, TGCA + "confidenceNote"):
        lines += ["", f"Confidence: {facts.one(uri, TGCA + 'confidenceNote')}"]
    if planned:
        return ExplainDocument(f"{uri}/doc", "Synthesis", "\n".join(lines))
    session = uri.rsplit("/", 1)[0]  # TrustGraph's agent names its conclusion's document <session>/answer
    return ExplainDocument(f"{session}/answer", "Agent Answer", "\n".join(lines))


def explain_document(response: AgentResponse, answer: str = "") -> ExplainDocument | None:
    """The document behind an explain message's entity, when it is a step result or an answer (a failure's
    reason is in its triples, which TrustGraph's CLIs print). `answer`: the answer's full text when the
    publisher has it (its chunks travel with their explain message), else the trace's summary of it is used."""
    uri = response.explain_id or ""
    if response.message_type != "explain" or not uri:
        return None
    facts = _Facts(response.explain_triples)
    types = set(facts.all(uri, RDF_TYPE))
    if TG + "StepResult" in types:
        return _step(facts, uri)
    if TG + "Error" in types:
        return None
    if TG + "Synthesis" in types or TG + "Conclusion" in types:
        return _answer(facts, uri, answer, TG + "Synthesis" in types)
    return None


def linked(response: AgentResponse, document: ExplainDocument) -> AgentResponse:
    """The explain message with its entity's `tg:document` link, as TrustGraph's agent links its own."""
    link = Triple(s=iri(response.explain_id or ""), p=iri(TG_DOCUMENT), o=iri(document.id), g=GRAPH_RETRIEVAL)
    return response.model_copy(update={"explain_triples": [*response.explain_triples, link]})

