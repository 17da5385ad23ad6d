"""Signed override decisions on the real workflow (time-skipping test server): only a configured identity
with the right role, signing this very decision over the request's challenge, may decide, through the
update and the signal alike; and the history of an approved run holds nothing that approves anything else."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from temporalio.client import WorkflowHandle, WorkflowUpdateFailedError

from contracts.override import Override, OverrideIdentity, Role
from contracts.run import AgentRunResult
from overrides.signing import public_key_text, sign, signed_message
from tests.agent_harness import plan, responder

NEVER_FOUND = "MATCH (n:Entity {name: 'Nobody'}) RETURN n.name"
ANA = Ed25519PrivateKey.generate()  # may review low-confidence steps
OPS = Ed25519PrivateKey.generate()  # may only approve actions
KEYS = [
    OverrideIdentity(name="ana", public_key=public_key_text(ANA), roles=[Role.REVIEW]),
    OverrideIdentity(name="ops", public_key=public_key_text(OPS), roles=[Role.APPROVE]),
]


async def waiting_run(harness_factory, seed_graph: str) -> tuple[Any, WorkflowHandle, dict[str, Any]]:  # type: ignore[no-untyped-def]
    harness = await harness_factory(
        responder([plan(("s1", "GraphQuery", {"query": NEVER_FOUND}, []))], text=lambda b: ""),
        seed_graph,
        max_retries=0,
        override_keys=KEYS,
    )
    handle = await harness.start("Who is the partner of Entity X?")
    status = await harness.wait_for_override(handle)
    return harness, handle, status["pending_override"]


def decided(
    key: Ed25519PrivateKey, by: str, handle: WorkflowHandle, pending: dict[str, Any], decision: str = "accept"
) -> Override:
    message = signed_message(handle.id, pending["challenge"], pending["step_id"], decision, None, reason="", by=by)
    return Override(step_id=pending["step_id"], decision=decision, by=by, signature=sign(key, message))


async def test_only_a_signed_decision_by_an_identity_with_the_role_is_taken(harness_factory, seed_graph: str) -> None:
    harness, handle, pending = await waiting_run(harness_factory, seed_graph)
    assert pending["role"] == "review" and pending["challenge"]
    for override, reason in (
        (Override(step_id="s1", decision="accept"), "no identity given"),
        (Override(step_id="s1", decision="accept", by="ana"), "does not sign this decision"),
        (decided(OPS, "ops", handle, pending), "'ops' may not decide on low-confidence steps"),
        (decided(ANA, "ana", handle, pending, "abort").model_copy(update={"decision": "accept"}), "does not sign"),
    ):
        with pytest.raises(WorkflowUpdateFailedError) as caught:
            await handle.execute_update("submit_override", override)
        assert "not authorized: " in str(caught.value.cause) and reason in str(caught.value.cause)
    # A signal is checked the same way: an unsigned one is ignored and listed, a signed one decides.
    await handle.signal("override", Override(step_id="s1", decision="abort", by="ana"))
    status = await handle.query("status")
    assert status["pending_override"] and "not authorized" in status["rejected_overrides"][0]
    await handle.signal("override", decided(ANA, "ana", handle, pending))
    result: AgentRunResult = await handle.result()
    assert result.step_results[0].success and "(accepted by ana)" in result.step_results[0].confidence.reasoning
    # Every refusal was counted once, by path and reason.
    assert harness.metric("agent_override_rejected_total", path="update", reason="unauthorized") == 4
    assert harness.metric("agent_override_rejected_total", path="signal", reason="unauthorized") == 1


async def test_the_history_of_an_approved_run_approves_nothing_else(harness_factory, seed_graph: str) -> None:
    _, first, pending = await waiting_run(harness_factory, seed_graph)
    assert (
        await first.execute_update("submit_override", decided(ANA, "ana", first, pending))
        == "accept recorded for step s1"
    )
    await first.result()
    history = await first.fetch_history()
    exported = history.to_json()
    # No secret of the decider's is in it ...
    private_pem = ANA.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    private_raw = base64.b64encode(
        ANA.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption())
    ).decode()
    payloads = [base64.b64decode(p["data"]).decode(errors="replace") for p in _payloads(json.loads(exported))]
    assert not any(private_raw in text or "PRIVATE KEY" in text for text in [exported, *payloads])
    assert private_pem.splitlines()[1] not in exported
    # ... and what it does hold (the signed decision, as accepted) approves no other run, step or decision.
    recorded = [json.loads(text) for text in payloads if '"signature"' in text]
    assert recorded, "the accepted decision is in the history"
    replayed = Override.model_validate(recorded[0])
    _, second, _ = await waiting_run(harness_factory, seed_graph)
    for attempt in (replayed, replayed.model_copy(update={"decision": "abort"})):
        with pytest.raises(WorkflowUpdateFailedError) as caught:
            await second.execute_update("submit_override", attempt)
        assert "does not sign this decision" in str(caught.value.cause)
    await second.signal("override", replayed)
    status = await second.query("status")
    assert status["pending_override"] and "does not sign" in status["rejected_overrides"][0]
    await second.terminate("test over")


def _payloads(node: Any) -> list[dict[str, Any]]:
    """Every payload ({"metadata": ..., "data": base64}) anywhere in an exported history."""
    found: list[dict[str, Any]] = []
    if isinstance(node, dict):
        if "data" in node and "metadata" in node and isinstance(node["data"], str):
            found.append(node)
        for value in node.values():
            found += _payloads(value)
    elif isinstance(node, list):
        for value in node:
            found += _payloads(value)
    return found
