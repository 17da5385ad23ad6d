"""The labelled benchmark's judge and metrics (bench/kgqa): an answer is right only when it states the gold
answer, a non-answer or an invented entity never is, and the metrics are the textbook ones."""

from __future__ import annotations

import importlib.util
import itertools
import random
from collections import Counter

import pytest

from bench.kgqa import questions as g
from bench.kgqa.metrics import Judged, auroc, compute, expected_calibration_error, judged, percentile
from bench.kgqa.results import kept_answers, rejudge
from bench.kgqa.scoring import echoes, extract_numbers, find_names, is_correct, split_answer, without_question_names

pytestmark = pytest.mark.unit

LINE = "\n\nConfidence: 0.90 - weakest supporting step 0.90; s1: Query returned 3 row(s)"
SUPPLIERS = ["Acme Industrial", "Globex Supply", "Umbrella Logistics", "Initech Components"]


# the answer and its confidence ---------------------------------------------------------------------------
def test_the_confidence_line_is_cut_off_and_read() -> None:
    assert split_answer("Acme Industrial has 135 orders." + LINE) == ("Acme Industrial has 135 orders.", 0.9)
    assert split_answer("Paris.\n\nConfidence: 0.42 (low) - s1: ...")[1] == 0.42
    assert split_answer("Hi.\n\nConfidence: not scored - a direct answer") == ("Hi.", None)
    assert split_answer("no line at all") == ("no line at all", None)
    assert split_answer("") == ("", None)


def test_figures_in_the_confidence_line_do_not_count() -> None:
    answer = "There are 12 such orders.\n\nConfidence: 0.85 - s1: Query returned 85 row(s)"
    assert not is_correct(answer, g.count(85))
    assert is_correct(answer, g.count(12))


# numbers -------------------------------------------------------------------------------------------------
def test_counts_must_match_exactly() -> None:
    assert is_correct("Globex Supply has 56 purchase orders." + LINE, g.count(56))
    assert not is_correct("Globex Supply has 57 purchase orders." + LINE, g.count(56))
    assert is_correct("There are three of them.", g.count(3))


def test_amounts_match_within_a_small_relative_tolerance_in_any_usual_spelling() -> None:
    gold = g.number(1695140.76)
    for answer in ("The total is $1,695,140.76.", "It comes to 1695140.8 USD.", "About 1.695 million."):
        assert is_correct(answer, gold), answer
    for answer in ("About 1.6 million.", "The total is 169,514.08.", "1,795,140.76"):
        assert not is_correct(answer, gold), answer


def test_identifiers_and_dates_are_not_figures() -> None:
    assert extract_numbers("PO-20240056 of SKU-0003 was placed on 2024-03-05 for 1,234.50") == [1234.5]
    assert not is_correct("Order PO-20240056 is the one.", g.count(56))


def test_number_words_only_count_when_no_digits_are_given() -> None:
    assert extract_numbers("one of them has 4") == [4.0]
    assert extract_numbers("Two suppliers.") == [2.0]


# names ---------------------------------------------------------------------------------------------------
def test_every_expected_name_must_be_there_in_any_case() -> None:
    gold = g.names(["Sensor Pro", "Relay Standard"], distractors=["Valve Pro", "Hinge Standard"])
    assert is_correct("It supplies relay standard and SENSOR PRO." + LINE, gold)
    assert not is_correct("It supplies Sensor Pro." + LINE, gold)


def test_naming_something_outside_the_answer_set_is_wrong() -> None:
    gold = g.names(["Sensor Pro"], distractors=["Valve Pro", "Hinge Standard"])
    assert not is_correct("It supplies Sensor Pro, Valve Pro and Hinge Standard.", gold)


def test_accepted_spellings_and_accents() -> None:
    gold = g.name(["Hamburg Distribution Center", "WH-01", "Hamburg"], distractors=["Lyon Distribution Center"])
    assert is_correct("It goes to WH-01.", gold)
    assert is_correct("Delivered to the warehouse in Hamburg.", gold)
    assert is_correct("São Tomé and Príncipe", g.name("Sao Tome and Principe"))


