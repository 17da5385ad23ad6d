"""TrustGraph mode: planning, synthesis and the tools call TrustGraph's text-completion, graph-rag and prompt
services over Pulsar (request/response by `id` property), and no local LLM or graph is touched.

TrustGraph's model-backed services (text-completion, graph-rag, prompt) would need a model and stores of their
own: stand-ins on pulsar-lite answer in their response shapes (trustgraph-base 2.11.1 schemas), as the scripted
LLM stands in for a model elsewhere (docs/testing.md lists every stand-in)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pulsar

from cli.ask import ask
from contracts.wire import AgentRequest
from embedded.processes import free_port
from service.connections import pulsar_client
from service.run_recovery import RunLookup

PLAN = {
    "steps": [
        {
            "id": "s1",
            "function": "KnowledgeQuery",
            "dependencies": [],
            "arguments": {"question": "Where is Acme Industrial based?"},
        },
        {
            "id": "s2",
            "function": "Prompt",
            "dependencies": ["s1"],
            "arguments": {"template": "question", "input": "Where is Acme Industrial based?"},
        },
    ]
}
GRAPH_RAG_ANSWER = "Acme Industrial is based in Mexico."


async def trustgraph_stand_in(
    pulsar_url: str, workspace: str, seen: dict[str, list[dict[str, Any]]], ready: asyncio.Event | None = None
) -> None:
    """TrustGraph's services on their non-persistent queues; `ready` is set once they listen (a request sent
    before that is lost, as on TrustGraph's own non-persistent topics)."""
    client = pulsar_client(pulsar_url)
    services = ("text-completion", "graph-rag", "prompt")
    # The queues TrustGraph's 2.x flow blueprint gives its agent: the prompt service is the RAG one, prompt-rag.
    queues = {"text-completion": "text-completion", "graph-rag": "graph-rag", "prompt": "prompt-rag"}
    consumers = {
        s: await client.subscribe(
            f"non-persistent://tg/request/{queues[s]}:{workspace}:default",
            f"{s}-svc",
            consumer_type=pulsar.ConsumerType.Shared,
        )
        for s in services
    }
    producers = {
        s: await client.create_producer(
            f"non-persistent://tg/response/{queues[s]}:{workspace}:default", batching_enabled=False
        )
        for s in services
    }
    if ready is not None:
        ready.set()

    async def serve(service: str) -> None:
        while True:
            message = await consumers[service].receive()
            await consumers[service].acknowledge(message)
            request = json.loads(message.data())
            seen[service].append(request)
            props = {"id": message.properties()["id"]}
            if service == "text-completion":
                text = json.dumps(PLAN) if request.get("schema") else GRAPH_RAG_ANSWER
                replies = [
                    {
                        "error": None,
                        "response": text,
                        "in_token": 5,
                        "out_token": 7,
                        "model": "tg-llm",
                        "end_of_stream": True,
                    }
                ]
            elif service == "graph-rag":
                replies = [
                    {
                        "error": None,
                        "response": "",
                        "message_type": "explain",
                        "explain_id": "urn:x",
                        "end_of_stream": False,
                        "end_of_session": False,
                    },
                    {
                        "error": None,
                        "response": GRAPH_RAG_ANSWER,
                        "message_type": "chunk",
                        "end_of_stream": True,
                        "end_of_session": True,
                        "sources": [{"uri": "urn:doc:suppliers", "title": "Supplier register"}],
                    },
                ]
            else:
                replies = [{"error": None, "text": f"Answer: {GRAPH_RAG_ANSWER}", "object": "", "end_of_stream": True}]
            for reply in replies:
                await producers[service].send(json.dumps(reply).encode(), properties=props)

    try:
        await asyncio.gather(*(serve(s) for s in services))
    finally:
        await client.close()


async def test_trustgraph_mode_answers_with_trustgraphs_llm_and_graph(make_stack, unique: str) -> None:
    seen: dict[str, list[dict[str, Any]]] = {"text-completion": [], "graph-rag": [], "prompt": []}
    # No local LLM and no override wait: a weak step would end the run instead of hanging the test.
    stack = await make_stack(f"http://127.0.0.1:{free_port()}/v1", tool_backend="trustgraph", override_enabled=False)
    listening = asyncio.Event()
    stand_in = asyncio.create_task(trustgraph_stand_in(stack.config.pulsar_url, f"test-{unique}", seen, listening))
    await asyncio.wait_for(listening.wait(), 30)
    try:
        messages = [
            m
            async for m in ask(
                stack.config.pulsar_url,
                AgentRequest(question="Where is Acme Industrial?"),
                request_topic=stack.request_topic,
                response_topic=stack.config.response_topic,
                timeout_s=60,
                runs=RunLookup(stack.client),
            )
        ]
    finally:
        stand_in.cancel()
    final = messages[-1]
    assert final.message_type == "answer", [m.content for m in messages]
    assert final.content.startswith(GRAPH_RAG_ANSWER) and "Confidence: " in final.content
    text = "\n".join(m.content for m in messages)
    assert "KnowledgeQuery" in text and "graph-rag answer backed by 1 source document(s)" in text
    # The planner asked TrustGraph's LLM with the plan schema; synthesis went there too.
    assert seen["text-completion"][0]["schema"]["properties"]["steps"]
    assert "KnowledgeQuery" in json.dumps(seen["text-completion"][0]["schema"])
    assert "GraphQuery" not in json.dumps(seen["text-completion"][0]["schema"])  # no local graph in this mode
    assert seen["graph-rag"][0]["query"] == "Where is Acme Industrial based?"
    assert seen["prompt"][0]["id"] == "question" and json.loads(seen["prompt"][0]["terms"]["input"]).startswith("Where")
    # The run's usage, as TrustGraph's agent reports it: every text-completion call's tokens, on the last message.
    calls = len(seen["text-completion"])
    assert calls >= 2 and (final.in_token, final.out_token, final.model) == (5 * calls, 7 * calls, "tg-llm")
