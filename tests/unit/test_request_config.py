"""Request-level settings from the legacy `plan` field: safe keys only, clamped, and every change explained."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contracts.run import AgentSettings
from planning.request_config import SAFE_KEYS, apply_request_overrides

pytestmark = pytest.mark.unit

BASE = AgentSettings()
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=5,
)


def apply(plan_field: dict[str, object] | str) -> tuple[AgentSettings, list[str]]:
    text = plan_field if isinstance(plan_field, str) else json.dumps(plan_field)
    return apply_request_overrides(BASE, text)


@pytest.mark.parametrize("plan_field", ["", "   ", "\n"])
def test_an_empty_plan_field_keeps_the_worker_settings_silently(plan_field: str) -> None:
    """Most requests carry no plan field: the worker's settings apply and the caller gets no notes."""
    assert apply(plan_field) == (BASE, [])


@pytest.mark.parametrize(
    ("plan_field", "note"),
    [
        ("{not json", "not JSON"),
        ("[1, 2]", "not a JSON object"),
        ('"max_retries"', "not a JSON object"),
        ("3", "not a JSON object"),
    ],
)
def test_a_plan_field_that_is_not_a_json_object_is_ignored_with_a_note(plan_field: str, note: str) -> None:
    """A malformed plan field never fails the request: settings stay as they were and the caller is told."""
    result, notes = apply(plan_field)
    assert result == BASE
    assert len(notes) == 1 and note in notes[0] and "ignored" in notes[0]


def test_safe_keys_within_bounds_are_applied_without_notes() -> None:
    """A caller may tune its own run: threshold, retries, timeouts, parallelism."""
    result, notes = apply(
        {
            "confidence_threshold": 0.8,
            "max_retries": 1,
            "retry_backoff_factor": 1.5,
            "step_timeout_ms": 5000,
            "max_iterations": 5,
            "max_steps": 3,
            "parallel_execution": True,
            "override_timeout_s": 60,
            "action_max_concurrent": 2,
        }
    )
    assert notes == []
    assert result.confidence_threshold == 0.8 and result.max_retries == 1 and result.retry_backoff_factor == 1.5
    assert result.step_timeout_ms == 5000 and result.max_iterations == 5 and result.max_steps == 3
    assert result.parallel_execution is True and result.override_timeout_s == 60.0
    assert result.action_max_concurrent == 2


def test_the_worker_settings_object_is_not_changed() -> None:
    """One request's overrides never leak into the settings the next request starts from."""
    base = AgentSettings()
    result, _ = apply_request_overrides(base, '{"max_retries": 1, "parallel_execution": true}')
    assert result.max_retries == 1
    assert base == AgentSettings()


def test_keys_not_in_the_request_keep_the_worker_values() -> None:
    """Only the keys the request names change."""
    worker = AgentSettings(max_retries=7, confidence_threshold=0.6)
    result, _ = apply_request_overrides(worker, '{"max_steps": 2}')
    assert (result.max_retries, result.confidence_threshold, result.max_steps) == (7, 0.6, 2)


def test_a_max_retries_above_the_allowed_bound_is_refused_with_a_note() -> None:
    """A request cannot buy itself more retries than the request bound (5); the caller learns why."""
    result, notes = apply({"max_retries": 50})
    assert result.max_retries == 5
    assert notes == ["max_retries 50 clamped to 5"]


@pytest.mark.parametrize(
    ("key", "value", "clamped"),
    [
        ("confidence_threshold", 1.0, 0.99),
        ("confidence_threshold", 0.0, 0.1),
        ("max_retries", -3, 0),
        ("retry_backoff_factor", 0.5, 1.0),
        ("step_timeout_ms", 10, 1000),
        ("step_timeout_ms", 10_000_000, 120_000),
        ("max_iterations", 0, 1),
        ("max_steps", 99, 12),
        ("override_timeout_s", 1, 10),
        ("action_max_concurrent", 10_000, 100),
    ],
)
def test_out_of_range_numbers_are_clamped_to_the_nearest_bound_with_a_note(
    key: str, value: float, clamped: float
) -> None:
    """Numbers outside the request bounds are pulled to the nearest bound, never applied as sent."""
    result, notes = apply({key: value})
    assert getattr(result, key) == clamped
    assert len(notes) == 1 and notes[0].startswith(f"{key} {value} clamped to")


def test_integer_settings_stay_integers() -> None:
    """Counts and milliseconds are whole numbers even when JSON sends them as 3.0."""
    result, _ = apply({"max_retries": 3.0, "step_timeout_ms": 2000.0})
    assert result.max_retries == 3 and isinstance(result.max_retries, int)
    assert result.step_timeout_ms == 2000 and isinstance(result.step_timeout_ms, int)


def test_a_fractional_value_for_an_integer_setting_is_not_changed_silently() -> None:
    """Every value that is not applied as sent is explained to the caller."""
    result, notes = apply({"max_retries": 2.5})
    assert result.max_retries == 2.5 or notes