def test_longer_names_are_matched_first_and_only_whole_words_count() -> None:
    assert find_names("It borders Papua New Guinea.", ["Guinea", "Papua New Guinea"]) == {"Papua New Guinea"}
    assert find_names("Nigeria and Niger", ["Niger", "Nigeria"]) == {"Niger", "Nigeria"}
    assert find_names("It borders Nigeria.", ["Niger"]) == set()
    gold = g.names(["Papua New Guinea"], distractors=["Guinea"])
    assert is_correct("Indonesia's neighbour is Papua New Guinea.", gold)


def test_codes_match_only_in_upper_case() -> None:
    gold = g.names(["EUR"], distractors=["ALL", "TOP"])
    assert is_correct("All of its neighbours use EUR, the top currency there.", gold)
    assert not is_correct("They use EUR and ALL.", gold)
    assert not is_correct("They use eur.", gold)


def test_any_match_needs_one_of_the_names() -> None:
    gold = g.names(["Austria", "Italy"], match="any", distractors=["Germany"])
    assert is_correct("Austria borders both.", gold)
    assert not is_correct("Germany borders both.", gold)


def test_a_ranking_needs_its_k_names_before_any_other() -> None:
    gold = g.topk(["Acme Industrial", "Globex Supply"], SUPPLIERS)
    assert is_correct("Acme Industrial (135) and Globex Supply (56), then Umbrella Logistics (31).", gold)
    assert not is_correct("Acme Industrial and Umbrella Logistics.", gold)
    assert not is_correct("Umbrella Logistics, Acme Industrial and Globex Supply.", gold)
    top1 = g.topk(["Canada"], ["United States", "Greenland"])
    assert is_correct("Canada is larger than the United States.", top1)
    assert not is_correct("The United States, then Canada.", top1)


def test_dates_in_the_usual_spellings() -> None:
    gold = g.date("2024-03-05")
    for answer in ("Due on 2024-03-05.", "Due March 5, 2024.", "due 5th March 2024", "due 03/05/2024", "Mar 05 2024"):
        assert is_correct(answer, gold), answer
    assert not is_correct("Due on 2024-03-06.", gold)
    assert not is_correct("Due in March 2024.", gold)


def test_every_part_of_a_compound_gold() -> None:
    gold = g.both(g.name("PO-20240242"), g.name("Cyberdyne Electronics", SUPPLIERS))
    assert is_correct("Payment PAY-00242 settles the invoice of PO-20240242, issued to Cyberdyne Electronics.", gold)
    assert not is_correct("It was issued to Cyberdyne Electronics.", gold)


# non-answers and things that do not exist --------------------------------------------------------------
def test_a_non_answer_is_wrong_even_when_its_notes_hold_the_figure() -> None:
    answer = (
        "I could not establish an answer with enough confidence. What is known: s1: Query returned 56 "
        "row(s); Globex Supply.\n\nConfidence: 0.00 (low) - no step produced a usable result"
    )
    assert not is_correct(answer, g.count(56))
    assert not is_correct(answer, g.name("Globex Supply"))
    assert not is_correct("I don't know, maybe 56.", g.count(56))
    assert not is_correct("", g.count(56))
    assert not is_correct(None, g.count(56))


@pytest.mark.parametrize(
    "answer",
    [
        "There is no supplier named Zephyr Components in the knowledge graph.",
        "Zephyr Components does not exist.",
        "Zephyr Components doesn't exist in our data.",
        "I couldn't find any supplier called Zephyr Components.",
        "The knowledge graph has nothing named 'Zephyr Components', so there is no such entity to answer about.",
        "No records were found for Zephyr Components.",
        "The supplier Zephyr Components is absent from the graph.",
        "No supplier called Zephyr Components was found.",
        "No purchase order with that number exists.",
    ],
)
def test_saying_that_it_does_not_exist_is_right(answer: str) -> None:
    assert is_correct(answer + LINE, g.absent("Zephyr Components", forbid_numbers=True))


