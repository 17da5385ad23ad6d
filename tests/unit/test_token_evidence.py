"""How sure the model was of what it wrote: the query tokens of a plan, the answer's tokens, and a server's
log-probabilities read defensively (backends/llm.token_logprobs)."""

from __future__ import annotations

import math

import pytest

from backends.llm import token_logprobs
from confidence.calibrator import fit
from confidence.token_evidence import answer_evidence, plan_evidence, query_spans


def tokens(text: str, logprob_of: dict[str, float], default: float = -0.01) -> list[tuple[str, float]]:
    """`text` cut into 3-character tokens; a token inside one of `logprob_of`'s keys takes its logprob."""
    out = []
    for i in range(0, len(text), 3):
        piece = text[i : i + 3]
        hit = [lp for key, lp in logprob_of.items() if text.find(key) <= i < text.find(key) + len(key)]
        out.append((piece, hit[0] if hit else default))
    return out


PLAN = (
    '{"steps": [{"id": "s1", "function": "GraphQuery", "dependencies": [], '
    '"arguments": {"query": "MATCH (s:Supplier {name: \\"Acme\\"}) RETURN s.city"}}]}'
)


def test_only_the_query_text_counts_not_the_json_around_it() -> None:
    spans = query_spans(PLAN)
    assert [PLAN[a:b] for a, b in spans] == ['MATCH (s:Supplier {name: \\"Acme\\"}) RETURN s.city']
    unsure_json = tokens(PLAN, {'"steps"': -6.0, '"function"': -6.0})  # the grammar's part: not evidence
    assert plan_evidence(unsure_json)["query_token_p"] == pytest.approx(math.exp(-0.01), abs=1e-3)
    unsure_query = tokens(PLAN, {"RETURN s.city": -2.0})
    features = plan_evidence(unsure_query)
    assert features["query_token_p"] < 0.9 and features["query_weakest_p"] == pytest.approx(math.exp(-2.0), abs=1e-3)


def test_a_plan_of_two_queries_counts_both() -> None:
    text = '{"a": {"query": "MATCH (n) RETURN n"}, "b": {"query": "MATCH (m) RETURN count(m)"}}'
    assert len(query_spans(text)) == 2
    assert plan_evidence(tokens(text, {"count(m)": -3.0}))["query_weakest_p"] == pytest.approx(math.exp(-3.0), abs=1e-3)


def test_no_log_probabilities_give_no_features_rather_than_zeros() -> None:
    assert plan_evidence(None) == {} and answer_evidence(None) == {} and plan_evidence([]) == {}
    assert plan_evidence(tokens('{"steps": []}', {})) == {}  # a plan with no query
    assert set(answer_evidence([("Acme", -0.1), (" ", -5.0), ("Ltd", -0.2)])) == {"answer_token_p", "answer_weakest_p"}
    assert answer_evidence([("Acme", -0.1), (" ", -5.0)])["answer_weakest_p"] == pytest.approx(math.exp(-0.1), abs=1e-3)


@pytest.mark.parametrize(
    "given",
    [
        None,
        "x",
        {"content": "x"},
        {"content": []},
        {"content": [{"token": "Hi", "logprob": "high"}]},
        {"content": [{"token": "Hi", "logprob": float("nan")}]},
        {"content": [{"token": "Hi", "logprob": 0.5}]},  # a probability above 1
        {"content": [{"token": "Hi", "logprob": True}]},
        {"content": [{"token": "Ho", "logprob": -0.1}]},  # tokens that do not spell the text
        {"content": [None]},
    ],
)
def test_a_servers_odd_log_probabilities_are_no_evidence(given: object) -> None:
    assert token_logprobs(given, "Hi") is None


def test_well_formed_log_probabilities_are_read() -> None:
    given = {"content": [{"token": "H", "logprob": -0.5}, {"token": "i", "logprob": 0}]}
    assert token_logprobs(given, "Hi") == (("H", -0.5), ("i", 0.0))


def test_the_calibrator_reads_a_missing_log_probability_as_typical_not_as_unsure() -> None:
    samples = [
        ({"step_score": 0.9, "query_token_p": 0.95}, True),
        ({"step_score": 0.9, "query_token_p": 0.6}, False),
        ({"step_score": 0.9, "query_token_p": 0.9}, True),
        ({"step_score": 0.9, "query_token_p": 0.5}, False),
        ({"step_score": 0.9}, True),
        ({"step_score": 0.9}, False),
    ]
    calibrator = fit(samples)
    assert calibrator.weights["query_token_p"] > 0
    missing = calibrator.probability({"step_score": 0.9})
    typical = calibrator.probability({"step_score": 0.9, "query_token_p": calibrator.means["query_token_p"]})
    assert missing == pytest.approx(typical)
    assert calibrator.probability({"step_score": 0.9, "query_token_p": 0.0}) < missing
    assert calibrator.unseen({"step_score": 0.9}) == []


def test_a_feature_no_labelled_run_has_gets_no_weight() -> None:
    calibrator = fit([({"step_score": 0.9}, True), ({"step_score": 0.1}, False)])
    assert "answer_token_p" not in calibrator.weights and "answer_token_p" not in calibrator.ranges
    assert calibrator.unseen({"step_score": 0.5, "answer_token_p": 0.7}) == []
