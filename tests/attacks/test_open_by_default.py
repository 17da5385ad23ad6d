"""Open by default: a stack configured with no identities used to let anyone who can publish to the request
topic, the requester included, approve a payment with a follow-up {"state": "override", "question": "approve
accept"}. Now, without identities, an action runs only on a worker marked as a development setup
(agent.open_actions), and even there the requester's own approval is refused unless the worker allows it
(real Pulsar, Temporal, FalkorDB; only the model is scripted)."""

from __future__ import annotations

import argparse
import asyncio
import uuid
from pathlib import Path

import yaml

from cli.ask import ask
from cli.up import actions_env, actions_line
from contracts.run import AgentSettings, RunStatus
from contracts.wire import AgentRequest, AgentResponse
from embedded import demo_graph
from service.config import ServiceConfig
from service.run_recovery import RunLookup
from tests.integration.test_action_path import SUPPLIER, DomainModel, events, pending_status
from tests.scripted_llm import ScriptedLLM

PAY = f"Pay all orders of supplier {SUPPLIER}"
COMPOSE = Path(__file__).parents[2] / "docker-compose.yml"


async def send(stack, request: AgentRequest, request_id: str = "") -> list[AgentResponse]:  # type: ignore[no-untyped-def]
    return [
        m
        async for m in ask(
            stack.config.pulsar_url,
            request,
            request_topic=stack.request_topic,
            response_topic=stack.config.response_topic,
            timeout_s=300,
            request_id=request_id or uuid.uuid4().hex,
            runs=RunLookup(stack.client),
        )
    ]


def text_of(message: AgentResponse) -> str:
    return f"{message.content} {message.error.message if message.error else ''}"


async def graph_state(g) -> tuple[int, float, int]:  # type: ignore[no-untyped-def]
    """(action records, the operating account's balance, paid orders): what a payment would change."""
    records = (await g.ro_query("MATCH (r:ActionRecord) RETURN count(r)")).result_set[0][0]
    balance = (await g.ro_query("MATCH (a:Account) RETURN a.balance")).result_set[0][0]
    paid = (await g.ro_query("MATCH (o:PurchaseOrder {paid: true}) RETURN count(o)")).result_set[0][0]
    return records, balance, paid


async def test_without_identities_or_the_flag_a_payment_request_changes_nothing_and_says_why(
    make_stack, demo_copy, unique: str
) -> None:
    graph_name, g = demo_copy
    before = await graph_state(g)
    with ScriptedLLM(DomainModel()) as llm:
        stack = await make_stack(
            llm.base_url,
            graph_name=graph_name,
            ontology_path=str(demo_graph.ONTOLOGY_PATH),
            open_actions=False,
            allow_self_approval=False,
        )
        request_id = f"closed-{unique}"
        asking = asyncio.create_task(send(stack, AgentRequest(question=PAY, user="mallory"), request_id))
        handle = stack.client.get_workflow_handle(f"agent-{request_id}")
        messages = await asyncio.wait_for(asking, 300)
        # The attacker's approval: there is nothing to approve.
        follow_up = await send(
            stack, AgentRequest(question="approve accept", state="override", correlation_id=f"agent-{request_id}")
        )
        status = await handle.query("status", result_type=RunStatus)

    last = messages[-1]
    assert last.message_type == "error" and last.end_of_dialog
    said = text_of(last)
    assert "no identities are configured" in said and "TGCA_AGENT__OPEN_ACTIONS=true" in said
    assert "tg-confidence keys new" in said and "Nothing was changed." in said
    assert not events(messages)  # refused before the targets were even looked up: no plan was shown
    assert status.phase == "aborted" and status.pending_override is None
    assert follow_up[-1].message_type == "error"  # the run is over: nothing is waiting to be approved
    assert await graph_state(g) == before