@pytest.mark.parametrize(
    "answer",
    [
        "Zephyr Components has a rating of 4.5.",
        "Zephyr Components does not exist; the closest supplier has a rating of 4.5.",
        "I could not establish an answer with enough confidence. What is known: s1: it does not exist here.",
        "The rating is unclear.",
    ],
)
def test_an_invented_value_or_a_non_answer_about_a_missing_entity_is_wrong(answer: str) -> None:
    assert not is_correct(answer + LINE, g.absent("Zephyr Components", forbid_numbers=True))


def test_a_real_entity_offered_in_place_of_the_missing_one_is_wrong() -> None:
    gold = g.absent("Zephyr Components", distractors=["Sensor Pro", "Valve Pro"])
    assert is_correct("Zephyr Components was not found, so it supplies nothing we know of.", gold)
    assert not is_correct("Zephyr Components was not found; Acme supplies Sensor Pro.", gold)
    pattern = {**g.absent("INV-09999"), "forbid_patterns": [r"\bPO-\d+"]}
    assert not is_correct("INV-09999 does not exist, but INV-00012 bills PO-20240012.", pattern)
    assert is_correct("There is no invoice INV-09999.", pattern)


# how the question sets are built -----------------------------------------------------------------------
def test_an_answer_cannot_pass_by_repeating_the_question() -> None:
    assert echoes("How many orders are worth more than 5,000?", g.count(5000))
    assert not echoes("How many orders are worth more than 5,000?", g.count(12))
    assert echoes("What is the capital of Djibouti?", g.name("Djibouti"))
    gold = without_question_names("Which countries border France?", g.names(["Spain"], distractors=["France", "Peru"]))
    assert gold["distractors"] == ["Peru"]


def test_the_split_is_stable_and_about_forty_sixty() -> None:
    ids = [f"proc-count-{i:03d}" for i in range(1000)]
    splits = [g.split_of(i) for i in ids]
    assert splits == [g.split_of(i) for i in ids]
    assert 0.35 < splits.count("calibration") / len(splits) < 0.45


def test_the_procurement_set_is_deterministic_and_covers_every_category() -> None:
    from bench.kgqa import procurement

    first, second = procurement.questions(), procurement.questions()
    assert [(q.id, q.text, q.gold) for q in first] == [(q.id, q.text, q.gold) for q in second]
    counts = Counter(q.category for q in first)
    assert len(first) >= 150 and counts["non-existent"] >= 20 and set(counts) == set(procurement.QUOTAS)
    assert len({q.text for q in first}) == len(first)
    assert {q.category for q in g.select(first, "heldout", 8)} == set(procurement.QUOTAS)
    assert not set(q.id for q in g.select(first, "heldout")) & set(q.id for q in g.select(first, "calibration"))


@pytest.mark.skipif(importlib.util.find_spec("countryinfo") is None, reason="countryinfo (the second dataset) absent")
def test_the_countries_set_has_sixty_questions_or_more() -> None:
    from bench.kgqa import countries

    qs = countries.questions()
    counts = Counter(q.category for q in qs)
    assert len(qs) >= 60 and set(counts) == set(countries.QUOTAS) and counts["non-existent"] >= 8


# metrics -------------------------------------------------------------------------------------------------
def _pairwise_auroc(scores: list[float], labels: list[bool]) -> float:
    right = [s for s, lb in zip(scores, labels, strict=True) if lb]
    wrong = [s for s, lb in zip(scores, labels, strict=True) if not lb]
    pairs = list(itertools.product(right, wrong))
    return sum(1.0 if p > n else 0.5 if p == n else 0.0 for p, n in pairs) / len(pairs)


