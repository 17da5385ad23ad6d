"""The words of the answer's confidence line: each states evidence the answer has, with the figure the run
measured, never the absence of something ("no empty result") and never a feature's internal name."""

from __future__ import annotations

import math
import re

import pytest

from confidence.evidence import FEATURES, run_evidence
from confidence.evidence_words import WORDS, Figures, StepFigures, phrase
from contracts.plan import ConfidenceMetrics

pytestmark = pytest.mark.unit


def measured(
    *steps: ConfidenceMetrics, planned: int | None = None, verification: str = "", ranked_rows: int = 0
) -> tuple[dict[str, float], Figures]:
    """An answer's features and figures from its supporting steps, as the workflow and synthesis make them."""
    features = run_evidence(list(steps), planned or len(steps), verification)
    return features, Figures(
        steps=[StepFigures(m.signals, m.names, m.retry_count) for m in steps], ranked_rows=ranked_rows
    )


def rows(count: int, **signals: float) -> ConfidenceMetrics:
    names = {k: v for k, v in signals.items() if isinstance(v, list)}
    numbers = {k: float(len(v)) if isinstance(v, list) else v for k, v in signals.items()}
    return ConfidenceMetrics(score=0.9, signals={"rows": float(count), **numbers}, names=names)


CASES = [
    ("row_count", measured(rows(12)), "the query returned 12 rows"),
    ("row_count", measured(rows(1)), "the query returned 1 row"),
    ("row_count", measured(rows(3), rows(9), planned=2), "the queries returned 12 rows in all"),
    ("empty_result", measured(rows(0)), "the query returned 0 rows"),
    ("empty_result", measured(rows(0), rows(0)), "the queries returned 0 rows"),
    ("disagreement", measured(rows(5, candidates=3.0, agreement=2 / 3)), "only 2 of 3 candidate queries agreed"),
    (
        "unused_name",
        measured(rows(7, unused_names=["Globex Supply"])),
        "the query ignores the question's name 'Globex Supply'",
    ),
    (
        "absent_name",
        measured(rows(0, absent_names=["Zyxwv Holdings"])),
        "the question's name 'Zyxwv Holdings' is nowhere in the graph",
    ),
    ("absent_name", measured(rows(0, absent_names=2.0)), "2 names in the question are nowhere in the graph"),
    (
        "unmatched_value",
        measured(rows(0, unmatched_values=["Acme Corp"])),
        "the query matched on the value 'Acme Corp' that the graph holds nowhere",
    ),
    (
        "retries",
        measured(ConfidenceMetrics(score=0.85, retry_count=1, signals={"rows": 2.0})),
        "the step needed 1 retry",
    ),
    ("coverage", measured(rows(2), rows(3), planned=3), "2 of 3 planned steps gave a usable result"),
    ("coverage", measured(rows(2)), "the one planned step gave a usable result"),
    ("multi_step", measured(rows(2), rows(3), planned=3), "the plan took 3 steps"),
    ("step_score", measured(ConfidenceMetrics(score=0.85, signals={"rows": 2.0})), "the step scored 0.85"),
    ("hops", measured(rows(4, hops=2.0)), "the query walks 2 relationships"),
    ("hops", measured(rows(4, hops=1.0), rows(2, hops=3.0)), "a query walks 3 relationships"),
    ("aggregates", measured(rows(1, aggregates=1.0), rows(2)), "a query aggregates its rows"),
    ("unused_name", measured(rows(7, unused_names=["A" * 100])), f"the question's name '{'A' * 57}...'"),
    (
        "ungrounded_text",
        measured(ConfidenceMetrics(score=0.6, signals={"grounded_share": 0.6})),
        "only 60% of a generated text's names and figures are in its evidence",
    ),
]


@pytest.mark.parametrize(("name", "run", "words"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_each_phrase_states_the_evidence_with_the_runs_figure(
    name: str, run: tuple[dict[str, float], Figures], words: str
) -> None:
    features, figures = run
    assert features[name] > 0  # the evidence is present
    assert words in phrase(name, features, figures)


def test_a_ranked_answer_says_how_many_rows_the_query_ranked() -> None:
    features, figures = measured(rows(5), ranked_rows=5)
    features["ranked_first"] = 1.0
    assert phrase("ranked_first", features, figures) == "the answer names the first of the 5 rows the query ranked"


def test_without_the_runs_figures_the_features_own_values_give_them() -> None:
    """The benchmark restates confidences offline from the features alone."""
    features, _ = measured(rows(12), ConfidenceMetrics(score=0.9, retry_count=2, signals={"rows": 0.0}), planned=2)
    assert phrase("row_count", features) == "the query returned 12 rows"
    assert phrase("retries", features) == "the steps needed 2 retries"


@pytest.mark.parametrize("name", sorted(WORDS))
def test_no_phrase_speaks_of_an_absence_or_by_a_features_name(name: str) -> None:
    every_signal = {
        "rows": 3.0,
        "absent_names": 1.0,
        "unmatched_values": 1.0,
        "truncated": 1.0,
        "unasked": 1.0,
        "unused_names": 1.0,
        "candidates": 3.0,
        "agreement": 1 / 3,
        "aggregates": 1.0,
        "hops": 2.0,
    }
    figures = Figures(steps=[StepFigures(every_signal, {"unused_names": ["Globex Supply"]}, retries=1)], ranked_rows=3)
    for with_figures in (figures, None):
        for value in (0.01, 0.5, 1.0):
            words = phrase(name, {"coverage": 1.0, name: value}, with_figures)
            assert words and not re.search(r"\bno\b|\bnot any\b|\bnone\b", words, re.IGNORECASE), words
            assert "_" not in words and not any(other in words for other in FEATURES if "_" in other), words
            assert words != FEATURES[name], f"{name} has words of its own"


def test_a_feature_without_words_of_its_own_reads_as_its_features_phrase(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(FEATURES, "query_logprob", "how sure the model was of the query's words")
    assert phrase("query_logprob", {"query_logprob": 0.4}) == "how sure the model was of the query's words"
    assert phrase("shoe_size", {"shoe_size": 1.0}) == "other evidence"  # never the internal name
    assert phrase("row_count", {"row_count": math.nan}) == FEATURES["row_count"]
