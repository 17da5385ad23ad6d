"""The HTTP chat API over the real stack (Temporal, pulsar-lite, FalkorDB, the bridge): seed 002's
conversation as server-sent events, approval through the API, reconnecting to a run, the run, conversation
and action routes, and bad or unauthorised requests. Only the model is scripted."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from chat.auth import token_sha256
from contracts.override import Role
from embedded import demo_graph
from service.config import HttpIdentity
from tests.chat_server import chat_server, sse_events
from tests.integration.test_action_path import ALREADY_PAID, ORDERS, SUPPLIER, TOO_DEAR, DomainModel
from tests.integration.test_conversations import ConversationalModel
from tests.scripted_llm import ScriptedLLM

PAY = f"Pay all orders of supplier {SUPPLIER}"


async def approve_on_request(http: httpx.AsyncClient, events: list[dict[str, Any]], decision: str = "accept") -> None:
    """What the UI's approve button does: wait for the override_request event, then answer it."""
    while not any(e["type"] == "override_request" for e in events):  # noqa: ASYNC110 - another task fills it
        await asyncio.sleep(0.05)
    request = next(e for e in events if e["type"] == "override_request")
    response = await http.post(
        f"/runs/{request['workflow_id']}/override", json={"step_id": request["step_id"], "decision": decision}
    )
    assert response.status_code == 200, response.text


async def collect(
    http: httpx.AsyncClient, body: dict[str, Any], into: list[dict[str, Any]], until: str = "done"
) -> None:
    async with http.stream("POST", "/chat/stream", json=body) as response:
        assert response.status_code == 200
        async for _, event in sse_events(response):
            into.append(event)
            if event["type"] == until:
                return


async def test_seed_conversation_over_http(make_stack, demo_copy, unique: str) -> None:
    """Pay 20 orders, approve, watch 18 succeed and 2 fail with reasons, then ask which failed and why."""
    graph_name, g = demo_copy
    with ScriptedLLM(ConversationalModel()) as llm:
        stack = await make_stack(
            llm.base_url,
            graph_name=graph_name,
            ontology_path=str(demo_graph.ONTOLOGY_PATH),
            action_window=8,
            action_max_concurrent=4,
        )
        async with chat_server(stack) as server, server.client() as http:
            events: list[dict[str, Any]] = []
            approving = asyncio.create_task(approve_on_request(http, events))
            await asyncio.wait_for(collect(http, {"query": PAY}, events), 180)
            await approving
            conversation_id = events[0]["id"]
            follow_up: list[dict[str, Any]] = []
            await asyncio.wait_for(
                collect(
                    http,
                    {"query": "Which of those orders were not paid, and why?", "conversation_id": conversation_id},
                    follow_up,
                ),
                120,
            )
            memory = (await http.get(f"/conversations/{conversation_id}")).json()
            run = (await http.get(f"/runs/{events[0]['workflow_id']}")).json()

    kinds = [e["type"] for e in events]
    assert kinds[0] == "conversation_id" and events[0]["workflow_id"].startswith("agent-chat-")
    assert events[0]["temporal_ui"].endswith(f"/namespaces/default/workflows/{events[0]['workflow_id']}")
    assert kinds.index("action_plan") < kinds.index("override_request") < kinds.index("action_progress")
    assert next(e for e in events if e["type"] == "override_request")["role"] == Role.APPROVE.value
    progress = [e for e in events if e["type"] == "action_progress"]
    assert [e["completed"] for e in progress] == list(range(1, 21))  # in order, across three windows
    assert {e["entity_id"] for e in progress} == {o["po_number"] for o in ORDERS}
    assert {e["entity_id"]: e["error"] for e in events if e["type"] == "action_error"} == {
        TOO_DEAR: "Insufficient funds",
        ALREADY_PAID: "Order already paid",
    }
    complete = next(e for e in events if e["type"] == "action_complete")["results"]
    assert (complete["total"], complete["succeeded"], complete["failed"]) == (20, 18, 2)
    assert kinds[-3:] == ["content", "confidence", "done"] or kinds.index("content_start") < kinds.index("done")
    assert "18 succeeded, 2 failed" in "".join(e["content"] for e in events if e["type"] == "content")
    assert next(e for e in events if e["type"] == "confidence")["score"] == 0.95

    answer = "".join(e["content"] for e in follow_up if e["type"] == "content")
    assert f"{TOO_DEAR} (Insufficient funds)" in answer and f"{ALREADY_PAID} (Order already paid)" in answer
    assert follow_up[0]["id"] == conversation_id and follow_up[-1]["type"] == "done"
    assert memory["turn_count"] == 2 and memory["turns"][0]["action"]["failed"] == 2
    assert run["execution"] == "COMPLETED" and run["status"]["phase"] == "completed"
    assert (await g.ro_query("MATCH (r:ActionRecord) RETURN count(r)")).result_set[0][0] == 18


