"""Human overrides: who may decide, for which step, with which choice, and how a Pulsar follow-up carries it."""

from __future__ import annotations

import re

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from pydantic import ValidationError

from contracts.override import Decision, Override, OverrideIdentity, OverrideRejected, OverrideRequest, Role
from contracts.run import AgentSettings
from overrides.checks import check_override, parse_pulsar_override, signed_decision
from overrides.signing import public_key_text, sign, signed_message

pytestmark = pytest.mark.unit

STEPS = {"s1", "s2", "s3"}
WORKFLOW = "agent-1"
REQUESTER = "rita"  # the run's AgentRequest.user: none of the deciders below
CHALLENGE = "run-1/1/s2"
ANA = Ed25519PrivateKey.generate()
BO = Ed25519PrivateKey.generate()
ANA_PUBLIC = public_key_text(ANA)
KEYS = AgentSettings(
    override_keys=[
        OverrideIdentity(name="ana", public_key=ANA_PUBLIC, roles=[Role.REVIEW]),
        OverrideIdentity(name="bo", public_key=public_key_text(BO), roles=[Role.APPROVE, Role.UNDO]),
        OverrideIdentity(name="cy", public_key=public_key_text(Ed25519PrivateKey.generate()), roles=[Role.REVIEW]),
    ]
)


def pending(
    step_id: str = "s2", choices: list[str] | None = None, role: Role = Role.REVIEW, challenge: str = CHALLENGE
) -> OverrideRequest:
    extra = {"choices": choices} if choices is not None else {}
    return OverrideRequest(
        step_id=step_id,
        function="GraphQuery",
        score=0.3,
        threshold=0.8,
        reasoning="empty result",
        retries=3,
        timeout_s=600,
        role=role,
        challenge=challenge,
        **extra,
    )


def check(override: Override, waiting: OverrideRequest | None = None) -> Decision:
    return check_override(
        override, pending() if waiting is None else waiting, STEPS, AgentSettings(), WORKFLOW, REQUESTER
    )


def signed(
    key: Ed25519PrivateKey,
    decision: str,
    by: str = "ana",
    arguments: dict[str, str] | None = None,
    step_id: str = "s2",
    reason: str = "",
) -> Override:
    message = signed_message(WORKFLOW, CHALLENGE, step_id, decision, arguments, reason=reason, by=by)
    return Override(
        step_id=step_id, decision=decision, arguments=arguments, reason=reason, by=by, signature=sign(key, message)
    )


def check_signed(override: Override, waiting: OverrideRequest | None = None, workflow_id: str = WORKFLOW) -> Decision:
    return check_override(override, pending() if waiting is None else waiting, STEPS, KEYS, workflow_id, REQUESTER)


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
        check_override(Override(step_id="s1", decision="accept"), None, STEPS, AgentSettings(), WORKFLOW, REQUESTER)


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


def test_without_configured_keys_anyone_may_override() -> None:
    """No override_keys: whoever reaches Temporal may decide (a development setup), unsigned."""
    assert check(Override(step_id="s2", decision="accept", by="anyone")) is Decision.ACCEPT


# -- signed decisions and roles --------------------------------------------------------------------


def test_a_decision_signed_by_an_identity_with_the_role_is_accepted() -> None:
    assert check_signed(signed(ANA, "accept")) is Decision.ACCEPT
    retry = signed(ANA, "retry", arguments={"query": "MATCH (n) RETURN n"})
    assert check_signed(retry) is Decision.RETRY


@pytest.mark.parametrize(
    ("override", "reason"),
    [
        (Override(step_id="s2", decision="accept"), "no identity given"),
        (Override(step_id="s2", decision="accept", by="mallory"), "'mallory' is not an identity"),
        (Override(step_id="s2", decision="accept", by="ana"), "the signature does not sign this decision"),
        (Override(step_id="s2", decision="accept", by="ana", signature="bm90IGEgc2lnbmF0dXJl"), "does not sign"),
    ],
)
def test_an_unsigned_or_unknown_decision_is_not_authorized(override: Override, reason: str) -> None:
    with pytest.raises(OverrideRejected, match=f"^not authorized: .*{reason}"):
        check_signed(override)


def test_a_signature_approves_only_the_decision_step_arguments_request_and_run_it_was_made_for() -> None:
    """Everything a signature could be reused for from a history fails: another decision, other retry
    arguments, the next request of the same run (new challenge), another run, another identity's name."""
    accept = signed(ANA, "accept")
    with pytest.raises(OverrideRejected, match="does not sign"):
        check_signed(accept.model_copy(update={"decision": "abort"}))
    retry = signed(ANA, "retry", arguments={"query": "MATCH (n) RETURN n"})
    with pytest.raises(OverrideRejected, match="does not sign"):
        check_signed(retry.model_copy(update={"arguments": {"query": "MATCH (n) DETACH DELETE n"}}))
    with pytest.raises(OverrideRejected, match="does not sign"):
        check_signed(accept, waiting=pending(challenge="run-1/2/s2"))
    with pytest.raises(OverrideRejected, match="does not sign"):
        check_signed(accept, workflow_id="agent-other")
    with pytest.raises(OverrideRejected, match="does not sign"):
        check_signed(accept.model_copy(update={"by": "cy"}))


