"""Who may start an action and who may approve it (overrides/action_gate.py, override.py): pure rules."""

from __future__ import annotations

import pytest

from contracts.override import Override, OverrideIdentity, OverrideRejected, OverrideRequest, Role
from contracts.run import AgentSettings
from overrides.action_gate import action_refusal
from overrides.checks import check_override
from overrides.signing import new_key_pair

APPROVAL = OverrideRequest(
    step_id="approve",
    function="PurchaseOrder.makePayment",
    score=0.95,
    threshold=0.9,
    reasoning="approval needed",
    retries=0,
    choices=["accept", "skip", "abort"],
    timeout_s=60,
    role=Role.APPROVE,
)
OPEN = AgentSettings(open_actions=True)


def decide(
    decision: str, by: str, requester: str, settings: AgentSettings = OPEN, pending: OverrideRequest = APPROVAL
) -> str:
    override = Override(step_id=pending.step_id, decision=decision, by=by)
    return check_override(override, pending, {pending.step_id}, settings, "agent-x", requester).value


def test_the_requester_may_not_approve_its_own_action_but_may_withdraw_it() -> None:
    for by in ("mallory", "", " mallory "):
        with pytest.raises(OverrideRejected, match="may not approve its own request"):
            decide("accept", by, "mallory")
    with pytest.raises(OverrideRejected, match="an unnamed requester"):
        decide("accept", "", "")
    assert decide("accept", "ops", "mallory") == "accept"
    assert decide("skip", "mallory", "mallory") == "skip" and decide("abort", "", "mallory") == "abort"
    assert decide("accept", "mallory", "mallory", AgentSettings(open_actions=True, allow_self_approval=True))


def test_a_low_confidence_step_is_still_the_requesters_to_accept() -> None:
    review = APPROVAL.model_copy(update={"step_id": "s1", "role": Role.REVIEW, "choices": ["accept", "skip"]})
    assert decide("accept", "mallory", "mallory", pending=review) == "accept"


def test_starting_an_action_needs_the_flag_without_identities_and_the_role_act_with_them() -> None:
    assert "agent.open_actions" in (action_refusal(AgentSettings(), "ana", "submit") or "")
    assert action_refusal(OPEN, "", "submit") is None
    keys = [
        OverrideIdentity(name="ana", public_key=new_key_pair()[1], roles=[Role.ACT]),
        OverrideIdentity(name="ops", public_key=new_key_pair()[1], roles=[Role.APPROVE]),
    ]
    keyed = AgentSettings(override_keys=keys, open_actions=True)  # the flag does not open a keyed worker
    assert action_refusal(keyed, "ana", "submit") is None
    for user in ("ops", "nobody", ""):
        assert "needs the role 'act'" in (action_refusal(keyed, user, "submit") or ""), user