async def test_a_client_that_disconnects_neither_stops_nor_repeats_the_run(make_stack, demo_copy, unique: str) -> None:
    graph_name, g = demo_copy
    with ScriptedLLM(ConversationalModel()) as llm:
        stack = await make_stack(
            llm.base_url,
            graph_name=graph_name,
            ontology_path=str(demo_graph.ONTOLOGY_PATH),
            action_max_concurrent=2,
            action_latency_ms=0,
        )
        async with chat_server(stack) as server, server.client() as http:
            first: list[dict[str, Any]] = []
            last_id = "0"
            async with http.stream("POST", "/chat/stream", json={"query": PAY}) as response:
                async for event_id, event in sse_events(response):
                    first.append(event)
                    last_id = event_id
                    if event["type"] == "override_request":
                        break  # the client goes away while the run waits for approval
            workflow_id = first[0]["workflow_id"]
            accepted = await http.post(
                f"/runs/{workflow_id}/override", json={"step_id": "approve", "decision": "accept"}
            )
            assert accepted.status_code == 200
            rest: list[dict[str, Any]] = []
            async with http.stream(
                "GET", f"/runs/{workflow_id}/events", headers={"Last-Event-ID": last_id}
            ) as response:
                async for _, event in sse_events(response):
                    rest.append(event)
                    if event["type"] == "done":
                        break
    assert sum(e["type"] == "action_plan" for e in first + rest) == 1  # nothing sent twice
    assert [e["completed"] for e in rest if e["type"] == "action_progress"] == list(range(1, 21))
    assert rest[-1] == {"type": "done", "workflow_id": workflow_id}
    assert (await g.ro_query("MATCH (r:ActionRecord) RETURN count(r)")).result_set[0][0] == 18


async def test_bad_and_unauthorised_requests_get_a_clear_4xx(make_stack, demo_copy, unique: str) -> None:
    graph_name, g = demo_copy
    approver, reader = f"approve-{unique}", f"read-{unique}"
    identities = [
        HttpIdentity(name="ops", token_sha256=token_sha256(approver), roles=[Role.APPROVE, Role.UNDO, Role.AUDIT]),
        HttpIdentity(name="viewer", token_sha256=token_sha256(reader), roles=[]),
    ]
    with ScriptedLLM(ConversationalModel()) as llm:
        stack = await make_stack(llm.base_url, graph_name=graph_name, ontology_path=str(demo_graph.ONTOLOGY_PATH))
        async with chat_server(stack, identities) as server:
            async with httpx.AsyncClient(base_url=server.url, timeout=60) as anonymous:
                assert (await anonymous.get("/runs/agent-x")).status_code == 401
                wrong = await anonymous.get("/runs/agent-x", headers={"Authorization": "Bearer nope"})
                assert wrong.status_code == 401 and wrong.json()["detail"] == "unknown token"
                assert (await anonymous.get("/docs")).status_code == 200  # the API describes itself openly
            viewer = httpx.AsyncClient(base_url=server.url, timeout=60, headers={"Authorization": f"Bearer {reader}"})
            ops = httpx.AsyncClient(base_url=server.url, timeout=60, headers={"Authorization": f"Bearer {approver}"})
            async with viewer, ops:
                assert (await viewer.post("/chat/stream", json={"question": "typo'd field"})).status_code == 422
                assert (await viewer.post("/chat/stream", json={"query": ""})).status_code == 422
                assert (
                    await viewer.post("/chat/stream", json={"query": "hi", "conversation_id": "a b"})
                ).status_code == 422
                assert (await viewer.get("/runs/agent-no-such-run")).status_code == 404
                assert (await viewer.get("/conversations/none-such")).status_code == 404

                events: list[dict[str, Any]] = []
                asking = asyncio.create_task(collect(viewer, {"query": PAY}, events, until="override_request"))
                await asyncio.wait_for(asking, 120)
                workflow_id = events[0]["workflow_id"]
                not_waiting = await ops.post(
                    f"/runs/{workflow_id}/override", json={"step_id": "execute", "decision": "accept"}
                )
                assert not_waiting.status_code == 409 and "waits on step approve" in not_waiting.json()["detail"]
                refused = await viewer.post(
                    f"/runs/{workflow_id}/override", json={"step_id": "approve", "decision": "accept"}
                )
                assert refused.status_code == 403 and "'approve' is needed" in refused.json()["detail"]
                bad_choice = await ops.post(
                    f"/runs/{workflow_id}/override", json={"step_id": "approve", "decision": "retry"}
                )
                assert bad_choice.status_code == 409 and "retry is not a choice here" in bad_choice.json()["detail"]
                assert (
                    await ops.post(f"/runs/{workflow_id}/override", json={"step_id": "approve", "decision": "accept"})
                ).status_code == 200
                while (await ops.get(f"/runs/{workflow_id}")).json()["execution"] == "RUNNING":  # noqa: ASYNC110
                    await asyncio.sleep(0.2)

                history_refused = await viewer.get("/actions", params={"run": workflow_id})
                assert history_refused.status_code == 403 and "'audit' is needed" in history_refused.json()["detail"]
                actions = (await ops.get("/actions", params={"run": workflow_id, "limit": 100})).json()
                assert len(actions) == 18
                key = actions[0]["key"]
                assert (await viewer.post(f"/actions/{key}/undo")).status_code == 403
                undone = await ops.post(f"/actions/{key}/undo")
                assert undone.status_code == 409
                assert undone.json()["detail"] == "makePayment cannot be undone: it is irreversible"
                assert (await ops.post("/actions/no-such-key/undo")).status_code == 404
    paid = (
        await g.ro_query("MATCH (o:PurchaseOrder {po_number: $id}) RETURN o.paid", {"id": actions[0]["entity_id"]})
    ).result_set[0][0]
    assert paid is True  # nothing was changed by the refused undo