def test_a_signature_covers_the_reason_and_the_author_too() -> None:
    """The reason and `by` reach the run's record and its caller: neither may change after signing, not even
    to an identity configured with the same key; signed_decision (what every signer calls) signs them."""
    abort = signed(ANA, "abort", reason="the source is stale")
    assert check_signed(abort) is Decision.ABORT
    with pytest.raises(OverrideRejected, match="does not sign"):
        check_signed(abort.model_copy(update={"reason": "approved by the CFO"}))
    twin = KEYS.model_copy(
        update={
            "override_keys": [
                *KEYS.override_keys,
                OverrideIdentity(name="ana-lead", public_key=ANA_PUBLIC, roles=[Role.REVIEW]),
            ]
        }
    )
    with pytest.raises(OverrideRejected, match="does not sign"):
        check_override(abort.model_copy(update={"by": "ana-lead"}), pending(), STEPS, twin, WORKFLOW, REQUESTER)
    made = signed_decision(Override(step_id="s2", decision="abort", reason="stale", by="ana"), ANA, WORKFLOW, CHALLENGE)
    assert check_signed(made) is Decision.ABORT
    with pytest.raises(OverrideRejected, match="does not sign"):
        check_signed(made.model_copy(update={"reason": ""}))


def test_roles_decide_who_may_review_steps_and_who_may_approve_actions() -> None:
    approval = pending(role=Role.APPROVE, choices=["accept", "skip", "abort"])
    with pytest.raises(OverrideRejected, match="'ana' may not approve actions \\(role 'approve' needed\\)"):
        check_signed(signed(ANA, "accept"), waiting=approval)
    assert check_signed(signed(BO, "accept", by="bo"), waiting=approval) is Decision.ACCEPT
    with pytest.raises(OverrideRejected, match="'bo' may not decide on low-confidence steps"):
        check_signed(signed(BO, "accept", by="bo"))


def test_an_unknown_identity_learns_nothing_about_the_run() -> None:
    """Without a configured identity the reply is 'not authorized', even for unknown steps or bad decisions."""
    for override in [Override(step_id="s9", decision="accept", by="x"), Override(step_id="s1", decision="bogus")]:
        with pytest.raises(OverrideRejected, match=r"^not authorized"):
            check_signed(override)


def test_identities_need_a_real_public_key_and_a_role() -> None:
    with pytest.raises(ValidationError, match="32-byte Ed25519 public key"):
        OverrideIdentity(name="x", public_key="c2hvcnQ=", roles=[Role.REVIEW])
    with pytest.raises(ValidationError):
        OverrideIdentity(name="x", public_key=ANA_PUBLIC, roles=[])


# -- parse_pulsar_override -------------------------------------------------------------------------


def test_the_short_form_gives_step_decision_and_reason() -> None:
    """'s2 retry the supplier name was misspelled' is a retry of s2 with that reason."""
    override = parse_pulsar_override("  s2 RETRY the supplier name   was misspelled ")
    assert (override.step_id, override.decision, override.reason) == ("s2", "retry", "the supplier name was misspelled")
    assert override.arguments is None and override.signature == ""


def test_the_short_form_without_a_reason_is_enough() -> None:
    """Two words are a complete override."""
    assert parse_pulsar_override("s1 accept") == Override(step_id="s1", decision="accept")


@pytest.mark.parametrize("text", ["", "   ", "s1", "accept"])
def test_a_short_form_without_step_and_decision_is_rejected_with_an_example(text: str) -> None:
    """The caller is shown the expected form."""
    with pytest.raises(OverrideRejected, match=re.escape('e.g. "s1 accept"')):
        parse_pulsar_override(text)


def test_the_json_form_carries_arguments_author_and_signature() -> None:
    """Retry arguments, the author and the signature travel in the JSON form (what `override --print` gives)."""
    override = parse_pulsar_override(
        '{"step_id": "s2", "decision": "retry", "arguments": {"query": "MATCH (n) RETURN n"}, '
        '"reason": "broader", "by": "ana", "signature": "c2ln"}'
    )
    assert override == Override(
        step_id="s2",
        decision="retry",
        arguments={"query": "MATCH (n) RETURN n"},
        reason="broader",
        by="ana",
        signature="c2ln",
    )


@pytest.mark.parametrize(
    "text",
    [
        "{not json",
        '{"decision": "accept"}',
        '{"step_id": "s1", "decision": "retry", "arguments": {"limit": 5}}',
        '{"step_id": ["s1"], "decision": "accept"}',
    ],
)
def test_a_broken_json_override_is_rejected_with_the_reason(text: str) -> None:
    """Malformed JSON, a missing step id or non-string arguments are refused, never half-applied."""
    with pytest.raises(OverrideRejected, match="the override is not a valid JSON decision"):
        parse_pulsar_override(text)


def test_a_parsed_short_form_override_passes_the_checks() -> None:
    """What a Pulsar caller types is exactly what check_override judges."""
    assert check(parse_pulsar_override("s2 Skip not needed")) is Decision.SKIP


@pytest.mark.parametrize("field", ["by", "reason", "step_id", "signature"])
def test_an_oversized_field_is_refused_naming_the_field_and_its_limit(field: str) -> None:
    override = Override(step_id="s2", decision="accept").model_copy(update={field: "x" * 5000})
    with pytest.raises(OverrideRejected, match=f"the override's {field} is 5000 characters long; at most"):
        check(override)


def test_oversized_retry_arguments_are_refused() -> None:
    big = Override(step_id="s2", decision="retry", arguments={"query": "x" * 9000})
    with pytest.raises(OverrideRejected, match="argument 'query' is 9000 characters long"):
        check(big)


def test_retry_after_the_human_retries_are_spent_is_refused_saying_why() -> None:
    spent = pending(choices=["accept", "skip", "abort"]).model_copy(update={"max_human_retries": 3})
    with pytest.raises(OverrideRejected, match=r"retry is no longer a choice for step s2: .* \(max_human_retries\)"):
        check(Override(step_id="s2", decision="retry"), spent)
