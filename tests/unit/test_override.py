"""Human overrides: who may decide, for which step, with which choice, and how a Pulsar follow-up carries it."""

from __future__ import annotations

import hashlib
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from confidence_core.override import check_override, parse_pulsar_override, token_digest
from contracts.override import Decision, Override, OverrideRejected, OverrideRequest

pytestmark = pytest.mark.unit

STEPS = {"s1", "s2", "s3"}
SECRET = "correct horse battery staple"


def pending(step_id: str = "s2", choices: list[str] | None = None) -> OverrideRequest:
    extra = {"choices": choices} if choices is not None else {}
    return OverrideRequest(step_id=step_id, function="GraphQuery", score=0.3, threshold=0.8,
                           reasoning="empty result", retries=3, timeout_s=600, **extra)


def check(override: Override, waiting: OverrideRequest | None = None, tokens: list[str] | None = None) -> Decision:
    return check_override(override, pending() if waiting is None else waiting, STEPS, tokens or [])


# -- check_override --------------------------------------------------------------------------------


@pytest.mark.parametrize("decision", list(Decision))
def test_each_decision_is_accepted_for_the_waiting_step(decision: Decision) -> None:
    """accept, retry, skip and abort all work for the step that is waiting."""
    assert check(Override(step_id="s2", decision=decision.value)) is decision


def test_retry_may_carry_new_arguments() -> None:
    """A human may fix the query and retry with it."""
    override = Override(step_id="s2", decision="retry", arguments={"query": "MATCH (n) RETURN n"})
    assert check(override) is Decision.RETRY


@pytest.mark.parametrize("decision", ["accept", "skip", "abort"])
def test_arguments_with_any_other_decision_are_rejected(decision: str) -> None:
    """New arguments would be silently unused unless the step runs again, so they are refused."""
    with pytest.raises(OverrideRejected, match="arguments can only be given with the retry decision"):
        check(Override(step_id="s2", decision=decision, arguments={"query": "x"}))


def test_an_override_for_a_step_that_is_not_waiting_is_rejected_with_the_reason() -> None:
    """Deciding for the wrong step is refused and names the step that is actually waiting."""
    with pytest.raises(OverrideRejected, match=r"step s1 is not awaiting an override \(step s2 is\)"):
        check(Override(step_id="s1", decision="accept"))


def test_an_override_when_no_step_is_waiting_is_rejected_with_the_reason() -> None:
    """A late or early override does not affect the run."""
    with pytest.raises(OverrideRejected, match=r"step s1 is not awaiting an override \(no step is\)"):
        check_override(Override(step_id="s1", decision="accept"), None, STEPS, [])


def test_an_unknown_step_is_rejected() -> None:
    """A typo in the step id is reported as such, not as 'not waiting'."""
    with pytest.raises(OverrideRejected, match="unknown step 's9'"):
        check(Override(step_id="s9", decision="accept"))


@pytest.mark.parametrize("decision", ["approve", "", "maybe"])
def test_an_invalid_decision_is_rejected_listing_the_choices(decision: str) -> None:
    """The human learns the valid words; nothing is guessed."""
    with pytest.raises(OverrideRejected, match=r"invalid decision .*; choose one of accept, retry, skip, abort"):
        check(Override(step_id="s2", decision=decision))


def test_a_decision_not_offered_for_this_step_is_rejected() -> None:
    """When the run offers only some choices (e.g. an approval), others are refused with the offered list."""
    approval = pending(choices=["accept", "skip", "abort"])
    with pytest.raises(OverrideRejected, match="retry is not a choice here; choose one of accept, skip, abort"):
        check(Override(step_id="s2", decision="retry"), approval)
    assert check(Override(step_id="s2", decision="skip"), approval) is Decision.SKIP


def test_without_configured_tokens_anyone_may_override() -> None:
    """An empty token list means no token is needed (whoever reaches Temporal may decide)."""
    assert check(Override(step_id="s2", decision="accept", token="anything")) is Decision.ACCEPT


