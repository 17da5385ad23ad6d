"""Self-approval without identities (a development worker with agent.open_actions) compared names as raw
strings: the requester `casey` approved its own payment as `Casey`, as `casey` with a zero-width space or a
soft hyphen, in full-width letters, with one Cyrillic `а`, or spelled wholly in Cyrillic (`Саѕеу`). Names
are now compared as people read them (overrides/same_person.py): each of these approvals is refused over
the request topic while nothing changes, and someone else's approval then pays (real Pulsar, Temporal,
FalkorDB; only the model is scripted). Without identities a name is only claimed, so the rule is advisory:
it stops the requester approving as itself, not naming someone else."""

from __future__ import annotations

import asyncio
import json

from contracts.run import RunStatus
from contracts.wire import AgentRequest
from embedded import demo_graph
from tests.attacks.test_open_by_default import PAY, graph_state, send, text_of
from tests.integration.test_action_path import DomainModel, pending_status
from tests.scripted_llm import ScriptedLLM

REQUESTER = "casey"
LOOK_ALIKES = [
    "Casey",
    "casey\u200b",
    "c\u00adasey",
    "\uff43\uff41\uff53\uff45\uff59",  # case, invisibles, width
    "c\u0430sey",  # a Cyrillic a among Latin letters
    "\u0421\u0430\u0455\u0435\u0443",
]  # wholly Cyrillic: one script, the skeleton of "casey"


async def test_the_requester_cannot_approve_its_own_payment_under_a_look_alike_name(
    make_stack, demo_copy, unique: str
) -> None:
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
        request_id = f"look-alike-{unique}"
        workflow_id = f"agent-{request_id}"
        asking = asyncio.create_task(send(stack, AgentRequest(question=PAY, user=REQUESTER), request_id))
        pending = await pending_status(stack, workflow_id, asking)
        # Each name once as the follow-up's sender (it decides as its `user`), once named in the decision.
        attempts = [
            *(
                AgentRequest(question="approve accept", state="override", correlation_id=workflow_id, user=name)
                for name in LOOK_ALIKES
            ),
            *(
                AgentRequest(
                    question=json.dumps({"step_id": "approve", "decision": "accept", "by": name}),
                    state="override",
                    correlation_id=workflow_id,
                    user="someone-else",
                )
                for name in LOOK_ALIKES
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
    for attempt, refusal in zip(attempts, refusals, strict=True):
        assert refusal.message_type == "error", (attempt.user, attempt.question, refusal)
        assert "may not approve its own request" in text_of(refusal), (attempt.user, attempt.question)
    assert still.pending_override is not None  # the run still waits: no refused decision counted
    assert during == before
    assert approved[-1].message_type == "answer" and approved[-1].content == "accept recorded for step approve"
    assert messages[-1].message_type == "answer" and "18 succeeded, 2 failed" in messages[-1].content
    assert (await graph_state(g))[0] == 18
