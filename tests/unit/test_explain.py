"""The explain triples and where they go: TrustGraph's topic naming, its Triples message, a confidence that always
names its evidence, and links TrustGraph's trace reader follows once each (contracts/explain.py; the whole trace
over Pulsar: tests/contract/test_explainability.py; as tg-show-explain-trace prints it:
tests/contract/test_trustgraph_gateway.py)."""

from __future__ import annotations

import json

from trustgraph.base.serialization import dict_to_dataclass
from trustgraph.schema import Triples

from contracts.explain import (
    PROV_DERIVED,
    RDF_TYPE,
    RDFS_LABEL,
    TG,
    TGCA,
    AnswerEntity,
    Attempt,
    Confidence,
    Decision,
    Evidence,
    Explained,
    ExplainEntity,
    PlanEntity,
    PlannedStep,
    SessionEntity,
    StepEntity,
    StepTrace,
    Uris,
)
from contracts.topics import explainability_topic, hears_explain
from contracts.wire import AgentResponse, Triple
from contracts.wire_codec import encode_explain_store


def triples(uris: Uris, entity: ExplainEntity, detail: bool = True) -> list[Triple]:
    return Explained(uris=uris, entity=entity).triples(detail)


def test_explain_triples_go_where_trustgraphs_agent_writes_them() -> None:
    assert (
        explainability_topic("non-persistent://tg/response/agent:ws:flow")
        == "persistent://tg/flow/triples-store:ws:flow"
    )
    assert explainability_topic("recorded") == ""


def test_only_1x_callers_hear_no_explain_messages() -> None:
    assert hears_explain("non-persistent://tg/response/agent:default:default")
    assert not hears_explain("non-persistent://tg/response/agent:my-flow")
    assert hears_explain("persistent://tg/response/my-agent")


def test_the_store_message_decodes_as_trustgraphs_triples() -> None:
    session = triples(Uris("s1"), SessionEntity(question="Who?", started="2026-01-01T00:00:00Z", collection="acme"))
    response = AgentResponse(message_type="explain", explain_id="urn:trustgraph:agent:s1", explain_triples=session)
    decoded = dict_to_dataclass(json.loads(encode_explain_store(response, "acme")), Triples)
    assert decoded.metadata.id == "urn:trustgraph:agent:s1" and decoded.metadata.collection == "acme"
    assert [(t.s.iri, t.p.iri, t.o.iri or t.o.value, t.g) for t in decoded.triples] == [
        (t.s.iri, t.p.iri, t.o.iri or t.o.value, t.g) for t in session
    ]


def test_a_confidence_without_measured_facts_names_its_reasoning_as_evidence() -> None:
    silent = Confidence(0.0, "the tool failed: timeout", [])
    step = StepTrace(
        step_id="s1",
        tool="GraphQuery",
        outcome="failed",
        usable=False,
        started="",
        ended="",
        attempts=[Attempt("initial", {"query": "x"}, silent, "", "timeout")],
        confidence=silent,
        output="",
        dependencies=[],
    )
    facts = {(t.s.iri, t.p.iri, t.o.iri or t.o.value) for t in triples(Uris("s", ("s1",)), StepEntity(step=step))}
    nodes = [o for s, p, o in facts if p == TGCA + "confidence"]
    assert len(nodes) == 2
    for node in nodes:
        [fact] = [o for s, p, o in facts if s == node and p == TGCA + "evidence"]
        assert (fact, TGCA + "value", "the tool failed: timeout") in facts


def test_evidence_that_moved_nothing_names_no_effect() -> None:
    assert Evidence("rows", 3.0).effect == ""


def facts_of(triples: list[Triple]) -> set[tuple[str, str, str]]:
    return {(t.s.iri, t.p.iri, t.o.iri or t.o.value) for t in triples}


def test_step_results_are_numbered_from_0_in_plan_order_with_the_plans_id_kept() -> None:
    uris = Uris("run", ("orders", "leader"))
    assert uris.step("leader") == "urn:trustgraph:agent:run/step/1"  # as TrustGraph numbers its plan's steps
    planned = facts_of(
        triples(
            uris,
            PlanEntity(
                steps=[
                    PlannedStep("orders", "GraphQuery", {}, [], 0.8),
                    PlannedStep("leader", "TextCompletion", {}, ["orders"], 0.7),
                ]
            ),
        )
    )
    assert (uris.step("leader"), TGCA + "stepId", "leader") in planned


