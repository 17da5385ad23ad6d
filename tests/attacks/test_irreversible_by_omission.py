"""Irreversible by omission: a small action on targets named by id ran without a human, and anyone who could
send a request could start one. Now an operator can require approval for every action
(agent.approve_every_action), and with identities configured an action starts only for a requester whose
`user` names an identity holding the role 'act' (real Pulsar, Temporal, FalkorDB; the model is scripted)."""

from __future__ import annotations

import asyncio

from contracts.override import OverrideIdentity, Role
from contracts.wire import AgentRequest
from embedded import demo_graph
from overrides.signing import new_key_pair
from tests.attacks.test_open_by_default import send, text_of
from tests.integration.test_action_path import DomainModel, events, pending_status
from tests.scripted_llm import ScriptedLLM

DRAFTS = sorted(o["po_number"] for o in demo_graph.generate().nodes["PurchaseOrder"] if o["status"] == "draft")[:2]
SUBMIT = f"Submit orders {' and '.join(DRAFTS)} to be approved"  # DomainModel routes it to the action path
INTENT = {
    "entity_type": "PurchaseOrder",
    "action_name": "submit",
    "entity_ids": DRAFTS,
    "related_class": "",
    "related_name": "",
}


def identity(name: str, *roles: Role) -> OverrideIdentity:
    return OverrideIdentity(name=name, public_key=new_key_pair()[1], roles=list(roles))


async def statuses(g) -> list[str]:  # type: ignore[no-untyped-def]
    found = await g.ro_query(
        "MATCH (o:PurchaseOrder) WHERE o.po_number IN $ids RETURN o.status ORDER BY o.po_number", {"ids": DRAFTS}
    )
    return [row[0] for row in found.result_set]


async def records(g) -> int:  # type: ignore[no-untyped-def]
    return (await g.ro_query("MATCH (r:ActionRecord) RETURN count(r)")).result_set[0][0]


async def test_with_approve_every_action_two_orders_named_by_id_wait_for_a_human(
    make_stack, demo_copy, unique: str
) -> None:
    """Two reversible submissions named by id, well above every confidence bar: without the setting they run
    at once (tests/integration/test_chat_api.py); with it the run waits, and skipped, nothing changes."""
    graph_name, g = demo_copy

    with ScriptedLLM(DomainModel(INTENT)) as llm:
        stack = await make_stack(
            llm.base_url, graph_name=graph_name, ontology_path=str(demo_graph.ONTOLOGY_PATH), approve_every_action=True
        )
        request_id = f"every-{unique}"
        asking = asyncio.create_task(send(stack, AgentRequest(question=SUBMIT, user="ana"), request_id))
        pending = await pending_status(stack, f"agent-{request_id}", asking)
        during = (await statuses(g), await records(g))
        skipped = await send(
            stack,
            AgentRequest(question="approve skip", state="override", correlation_id=f"agent-{request_id}", user="ops"),
        )
        messages = await asyncio.wait_for(asking, 300)

    assert pending.pending_override is not None
    assert "the operator requires approval for every action" in pending.pending_override.reasoning
    assert pending.pending_override.arguments["targets"] == "2"
    assert during == (["draft", "draft"], 0)
    assert skipped[-1].content == "skip recorded for step approve"
    assert "submit was not executed (skipped at approval). Nothing was changed." in messages[-1].content
    assert await statuses(g) == ["draft", "draft"] and await records(g) == 0


async def test_with_identities_only_a_requester_holding_the_role_act_starts_an_action(
    make_stack, demo_copy, unique: str
) -> None:
    """An approver without 'act', a stranger and an unnamed requester are each refused before the targets are
    looked up; the same request from an identity holding 'act' runs (small, by id: no approval needed)."""
    graph_name, g = demo_copy

    keys = [identity("ana", Role.ACT), identity("ops", Role.APPROVE, Role.REVIEW, Role.UNDO)]
    with ScriptedLLM(DomainModel(INTENT)) as llm:
        stack = await make_stack(
            llm.base_url, graph_name=graph_name, ontology_path=str(demo_graph.ONTOLOGY_PATH), override_keys=keys
        )
        refused = {}
        for user in ("ops", "stranger", ""):
            refused[user] = await send(stack, AgentRequest(question=SUBMIT, user=user), f"act-{user}-{unique}")
        unchanged = (await statuses(g), await records(g))
        allowed = await send(stack, AgentRequest(question=SUBMIT, user="ana"), f"act-ana-{unique}")

    for user, messages in refused.items():
        last = messages[-1]
        assert last.message_type == "error", (user, last)
        assert "not authorized: starting submit needs the role 'act'" in text_of(last), user
        assert "Nothing was changed." in text_of(last)
        assert not events(messages), user  # no plan: the targets were never looked up
    assert unchanged == (["draft", "draft"], 0)
    assert allowed[-1].message_type == "answer", allowed[-1]
    assert await statuses(g) == ["submitted", "submitted"] and await records(g) == 2
