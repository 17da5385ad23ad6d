"""A caller of the HTTP API reads and extends only their own runs and conversations.
Bob, holding a valid token, tries everything on Alice's run: read it, stream it, read her conversation,
add a turn to it (so that a later "pay them" would act on ids he chose), and read the action history.
Every attempt fails, and Alice's conversation still holds only her turn. An auditor reads it all."""

from __future__ import annotations

import asyncio
from typing import Any

from chat.auth import token_sha256
from contracts.override import Role
from embedded import demo_graph
from service.config import HttpIdentity
from tests.chat_server import chat_server
from tests.integration.test_chat_api import collect
from tests.integration.test_conversations import ConversationalModel
from tests.scripted_llm import ScriptedLLM

QUESTION = "Which orders of Northwind Traders are unpaid?"


async def test_a_caller_cannot_read_or_extend_another_callers_runs(make_stack, demo_copy, unique: str) -> None:
    graph_name, g = demo_copy
    tokens = {name: f"{name}-{unique}" for name in ("alice", "bob", "auditor")}
    roles = {"alice": [Role.REVIEW], "bob": [Role.REVIEW, Role.UNDO], "auditor": [Role.AUDIT]}
    identities = [HttpIdentity(name=n, token_sha256=token_sha256(t), roles=roles[n]) for n, t in tokens.items()]
    with ScriptedLLM(ConversationalModel()) as llm:
        stack = await make_stack(llm.base_url, graph_name=graph_name, ontology_path=str(demo_graph.ONTOLOGY_PATH))
        async with chat_server(stack, identities) as server:
            alice, bob, auditor = (server.client(tokens[n]) for n in ("alice", "bob", "auditor"))
            async with alice, bob, auditor:
                events: list[dict[str, Any]] = []
                await asyncio.wait_for(collect(alice, {"query": QUESTION}, events), 120)
                conversation_id, workflow_id = events[0]["id"], events[0]["workflow_id"]

                attempts = {
                    "run": await bob.get(f"/runs/{workflow_id}"),
                    "events": await bob.get(f"/runs/{workflow_id}/events"),
                    "conversation": await bob.get(f"/conversations/{conversation_id}"),
                    "history": await bob.get("/actions"),
                    "append": await bob.post(
                        "/chat/stream",
                        json={"query": "Pay purchase orders PO-0001", "conversation_id": conversation_id},
                    ),
                    "untagged": await bob.post(
                        "/chat/stream", json={"query": "Pay purchase orders PO-0001", "conversation_id": "c-mine"}
                    ),
                }
                own_run = await alice.get(f"/runs/{workflow_id}")
                audited_run = await auditor.get(f"/runs/{workflow_id}")
                audited_memory = await auditor.get(f"/conversations/{conversation_id}")
                audited_history = await auditor.get("/actions")
                auditor_append = await auditor.post(
                    "/chat/stream", json={"query": "Pay them", "conversation_id": conversation_id}
                )
                memory = (await alice.get(f"/conversations/{conversation_id}")).json()

    codes = {what: response.status_code for what, response in attempts.items()}
    assert codes == {"run": 404, "events": 404, "conversation": 404, "history": 403, "append": 403, "untagged": 403}, (
        codes
    )
    # a refusal names nothing of Alice's: the same words as for a run that does not exist
    assert attempts["run"].json()["detail"] == f"no run {workflow_id}"
    assert own_run.status_code == 200 and own_run.json()["status"]["phase"] == "completed"
    assert audited_run.status_code == 200 and audited_memory.status_code == 200
    assert audited_history.status_code == 200
    assert auditor_append.status_code == 403  # reading everything is not speaking in someone's conversation
    assert memory["turn_count"] == 1 and memory["turns"][0]["question"] == QUESTION
    assert (await g.ro_query("MATCH (r:ActionRecord) RETURN count(r)")).result_set[0][0] == 0