async def test_an_executed_reversible_action_is_undone_over_http(make_stack, demo_copy, unique: str) -> None:
    """Two draft orders submitted through the chat (reversible and small: no approval), then one undone by
    `POST /actions/{key}/undo`: that order is a draft again, the other stays submitted, and a second undo
    of the same action is refused."""
    graph_name, g = demo_copy
    drafts = sorted(o["po_number"] for o in demo_graph.generate().nodes["PurchaseOrder"] if o["status"] == "draft")[:2]
    intent = {
        "entity_type": "PurchaseOrder",
        "action_name": "submit",
        "entity_ids": drafts,
        "related_class": "",
        "related_name": "",
    }
    token = f"undo-{unique}"
    identities = [HttpIdentity(name="ops", token_sha256=token_sha256(token), roles=[Role.UNDO, Role.AUDIT])]
    with ScriptedLLM(DomainModel(intent)) as llm:
        stack = await make_stack(llm.base_url, graph_name=graph_name, ontology_path=str(demo_graph.ONTOLOGY_PATH))
        async with (
            chat_server(stack, identities) as server,
            httpx.AsyncClient(base_url=server.url, timeout=60, headers={"Authorization": f"Bearer {token}"}) as http,
        ):
            events: list[dict[str, Any]] = []
            # DomainModel routes a request that mentions approval to the action path
            await asyncio.wait_for(
                collect(http, {"query": f"Submit orders {' and '.join(drafts)} to be approved"}, events), 120
            )
            workflow_id = events[0]["workflow_id"]
            executed = (await http.get("/actions", params={"run": workflow_id})).json()
            chosen = next(a for a in executed if a["entity_id"] == drafts[0])
            undone = await http.post(f"/actions/{chosen['key']}/undo")
            again = await http.post(f"/actions/{chosen['key']}/undo")

    assert sorted(a["entity_id"] for a in executed) == drafts
    assert undone.status_code == 200, undone.text
    assert undone.json()["success"] is True and undone.json()["entity_id"] == drafts[0]
    assert again.status_code == 409 and "already undone" in again.json()["detail"]
    statuses = dict(
        (
            await g.ro_query(
                "MATCH (o:PurchaseOrder) WHERE o.po_number IN $ids RETURN o.po_number, o.status", {"ids": drafts}
            )
        ).result_set
    )
    assert statuses == {drafts[0]: "draft", drafts[1]: "submitted"}


async def test_a_finished_run_reads_back_from_another_chat_server(make_stack, demo_copy, unique: str) -> None:
    """A chat server that never held the run (restarted, or another replica) answers GET /runs/{id}/events
    for a finished run from Temporal: the run's own answer, then its confidence and `done`."""
    graph_name, _ = demo_copy
    with ScriptedLLM(ConversationalModel()) as llm:
        stack = await make_stack(llm.base_url, graph_name=graph_name, ontology_path=str(demo_graph.ONTOLOGY_PATH))
        async with chat_server(stack) as server, server.client() as http:
            events: list[dict[str, Any]] = []
            approving = asyncio.create_task(approve_on_request(http, events))
            await asyncio.wait_for(collect(http, {"query": PAY}, events), 180)
            await approving
        workflow_id = events[0]["workflow_id"]
        async with chat_server(stack) as other, other.client() as http:
            async with http.stream("GET", f"/runs/{workflow_id}/events") as response:
                replayed = [event async for _, event in sse_events(response)]

    answer = "".join(e["content"] for e in events if e["type"] == "content")
    assert [e["type"] for e in replayed] == ["content", "confidence", "done"], replayed
    assert replayed[0]["content"] == answer and "18 succeeded, 2 failed" in answer
