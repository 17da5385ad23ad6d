"""The librarian documents behind a run's step results and answer: what a TrustGraph user reads there, under the
ids TrustGraph's agent gives its own (contracts/explain_documents.py; through TrustGraph's CLIs:
tests/contract/test_trustgraph_gateway.py)."""

from __future__ import annotations

from contracts.explain import (
    TG,
    Attempt,
    Confidence,
    Evidence,
    StepTrace,
    Uris,
    answer_triples,
    failure_triples,
    session_triples,
    step_triples,
)
from contracts.explain_documents import TG_DOCUMENT, explain_document, linked
from contracts.topics import librarian_topics
from contracts.wire import AgentResponse, Triple

URIS = Uris("s-1", ("s0", "s1"))  # a plan of two steps


def explain(uri: str, triples: list[Triple]) -> AgentResponse:
    return AgentResponse(message_type="explain", explain_id=uri, explain_triples=triples)


def weak_step() -> StepTrace:
    confidence = Confidence(0.42, "Query returned 0 row(s)", [Evidence("rows", 0, "the number of rows returned")],
                            threshold=0.8)
    return StepTrace(step_id="s1", tool="GraphQuery", outcome="low_confidence", usable=False, started="",
                     ended="", attempts=[Attempt("initial", {"query": "MATCH (n) RETURN n"}, confidence, "[]")],
                     confidence=confidence, output="[]", dependencies=["s0"])


def test_a_step_document_states_its_confidence_against_its_threshold_and_the_evidence() -> None:
    document = explain_document(explain(URIS.step("s1"), step_triples(URIS, weak_step())))
    assert document is not None and document.id == "urn:trustgraph:agent:s-1/step/1/doc"  # TrustGraph's naming
    assert "Confidence 0.42 is below the threshold 0.80: Query returned 0 row(s)" in document.content
    assert "\nDepends on: step 0 of the plan\n" in document.content  # as TrustGraph's CLIs number the plan
    assert "- rows = 0 (the number of rows returned)" in document.content
    assert "low_confidence - its result is not used by the answer" in document.content


def test_the_answer_document_is_the_whole_answer_with_what_moved_its_confidence_first() -> None:
    answer = "Acme. " * 200 + "\n\nConfidence: 0.79 - calibrated: raised because it aggregates"
    confidence = Confidence(0.79, "calibrated: raised because it aggregates",
                            [Evidence("coverage", 1.0, "the share of planned steps with a usable result"),
                             Evidence("aggregates", 1.0, "a query that aggregates", "raised")])
    triples = answer_triples(URIS, answer, confidence, "", ["s1"], ["s1"], True, "plan-complete",
                             URIS.step("s1"))
    whole = explain_document(explain(URIS.synthesis, triples), answer)
    assert whole is not None and whole.id == f"{URIS.synthesis}/doc" and whole.content.startswith(answer)
    assert whole.content.index("- aggregates = 1 (a query that aggregates), raised the figure") < \
        whole.content.index("- coverage = 1")
    # without the answer's text (its chunks sent apart), the trace's summary, and the stated figure kept
    summarised = explain_document(explain(URIS.synthesis, triples))
    assert summarised is not None and len(summarised.content) < len(whole.content)
    assert "\nConfidence: 0.79 - calibrated: raised because it aggregates" in summarised.content


def test_a_direct_answer_is_named_as_trustgraphs_conclusion_document_and_a_failure_has_none() -> None:
    triples = answer_triples(URIS, "Hello.", None, "not scored - a direct answer", [], [], False, "final-answer",
                             URIS.session)
    document = explain_document(explain(URIS.final, triples), "Hello.")
    assert document is not None and document.id == f"{URIS.session}/answer"
    assert "Confidence: not scored - a direct answer" in document.content
    assert explain_document(explain(URIS.final, failure_triples(URIS, "boom", "error", URIS.session))) is None
    assert explain_document(explain(URIS.session, session_triples(URIS, "Hi?", "", "default"))) is None


def test_the_link_is_trustgraphs_tg_document() -> None:
    response = explain(URIS.step("s1"), step_triples(URIS, weak_step()))
    document = explain_document(response)
    assert document is not None
    link = linked(response, document).explain_triples[-1]
    assert (link.s.iri, link.p.iri, link.o.type, link.o.iri, link.g) == \
        (URIS.step("s1"), TG_DOCUMENT, "i", document.id, "urn:graph:retrieval")
    assert TG_DOCUMENT == TG + "document"


def test_the_librarian_is_the_workspaces_as_trustgraph_names_its_queues() -> None:
    assert librarian_topics("non-persistent://tg/response/agent:acme:flow-a") == (
        "non-persistent://tg/request/librarian:acme", "non-persistent://tg/response/librarian:acme")
    assert librarian_topics("non-persistent://tg/response/agent:my-flow") is None  # 1.x: no explain messages
    assert librarian_topics("persistent://tg/response/my-agent") is None