def test_auroc_is_the_mann_whitney_statistic_with_ties_counted_half() -> None:
    assert auroc([0.9, 0.8, 0.3, 0.1], [True, True, False, False]) == 1.0
    assert auroc([0.1, 0.3, 0.8, 0.9], [True, True, False, False]) == 0.0
    assert auroc([0.5, 0.5, 0.5, 0.5], [True, False, True, False]) == 0.5
    assert auroc([0.9, 0.5], [True, True]) is None
    rng = random.Random(7)
    for _ in range(50):
        scores = [rng.choice([0.0, 0.3, 0.5, 0.85, 0.9]) for _ in range(12)]
        labels = [rng.random() < 0.5 for _ in range(12)]
        if 0 < sum(labels) < len(labels):
            assert auroc(scores, labels) == pytest.approx(_pairwise_auroc(scores, labels))


def test_expected_calibration_error_over_ten_equal_bins() -> None:
    assert expected_calibration_error([0.9, 0.9, 0.1, 0.1], [True, False, False, False]) == pytest.approx(0.25)
    assert expected_calibration_error([1.0, 0.95], [True, True]) == pytest.approx(0.025)  # 1.0 is in the last bin
    assert expected_calibration_error([], []) is None


def test_percentiles_interpolate() -> None:
    assert percentile([10, 20, 30, 40], 0.5) == 25
    assert percentile([1.0] * 19 + [100.0], 0.95) == pytest.approx(5.95)
    assert percentile([], 0.5) is None


def test_a_missing_confidence_counts_as_zero_and_an_error_as_wrong() -> None:
    rows = [
        Judged("count", True, 0.9, 10),
        Judged("count", False, 0.85, 20),
        Judged("lookup", True, None, 30),
        Judged("lookup", True, 0.9, 40, error="timeout: no final answer"),
        Judged("path", True, 0.5, 50, asked_human=True),
    ]
    m = compute(rows)
    assert m.n == 5 and m.accuracy == pytest.approx(3 / 5) and m.errors == 1
    assert m.per_category == {"count": (2, 0.5), "lookup": (2, 0.5), "path": (1, 1.0)}
    assert m.high_confidence_n == 2 and m.high_confidence_accuracy == 0.5  # the errored 0.9 counts as 0.0
    assert m.no_override_share == pytest.approx(3 / 5)
    assert m.auroc == pytest.approx(_pairwise_auroc([0.9, 0.85, 0.0, 0.0, 0.5], [True, False, True, False, True]))
    assert m.latency_p50 == 30


def test_scoring_a_results_file_judges_the_answers_again() -> None:
    record = {
        "id": "q1",
        "category": "count",
        "gold": g.count(56),
        "answer": "It has 56 orders." + LINE,
        "correct": False,
        "confidence": None,
        "seconds": 3.0,
        "asked_human": False,
        "error": None,
    }
    fresh, changed = rejudge([record])
    assert changed == 1 and fresh[0]["correct"] is True and fresh[0]["confidence"] == 0.9
    assert judged(fresh[0]).right


def test_a_resumed_run_keeps_its_answers_and_drops_a_line_cut_off_mid_write(tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "results.jsonl"
    out.write_text(
        '{"id": "q1", "correct": true}\n\n{"id": "q2", "correct": false}\n{"id": "q3", "corr', encoding="utf-8"
    )
    assert kept_answers(out) == {"q1", "q2"}  # q3 was being written when the run was killed: asked again
    assert out.read_text(encoding="utf-8").splitlines() == [
        '{"id": "q1", "correct": true}',
        '{"id": "q2", "correct": false}',
    ]
    out.write_text('{"id": "q1"}', encoding="utf-8")  # whole, but without its newline
    assert kept_answers(out) == {"q1"} and out.read_text(encoding="utf-8") == '{"id": "q1"}\n'
    out.write_text('{"id": "q1"}\n{"broken\n{"id": "q2"}\n', encoding="utf-8")
    with pytest.raises(ValueError):  # damage inside the file is not a cut-off: nothing is dropped
        kept_answers(out)
