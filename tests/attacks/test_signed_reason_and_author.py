"""A signed decision's signature covered the run, the request's challenge, the step, the decision and its
arguments, but not its `reason` nor its `by`. Whoever saw a signed `abort` on its way (a Pulsar follow-up,
a proxy, a shared terminal) could send it first with a reason of their own, or under another identity
configured with the same key; the run took it, and the forged words reached the audit record and the
caller's error. Now the signature covers the whole decision: each altered copy is refused, through the
update and the signal alike, and the genuine decision then ends the run with its own reason (real Temporal
and FalkorDB; only the model is scripted)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from temporalio.client import WorkflowUpdateFailedError

from contracts.override import Override, OverrideIdentity, Role
from contracts.run import AgentRunResult
from overrides.checks import signed_decision
from overrides.signing import public_key_text
from tests.agent_harness import plan, responder

NEVER_FOUND = "MATCH (n:Entity {name: 'Nobody'}) RETURN n.name"
ANA = Ed25519PrivateKey.generate()
# One person, two identities with one key (a personal one and a team lead's): a decision signed as one must
# not count as the other's.
KEYS = [
    OverrideIdentity(name="ana", public_key=public_key_text(ANA), roles=[Role.REVIEW]),
    OverrideIdentity(name="ana-lead", public_key=public_key_text(ANA), roles=[Role.REVIEW]),
]
GENUINE = "the supplier feed is stale"
FORGED = "approved by the CFO, pay everything"


async def test_a_signed_decision_resent_with_another_reason_or_author_is_refused(
    harness_factory, seed_graph: str
) -> None:
    harness = await harness_factory(
        responder([plan(("s1", "GraphQuery", {"query": NEVER_FOUND}, []))], text=lambda b: ""),
        seed_graph,
        max_retries=0,
        override_keys=KEYS,
    )
    handle = await harness.start("Who is the partner of Entity X?")
    pending = (await harness.wait_for_override(handle))["pending_override"]
    # What every signer (tg-confidence override and ask, the chat API, the soak bench) calls.
    genuine = signed_decision(
        Override(step_id=pending["step_id"], decision="abort", reason=GENUINE, by="ana"),
        ANA,
        handle.id,
        pending["challenge"],
    )

    for forged in (
        genuine.model_copy(update={"reason": FORGED}),
        genuine.model_copy(update={"by": "ana-lead"}),
        genuine.model_copy(update={"reason": ""}),
    ):
        with pytest.raises(WorkflowUpdateFailedError) as caught:
            await handle.execute_update("submit_override", forged)
        assert "does not sign this decision" in str(caught.value.cause), forged
    await handle.signal("override", genuine.model_copy(update={"reason": FORGED}))
    status = await handle.query("status")
    assert status["pending_override"], "a forged decision decided the step"
    assert "does not sign this decision" in status["rejected_overrides"][-1]

    assert await handle.execute_update("submit_override", genuine) == "abort recorded for step s1"
    result: AgentRunResult = await handle.result()

    assert result.error == f"Aborted by ana at step s1: {GENUINE}"
    said = harness.text()
    assert GENUINE in said and FORGED not in said and "ana-lead" not in said
    audit = await asyncio.to_thread(Path(harness.config.audit_path).read_text)
    assert GENUINE in audit and FORGED not in audit and "ana-lead" not in audit