async def test_with_the_development_flag_the_requester_cannot_approve_its_own_payment(
    make_stack, demo_copy, unique: str
) -> None:
    """The reported attack, verbatim, and its variants (named, unnamed, through Temporal): each refused while
    nothing changes; someone else's approval then pays."""
    graph_name, g = demo_copy
    before = await graph_state(g)
    with ScriptedLLM(DomainModel()) as llm:
        stack = await make_stack(
            llm.base_url,
            graph_name=graph_name,
            ontology_path=str(demo_graph.ONTOLOGY_PATH),
            open_actions=True,
            allow_self_approval=False,
        )
        request_id = f"self-{unique}"
        workflow_id = f"agent-{request_id}"
        asking = asyncio.create_task(send(stack, AgentRequest(question=PAY, user="mallory"), request_id))
        pending = await pending_status(stack, workflow_id, asking)
        attempts = [
            AgentRequest(question="approve accept", state="override", correlation_id=workflow_id),
            AgentRequest(question="approve accept", state="override", correlation_id=workflow_id, user="mallory"),
            AgentRequest(
                question='{"step_id": "approve", "decision": "accept", "by": "mallory"}',
                state="override",
                correlation_id=workflow_id,
                user="someone-else",
            ),
        ]
        refusals = [(await send(stack, attempt))[-1] for attempt in attempts]
        still = await stack.client.get_workflow_handle(workflow_id).query("status", result_type=RunStatus)
        during = await graph_state(g)
        approved = await send(
            stack, AgentRequest(question="approve accept", state="override", correlation_id=workflow_id, user="ops")
        )
        messages = await asyncio.wait_for(asking, 300)

    assert pending.pending_override is not None and pending.pending_override.step_id == "approve"
    for refusal in refusals:
        assert refusal.message_type == "error" and "may not approve its own request" in text_of(refusal)
    assert still.pending_override is not None  # the run still waits: no refused decision counted
    assert during == before
    assert approved[-1].message_type == "answer" and approved[-1].content == "accept recorded for step approve"
    assert messages[-1].message_type == "answer" and "18 succeeded, 2 failed" in messages[-1].content
    assert (await graph_state(g))[0] == 18


def test_up_opens_actions_only_when_asked_and_says_which_it_is() -> None:
    """`up` without --open-actions leaves actions closed and says how to open them; with it, it says that they
    are open to anyone who can reach the stack; configured identities always win."""
    closed, opened = argparse.Namespace(open_actions=False), argparse.Namespace(open_actions=True)
    config = ServiceConfig()
    assert actions_env(closed, config) == {}
    assert "actions are closed" in actions_line(closed, config) and "up --open-actions" in actions_line(closed, config)
    assert actions_env(opened, config) == {
        "TGCA_AGENT__OPEN_ACTIONS": "true",
        "TGCA_AGENT__ALLOW_SELF_APPROVAL": "true",
    }
    assert "actions are OPEN (development): anyone who can reach" in actions_line(opened, config)
    # opened by the file or TGCA_AGENT__OPEN_ACTIONS: the chat's one local user may still approve its requests
    from_file = ServiceConfig(agent=AgentSettings(open_actions=True))
    assert actions_env(closed, from_file) == actions_env(opened, config)
    keyed = ServiceConfig(
        agent=AgentSettings(override_keys=[{"name": "ops", "public_key": "A" * 43 + "=", "roles": ["approve"]}])
    )
    assert actions_env(opened, keyed) == {} and "signed decisions" in actions_line(opened, keyed)


def test_the_production_compose_leaves_actions_closed() -> None:
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    for name, service in services.items():
        env = service.get("environment") or {}
        keys = set(env) if isinstance(env, dict) else {item.split("=", 1)[0] for item in env}
        assert not keys & {"TGCA_AGENT__OPEN_ACTIONS", "TGCA_AGENT__ALLOW_SELF_APPROVAL"}, name
    assert AgentSettings().open_actions is False and AgentSettings().allow_self_approval is False