def test_with_tokens_configured_only_a_matching_token_is_accepted() -> None:
    """The token's digest must be one of the configured digests."""
    tokens = [token_digest("other"), token_digest(SECRET)]
    assert check(Override(step_id="s2", decision="accept", token=SECRET), tokens=tokens) is Decision.ACCEPT
    for wrong in ["", "wrong", SECRET.upper(), token_digest(SECRET)]:
        with pytest.raises(OverrideRejected, match="not authorized"):
            check(Override(step_id="s2", decision="accept", token=wrong), tokens=tokens)


def test_an_unauthorized_override_learns_nothing_about_the_run() -> None:
    """Without a valid token the reply is 'not authorized', even for unknown steps or bad decisions."""
    tokens = [token_digest(SECRET)]
    for override in [Override(step_id="s9", decision="accept"), Override(step_id="s1", decision="bogus")]:
        with pytest.raises(OverrideRejected, match=r"^not authorized"):
            check(override, tokens=tokens)


def test_token_digest_is_the_sha256_hex_of_the_token() -> None:
    """Operators configure `sha256sum` output; the digest must match it."""
    assert token_digest("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert token_digest("tökén") == hashlib.sha256("tökén".encode()).hexdigest()


@given(st.text(max_size=30), st.text(max_size=30))
@settings(database=None)
def test_different_tokens_have_different_digests(first: str, second: str) -> None:
    """A token only matches its own digest."""
    assert (token_digest(first) == token_digest(second)) is (first == second)


# -- parse_pulsar_override -------------------------------------------------------------------------


def test_the_short_form_gives_step_decision_and_reason() -> None:
    """'s2 retry the supplier name was misspelled' is a retry of s2 with that reason."""
    override = parse_pulsar_override("  s2 RETRY the supplier name   was misspelled ")
    assert (override.step_id, override.decision, override.reason) == ("s2", "retry", "the supplier name was misspelled")
    assert override.arguments is None and override.token == ""


def test_the_short_form_without_a_reason_is_enough() -> None:
    """Two words are a complete override."""
    assert parse_pulsar_override("s1 accept") == Override(step_id="s1", decision="accept")


@pytest.mark.parametrize("text", ["", "   ", "s1", "accept"])
def test_a_short_form_without_step_and_decision_is_rejected_with_an_example(text: str) -> None:
    """The caller is shown the expected form."""
    with pytest.raises(OverrideRejected, match=re.escape('e.g. "s1 accept"')):
        parse_pulsar_override(text)


def test_the_json_form_carries_arguments_author_and_token() -> None:
    """Retry arguments, the author and the token travel in the JSON form."""
    override = parse_pulsar_override(
        '{"step_id": "s2", "decision": "retry", "arguments": {"query": "MATCH (n) RETURN n"}, '
        '"reason": "broader", "by": "ana", "token": "t0k"}'
    )
    assert override == Override(step_id="s2", decision="retry", arguments={"query": "MATCH (n) RETURN n"},
                                reason="broader", by="ana", token="t0k")


@pytest.mark.parametrize("text", [
    "{not json",
    '{"decision": "accept"}',
    '{"step_id": "s1", "decision": "retry", "arguments": {"limit": 5}}',
    '{"step_id": ["s1"], "decision": "accept"}',
])
def test_a_broken_json_override_is_rejected_with_the_reason(text: str) -> None:
    """Malformed JSON, a missing step id or non-string arguments are refused, never half-applied."""
    with pytest.raises(OverrideRejected, match="the override is not a valid JSON decision"):
        parse_pulsar_override(text)


def test_a_parsed_short_form_override_passes_the_checks() -> None:
    """What a Pulsar caller types is exactly what check_override judges."""
    assert check(parse_pulsar_override("s2 Skip not needed")) is Decision.SKIP


