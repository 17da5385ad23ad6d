"""The explain triples and where they go: TrustGraph's topic naming, its Triples message, and a confidence that
always names its evidence (contracts/explain.py; the whole trace over Pulsar: tests/contract/test_explainability.py)."""

from __future__ import annotations

import json

from trustgraph.base.serialization import dict_to_dataclass
from trustgraph.schema import Triples

from contracts.explain import (
    TGCA,
    Attempt,
    Confidence,
    Evidence,
    StepTrace,
    Uris,
    session_triples,
    step_triples,
)
from contracts.topics import explainability_topic, hears_explain
from contracts.wire import AgentResponse
from contracts.wire_codec import encode_explain_store


def test_explain_triples_go_where_trustgraphs_agent_writes_them() -> None:
    assert explainability_topic("non-persistent://tg/response/agent:ws:flow") == \
        "persistent://tg/flow/triples-store:ws:flow"
    assert explainability_topic("recorded") == ""


def test_only_1x_callers_hear_no_explain_messages() -> None:
    assert hears_explain("non-persistent://tg/response/agent:default:default")
    assert not hears_explain("non-persistent://tg/response/agent:my-flow")
    assert hears_explain("persistent://tg/response/my-agent")


def test_the_store_message_decodes_as_trustgraphs_triples() -> None:
    triples = session_triples(Uris("s1"), "Who?", "2026-01-01T00:00:00Z", "acme")
    response = AgentResponse(message_type="explain", explain_id="urn:trustgraph:agent:s1", explain_triples=triples)
    decoded = dict_to_dataclass(json.loads(encode_explain_store(response, "acme")), Triples)
    assert decoded.metadata.id == "urn:trustgraph:agent:s1" and decoded.metadata.collection == "acme"
    assert [(t.s.iri, t.p.iri, t.o.iri or t.o.value, t.g) for t in decoded.triples] == \
        [(t.s.iri, t.p.iri, t.o.iri or t.o.value, t.g) for t in triples]


def test_a_confidence_without_measured_facts_names_its_reasoning_as_evidence() -> None:
    silent = Confidence(0.0, "the tool failed: timeout", [])
    step = StepTrace(step_id="s1", tool="GraphQuery", outcome="failed", usable=False, started="", ended="",
                     attempts=[Attempt("initial", {"query": "x"}, silent, "", "timeout")], confidence=silent,
                     output="", dependencies=[])
    facts = {(t.s.iri, t.p.iri, t.o.iri or t.o.value) for t in step_triples(Uris("s"), step)}
    nodes = [o for s, p, o in facts if p == TGCA + "confidence"]
    assert len(nodes) == 2
    for node in nodes:
        [fact] = [o for s, p, o in facts if s == node and p == TGCA + "evidence"]
        assert (fact, TGCA + "value", "the tool failed: timeout") in facts


def test_evidence_that_moved_nothing_names_no_effect() -> None:
    assert Evidence("rows", 3.0).effect == ""
