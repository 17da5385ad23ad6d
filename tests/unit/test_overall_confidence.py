"""The run's overall confidence (weakest link times coverage) and the grounding check behind text scores."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from confidence.overall import content_tokens, grounding_ratio, overall_confidence

pytestmark = pytest.mark.unit

SCORES = st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=12)
ROUNDING = 0.005  # the overall score is reported with two decimals


# -- overall_confidence ----------------------------------------------------------------------------


def test_a_fully_covered_plan_scores_its_weakest_step() -> None:
    """An answer is no stronger than its weakest supporting evidence."""
    assert overall_confidence([0.9, 0.8, 0.95], planned_steps=3) == (0.8, "weakest supporting step 0.80")


def test_missing_steps_scale_the_score_down_and_say_so() -> None:
    """When part of the plan produced nothing, the score drops by the share missing and the reason shows it."""
    score, why = overall_confidence([0.9, 0.8], planned_steps=4)
    assert score == 0.4
    assert why == "weakest supporting step 0.80 x 2/4 steps usable"


@pytest.mark.parametrize(("scores", "planned"), [([], 3), ([], 0), ([0.9], 0), ([0.9], -1)])
def test_no_usable_result_scores_zero_with_a_reason(scores: list[float], planned: int) -> None:
    """A run with nothing usable reports 0.0, not an error or a division by zero."""
    assert overall_confidence(scores, planned) == (0.0, "no step produced a usable result")


@given(SCORES, st.integers(min_value=0, max_value=12))
@settings(database=None, max_examples=50)
def test_overall_confidence_stays_between_zero_and_the_weakest_step(scores: list[float], missing: int) -> None:
    """The overall score is a valid confidence and never above the weakest usable step."""
    score, why = overall_confidence(scores, len(scores) + missing)
    assert 0.0 <= score <= 1.0
    assert score <= min(scores) + ROUNDING
    assert why


@given(SCORES, st.floats(min_value=0.0, max_value=1.0), st.integers(min_value=0, max_value=5))
@settings(database=None, max_examples=50)
def test_another_usable_step_never_raises_the_score_above_its_own(
    scores: list[float], extra: float, missing: int
) -> None:
    """A weak extra result pulls the overall score down to it at most; it never lifts the score past itself."""
    planned = len(scores) + 1 + missing
    score, _ = overall_confidence([*scores, extra], planned)
    assert score <= extra + ROUNDING


@given(SCORES, st.integers(min_value=1, max_value=5))
@settings(database=None, max_examples=50)
def test_losing_a_step_never_raises_the_overall_score(scores: list[float], missing: int) -> None:
    """Fewer usable steps for the same plan means the same or lower confidence."""
    planned = len(scores) + missing
    full, _ = overall_confidence(scores, len(scores))
    partial, _ = overall_confidence(scores, planned)
    assert partial <= full


# -- content_tokens and grounding_ratio ------------------------------------------------------------


def test_content_tokens_are_names_and_figures_in_lower_case() -> None:
    """Short words and common filler are not claims; names and numbers are."""
    assert content_tokens("Acme Corp ships 1200 bolts at 3.5 EUR, which is the answer") == {
        "acme",
        "corp",
        "ships",
        "1200",
        "bolts",
        "3.5",
    }


def test_a_fully_supported_output_is_fully_grounded() -> None:
    """Every name and figure in the output appears in the evidence: ratio 1, regardless of case or order."""
    evidence = '[{"supplier": "Acme Corp", "product": "Bolts", "qty": 1200}]'
    assert grounding_ratio("BOLTS from ACME CORP: 1200", evidence) == 1.0
    assert grounding_ratio("1200 Bolts, Acme Corp", evidence) == 1.0


def test_an_invented_figure_lowers_the_grounding() -> None:
    """A number the evidence does not contain counts against the output."""
    evidence = "Acme Corp ships 1200 bolts"
    assert grounding_ratio("Acme Corp ships 1500 bolts", evidence) == pytest.approx(4 / 5)
    assert grounding_ratio("Globex sells 99 widgets", evidence) == 0.0


@pytest.mark.parametrize(
    ("output", "evidence"),
    [
        ("Acme ships bolts", ""),
        ("Acme ships bolts", "   \n"),
        ("yes, it is", "Acme ships bolts"),
        ("", "Acme ships bolts"),
    ],
)
def test_grounding_is_unknown_without_claims_or_evidence(output: str, evidence: str) -> None:
    """No evidence to check against, or nothing checkable in the output, gives None rather than a fake ratio."""
    assert grounding_ratio(output, evidence) is None


@given(st.text(max_size=200), st.text(max_size=200))
@settings(database=None, max_examples=50)
def test_grounding_is_a_share_between_zero_and_one(output: str, evidence: str) -> None:
    """Whenever a ratio is given it is a share of the output's claims."""
    ratio = grounding_ratio(output, evidence)
    assert ratio is None or 0.0 <= ratio <= 1.0


@given(st.text(max_size=200))
@settings(database=None, max_examples=50)
def test_an_output_is_fully_grounded_in_itself(output: str) -> None:
    """Quoting the evidence verbatim is never penalised."""
    assert grounding_ratio(output, output) in (None, 1.0)
