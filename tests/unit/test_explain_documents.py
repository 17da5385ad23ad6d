"""The librarian documents behind a run's step results and answer: what a TrustGraph user reads there, under the
ids TrustGraph's agent gives its own (contracts/explain_documents.py; through TrustGraph's CLIs:
tests/contract/test_trustgraph_gateway.py)."""

from __future__ import annotations

from contracts.explain import (
    TG,
    AnswerEntity,
    Attempt,
    Confidence,
    Evidence,
    Explained,
    ExplainEntity,
    FailureEntity,
    SessionEntity,
    StepEntity,
    StepTrace,
    Uris,
)
from contracts.explain_documents import TG_DOCUMENT, document_link, document_of, explain_document
from contracts.topics import librarian_topics

URIS = Uris("s-1", ("s0", "s1"))  # a plan of two steps


def explained(entity: ExplainEntity) -> Explained:
    return Explained(uris=URIS, entity=entity)


def weak_step() -> StepTrace:
    confidence = Confidence(
        0.42, "Query returned 0 row(s)", [Evidence("rows", 0, "the number of rows returned")], threshold=0.8
    )
    return StepTrace(
        step_id="s1",
        tool="GraphQuery",
        outcome="low_confidence",
        usable=False,
        started="",
        ended="",
        attempts=[Attempt("initial", {"query": "MATCH (n) RETURN n"}, confidence, "[]")],
        confidence=confidence,
        output="[]",
        dependencies=["s0"],
    )


def answer(text: str, confidence: Confidence | None, planned: bool = True, not_scored: str = "") -> Explained:
    return explained(
        AnswerEntity(
            answer=text,
            confidence=confidence,
            not_scored=not_scored,
            steps=["s1"] if planned else [],
            usable=["s1"] if planned else [],
            planned=planned,
            termination="plan-complete" if planned else "final-answer",
            after=URIS.step("s1") if planned else URIS.session,
        )
    )


def test_a_step_document_states_its_confidence_against_its_threshold_and_the_evidence() -> None:
    document = explain_document(explained(StepEntity(step=weak_step())))
    assert document is not None and document.id == "urn:trustgraph:agent:s-1/step/1/doc"  # TrustGraph's naming
    assert document.title == "Step result: s1: GraphQuery(query=MATCH (n) RETURN n)"
    assert document.content == (
        "Step s1: GraphQuery(query=MATCH (n) RETURN n)\n"
        "Outcome: low_confidence - its result is not used by the answer\n"
        "Depends on: step 0 of the plan\n"  # as TrustGraph's CLIs number the plan
        "Confidence 0.42 is below the threshold 0.80: Query returned 0 row(s)\n"
        "Evidence behind this confidence:\n"
        "- rows = 0 (the number of rows returned)\n"
        "Output:\n"
        "[]"
    )


def test_the_answer_document_is_the_whole_answer_with_what_moved_its_confidence_first() -> None:
    text = "Acme. " * 200 + "\n\nConfidence: 0.79 - calibrated: raised because it aggregates"
    confidence = Confidence(
        0.79,
        "calibrated: raised because it aggregates",
        [
            Evidence("coverage", 1.0, "the share of planned steps with a usable result"),
            Evidence("aggregates", 1.0, "a query that aggregates", "raised"),
        ],
    )
    whole = explain_document(answer(text, confidence))
    assert whole is not None and whole.id == f"{URIS.synthesis}/doc" and whole.content.startswith(text)
    assert whole.content.index("- aggregates = 1 (a query that aggregates), raised the figure") < whole.content.index(
        "- coverage = 1"
    )
    # an answer that does not state its figure gets it stated
    unstated = explain_document(answer("Acme.", confidence))
    assert unstated is not None and "\nConfidence: 0.79 - calibrated: raised because it aggregates" in unstated.content


def test_a_direct_answer_is_named_as_trustgraphs_conclusion_document_and_a_failure_has_none() -> None:
    direct = answer("Hello.", None, planned=False, not_scored="not scored - a direct answer")
    document = explain_document(direct)
    assert document is not None and document.id == f"{URIS.session}/answer" == document_of(direct)
    assert "Confidence: not scored - a direct answer" in document.content
    failure = explained(FailureEntity(message="boom", termination="error", after=URIS.session))
    assert explain_document(failure) is None and document_of(failure) is None
    assert explain_document(explained(SessionEntity(question="Hi?", started="", collection="default"))) is None


def test_the_link_is_trustgraphs_tg_document() -> None:
    step = explained(StepEntity(step=weak_step()))
    document = explain_document(step)
    assert document is not None and document_of(step) == document.id
    link = document_link(step, document.id)
    assert (link.s.iri, link.p.iri, link.o.type, link.o.iri, link.g) == (
        URIS.step("s1"),
        TG_DOCUMENT,
        "i",
        document.id,
        "urn:graph:retrieval",
    )
    assert TG_DOCUMENT == TG + "document"


def test_the_librarian_is_the_workspaces_as_trustgraph_names_its_queues() -> None:
    assert librarian_topics("non-persistent://tg/response/agent:acme:flow-a") == (
        "non-persistent://tg/request/librarian:acme",
        "non-persistent://tg/response/librarian:acme",
    )
    assert librarian_topics("non-persistent://tg/response/agent:my-flow") is None  # 1.x: no explain messages
    assert librarian_topics("persistent://tg/response/my-agent") is None