@pytest.mark.parametrize(
    "key",
    [
        "action_confidence_threshold",
        "action_approval_above",
        "override_enabled",
        "override_keys",
        "tool_thresholds",
        "max_context_size",
        "audit_enabled",
    ],
)
def test_settings_outside_the_safe_list_are_ignored_with_a_note(key: str) -> None:
    """A request cannot lower its own safety checks (approval bar, override keys, audit) or resize the worker."""
    hostile = {
        "action_confidence_threshold": 0.0,
        "action_approval_above": 1_000_000,
        "override_enabled": False,
        "override_keys": [],
        "tool_thresholds": {"GraphQuery": 0.0},
        "max_context_size": 10**6,
        "audit_enabled": False,
    }
    result, notes = apply({key: hostile[key]})
    assert result == BASE
    assert notes == [f"ignored {key!r}: not a request-level setting"]


@pytest.mark.parametrize("value", ["0.8", None, [0.8], {"v": 0.8}, True, False])
def test_a_number_setting_given_a_non_number_is_ignored_with_a_note(value: object) -> None:
    """Strings, nulls, lists and booleans are not numbers: true is not 1 retry."""
    result, notes = apply({"max_retries": value})
    assert result == BASE
    assert notes == ["ignored 'max_retries': expected a number"]


@pytest.mark.parametrize("value", [1, 0, "true", None])
def test_a_switch_given_a_non_boolean_is_ignored_with_a_note(value: object) -> None:
    """parallel_execution takes only true or false; 1 or "true" are refused, not guessed."""
    result, notes = apply({"parallel_execution": value})
    assert result.parallel_execution is BASE.parallel_execution
    assert notes == ["ignored 'parallel_execution': expected true or false"]


def test_nan_is_refused_and_infinity_is_clamped() -> None:
    """Python's JSON reader accepts NaN and Infinity; neither reaches the settings as such."""
    result, notes = apply('{"confidence_threshold": NaN, "max_retries": Infinity}')
    assert result.confidence_threshold == BASE.confidence_threshold
    assert result.max_retries == 5
    assert notes == ["ignored 'confidence_threshold': expected a number", "max_retries inf clamped to 5"]


def test_good_keys_apply_even_when_others_are_refused() -> None:
    """One bad key does not discard the rest; each refusal gets its own note, in request order."""
    result, notes = apply({"bogus": 1, "max_retries": 2, "max_steps": "many", "confidence_threshold": 0.9})
    assert result.max_retries == 2 and result.confidence_threshold == 0.9 and result.max_steps == BASE.max_steps
    assert notes == ["ignored 'bogus': not a request-level setting", "ignored 'max_steps': expected a number"]


@given(st.dictionaries(st.sampled_from(sorted(SAFE_KEYS)) | st.text(max_size=12), JSON_VALUES, max_size=8))
@settings(database=None, max_examples=60)
def test_whatever_a_request_sends_the_settings_stay_valid(requested: dict[str, object]) -> None:
    """No plan field can produce settings outside AgentSettings' own bounds or outside the request bounds."""
    result, notes = apply(requested)
    AgentSettings.model_validate(result.model_dump())  # raises if any bound is broken
    for key, bounds in SAFE_KEYS.items():
        value = getattr(result, key)
        if bounds is None:
            assert isinstance(value, bool)
        else:
            assert not math.isnan(value)
            assert bounds[0] <= value <= bounds[1]
    for key in set(requested) - set(SAFE_KEYS):
        assert f"ignored {key!r}: not a request-level setting" in notes


@pytest.mark.parametrize(
    ("plan_field", "note"),
    [
        ("x" * 5000, "the request's plan field is 5000 characters; the limit is 4096"),
        ("[" * 4000, "nested too deeply to read"),
    ],
)
def test_a_plan_field_workflow_code_cannot_read_is_ignored_with_a_note(plan_field: str, note: str) -> None:
    """A field too long, or JSON too deep for the reader: a note, never an exception (in workflow code, one
    fails the workflow task again on every retry)."""
    result, notes = apply(plan_field)
    assert result == BASE
    assert len(notes) == 1 and note in notes[0] and "ignored" in notes[0]


def test_a_number_too_long_for_a_float_is_clamped_and_not_quoted() -> None:
    result, notes = apply('{"max_retries": 1' + "0" * 400 + ', "confidence_threshold": -1' + "0" * 400 + "}")
    assert (result.max_retries, result.confidence_threshold) == (5, 0.1)
    assert notes == [
        "max_retries a number too long to show clamped to 5",
        "confidence_threshold a number too long to show clamped to 0.1",
    ]


def test_notes_quote_a_key_briefly_and_are_bounded_in_number() -> None:
    _, notes = apply({"k" * 1000: 1})
    assert notes == [f"ignored {'k' * 64!r}… (1000 characters): not a request-level setting"]
    _, notes = apply({f"key{i}": 1 for i in range(100)})
    assert len(notes) == 13 and notes[-1] == "and 88 more notes like these"