def test_only_one_derivation_reaches_each_step_and_the_answer() -> None:
    """TrustGraph's trace reader prints an entity once per prov:wasDerivedFrom path to it: a step derives from the
    plan alone and the answer from one entity; the steps each depends on and was written from are kept apart."""
    uris = Uris("run", ("a", "b", "c"))
    silent = Confidence(0.9, "fine", [])
    step = StepTrace(
        step_id="c",
        tool="TextCompletion",
        outcome="succeeded",
        usable=True,
        started="",
        ended="",
        attempts=[],
        confidence=silent,
        output="ok",
        dependencies=["a", "b"],
    )
    stepped = facts_of(triples(uris, StepEntity(step=step)))
    derived = {(s, o) for s, p, o in stepped if p == PROV_DERIVED}
    assert {o for s, o in derived if s == uris.step("c")} == {uris.plan}
    depends = {o for s, p, o in stepped if s == uris.step("c") and p == TGCA + "dependsOn"}
    assert depends == {uris.step("a"), uris.step("b")}

    answer = facts_of(
        triples(
            uris,
            AnswerEntity(
                answer="ok",
                confidence=silent,
                not_scored="",
                steps=["a", "c"],
                usable=["a", "c"],
                planned=True,
                termination="plan-complete",
                after=uris.step("c"),
            ),
        )
    )
    assert {o for s, p, o in answer if s == uris.synthesis and p == PROV_DERIVED} == {uris.step("c")}
    assert {o for s, p, o in answer if s == uris.synthesis and p == TGCA + "writtenFrom"} == {
        uris.step("a"),
        uris.step("c"),
    }


def test_the_caller_gets_each_entity_s_core_and_the_store_all_of_it() -> None:
    """The response topic carries what TrustGraph's clients read, the links between the entities and each
    confidence figure with the evidence that moved it; attempts, decisions and every other measured fact only
    the store (and the librarian document) keep. The core is part of the whole, never a different statement."""
    uris = Uris("run", ("s1",))
    measured = Confidence(0.9, "Query returned 2 row(s)", [Evidence("rows", 2.0, "rows returned")], threshold=0.8)
    step = StepTrace(
        step_id="s1",
        tool="GraphQuery",
        outcome="accepted_by_override",
        usable=True,
        started="t0",
        ended="t1",
        attempts=[
            Attempt("initial", {"query": "MATCH (n) RETURN n"}, measured, "[1, 2]"),
            Attempt("same", {"query": "MATCH (n) RETURN n"}, measured, "[1, 2]"),
        ],
        confidence=measured,
        output="[1, 2]",
        dependencies=[],
        decision=Decision("accept", "dana", "checked"),
    )
    answer = AnswerEntity(
        answer="Acme.",
        confidence=Confidence(
            0.79,
            "calibrated",
            [
                Evidence("coverage", 1.0, "the share of planned steps with a usable result"),
                Evidence("aggregates", 1.0, "a query that aggregates", "raised"),
            ],
        ),
        not_scored="",
        steps=["s1"],
        usable=["s1"],
        planned=True,
        termination="plan-complete",
        after=uris.step("s1"),
    )
    for entity in (StepEntity(step=step), answer):
        assert facts_of(triples(uris, entity, detail=False)) < facts_of(triples(uris, entity))
    assert len(triples(uris, StepEntity(step=step), detail=False)) * 4 < len(triples(uris, StepEntity(step=step)))

    step_core = facts_of(triples(uris, StepEntity(step=step), detail=False))
    s = uris.step("s1")
    assert {p for n, p, o in step_core if n == s} == {  # what TrustGraph's agent sends of a step result
        RDF_TYPE,
        RDFS_LABEL,
        TG + "planStep",
        PROV_DERIVED,
        TGCA + "confidence",
    }
    assert (s, TG + "planStep", "s1: GraphQuery(query=MATCH (n) RETURN n)") in step_core
    assert {(p, o) for n, p, o in step_core if n == f"{s}/confidence"} == {
        (TGCA + "score", "0.9"),
        (TGCA + "threshold", "0.8"),
    }  # the figure; no fact moved it
    assert not [t for t in step_core if "/attempt/" in t[0] or "/decision" in t[0] or "/evidence/" in t[0]]

    answer_core = facts_of(triples(uris, answer, detail=False))
    assert {(n.rsplit("/", 1)[1], p, o) for n, p, o in answer_core if "/evidence/" in n} == {
        ("aggregates", TGCA + "feature", "aggregates"),
        ("aggregates", TGCA + "value", "1"),
        ("aggregates", TGCA + "effect", "raised"),
    }  # what raised the figure; coverage, which moved nothing, is stored
