"""Memory manager: each step sees only its dependencies' outputs, within max_context_size."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planning.step_context import TRIM_MARK, format_context, select_context, trim

pytestmark = pytest.mark.unit

STEP_IDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_", min_size=1, max_size=8)
OUTPUTS = st.dictionaries(STEP_IDS, st.text(max_size=3000), max_size=12)


def test_short_text_is_kept_verbatim() -> None:
    """An output that fits is passed on unchanged, with no trim mark."""
    assert trim("12 rows", 7) == "12 rows"
    assert trim("", 0) == ""


def test_long_text_is_cut_and_says_so() -> None:
    """A cut output keeps its beginning and ends with a visible mark, so the reader knows text is missing."""
    text = "x" * 100
    cut = trim(text, 50)
    assert cut.endswith(TRIM_MARK)
    assert cut.startswith("x" * (50 - len(TRIM_MARK)))
    assert len(cut) == 50


@given(st.text(max_size=500), st.integers(min_value=len(TRIM_MARK), max_value=600))
@settings(database=None)
def test_trim_never_exceeds_the_limit(text: str, limit: int) -> None:
    """Trimmed text always fits its limit and is a prefix of the original or marked as cut."""
    cut = trim(text, limit)
    assert len(cut) <= limit
    assert cut == text or (cut.endswith(TRIM_MARK) and text.startswith(cut[: -len(TRIM_MARK)]))


@pytest.mark.parametrize("limit", [0, 5, len(TRIM_MARK) - 1])
def test_trim_never_exceeds_a_limit_shorter_than_the_mark(limit: int) -> None:
    """Even a tiny share of the context (many dependencies, small max_context_size) is respected."""
    assert len(trim("x" * 50, limit)) <= limit


def test_a_step_sees_only_its_own_dependencies() -> None:
    """Outputs of steps the step does not depend on never reach its prompt."""
    outputs = {"a": "alpha", "b": "beta", "c": "gamma"}
    assert select_context(outputs, ["a", "c"], 8192) == {"a": "alpha", "c": "gamma"}


def test_dependencies_without_an_output_are_left_out() -> None:
    """A dependency that produced no usable output is simply absent; no dependencies means no context."""
    assert select_context({"a": "alpha"}, ["a", "skipped"], 8192) == {"a": "alpha"}
    assert select_context({"a": "alpha"}, [], 8192) == {}
    assert select_context({}, ["a"], 8192) == {}


def test_one_large_output_cannot_crowd_out_the_others() -> None:
    """The budget is shared evenly: a huge output is cut to its share and the small one survives whole."""
    outputs = {"big": "B" * 10_000, "small": "s" * 100}
    context = select_context(outputs, ["big", "small"], 1000)
    assert context["small"] == "s" * 100
    assert len(context["big"]) <= 500 and context["big"].endswith(TRIM_MARK)


def test_context_keeps_the_order_of_the_step_dependencies() -> None:
    """The prompt lists dependencies in the order the plan gives them."""
    outputs = {"a": "1", "b": "2", "c": "3"}
    assert list(select_context(outputs, ["c", "a", "b"], 8192)) == ["c", "a", "b"]


@given(OUTPUTS, st.lists(STEP_IDS, max_size=12, unique=True), st.integers(min_value=256, max_value=20_000))
@settings(database=None)
def test_the_context_a_step_sees_never_exceeds_max_context_size(
    outputs: dict[str, str], dependencies: list[str], max_chars: int
) -> None:
    """Whatever earlier steps returned, the outputs a step is given fit in max_context_size together."""
    context = select_context(outputs, dependencies, max_chars)
    assert set(context) <= set(dependencies)
    assert sum(len(text) for text in context.values()) <= max_chars
    for step_id, text in context.items():
        assert text == outputs[step_id] or text.endswith(TRIM_MARK)

    assert sum(len(text) for text in context.values()) <= 256


def test_formatted_context_labels_each_output_with_its_step() -> None:
    """The prompt shows which step produced which output, in order."""
    text = format_context({"s1": "12 rows", "s2": "summary"})
    assert text == "[s1]\n12 rows\n\n[s2]\nsummary"


def test_empty_context_is_shown_as_none() -> None:
    """A step with no earlier results gets an explicit '(none)', not an empty section."""
    assert format_context({}) == "(none)"
