"""Asking through TrustGraph's own client: the request/response client and the end-of-dialog handling of
TrustGraph 2.11.1 (`trustgraph.base`), one client kept for the whole run as a long-lived caller (the gateway)
keeps it. That client cannot look a run up in Temporal: an answer the topic dropped reaches it only through the
end of dialog's repeat (service/response_publisher.py), or not at all.

The request id is generated inside TrustGraph's client; the producer it sends with is wrapped so the benchmark
learns it, to tell a run that completed but whose answer never came ("lost") from one still going ("slow")."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from trustgraph.base.agent_client import AgentClient
from trustgraph.base.pubsub import get_async_pubsub
from trustgraph.base.request_response_client import RequestResponseClient
from trustgraph.base.request_response_spec import _make_impl_wrapper
from trustgraph.schema import AgentRequest as TgAgentRequest
from trustgraph.schema import AgentResponse as TgAgentResponse

from bench.kgqa.runner import HUMAN_ASKED, Asker, Outcome, outcome_of, terminate_run
from contracts.names import workflow_id_for
from embedded.stack import EmbeddedStack
from service.run_recovery import RunLookup


class _RequestIds:
    """The producer TrustGraph's client sends with, noting each request's `id` property on the way."""

    def __init__(self, producer: Any) -> None:
        self._producer = producer
        self.last: str | None = None

    async def send(self, message: Any, properties: dict[str, str] | None = None) -> Any:
        self.last = (properties or {}).get("id")
        return await self._producer.send(message, properties)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._producer, name)


@asynccontextmanager
async def trustgraph_asker(stack: EmbeddedStack) -> AsyncIterator[Asker]:
    """An asker (bench/kgqa/runner.ask_all) over one TrustGraph request/response client on the agent's
    default-flow queues, closed on the way out."""
    backend = get_async_pubsub(pulsar_host=stack.pulsar_url)
    client = await RequestResponseClient.create(
        backend=backend,
        request_topic="request:tg:agent:default:default",
        response_topic="response:tg:agent:default:default",
        request_schema=TgAgentRequest,
        response_schema=TgAgentResponse,
    )
    ids = _RequestIds(client.producer)
    client.producer = ids
    agent = _make_impl_wrapper(client, AgentClient)  # as TrustGraph's processors hold an agent client
    runs = RunLookup(address=stack.temporal_address, namespace=stack.o.temporal_namespace)

    async def ask_one(stack: EmbeddedStack, question: str, timeout_s: float) -> Outcome:
        parts: list[str] = []
        messages: list[str] = []
        asked_human = False

        async def recipient(response: TgAgentResponse) -> bool:
            """As TrustGraph's AgentClient reads a response: an error ends the request, answers accumulate,
            the end of dialog completes it."""
            nonlocal asked_human
            if response.error:
                raise RuntimeError(response.error.message)
            messages.append(f"{response.message_type}: {response.content}")
            if response.message_type == "observation" and any(k in (response.content or "") for k in HUMAN_ASKED):
                asked_human = True
            if response.message_type == "answer" and response.content:
                parts.append(response.content)
            return bool(response.end_of_dialog)

        error: str | None = None
        delivered_how = "arrived"
        started = time.perf_counter()
        # As AgentClient.invoke sends it; the stack's own default gives up on a human after 10 s (runner.SERVICE_ENV).
        request = TgAgentRequest(question=question, state="", history=[])
        try:
            await agent.request(request, recipient=recipient, timeout=timeout_s)
        except TimeoutError as exc:
            error = f"timeout: no end of dialog within {timeout_s:.0f}s ({exc or 'TrustGraph client'})"
            outcome = await runs.outcome(workflow_id_for(ids.last)) if ids.last else None
            if outcome is not None and outcome.closed:
                delivered_how = "lost"
            else:
                delivered_how = "slow"
                if ids.last:
                    await terminate_run(stack, ids.last, "kgqa benchmark: no answer within the ask timeout")
        except RuntimeError as exc:
            error = f"error: {exc}"
        except asyncio.CancelledError:
            if ids.last:
                await terminate_run(stack, ids.last, "kgqa benchmark interrupted")
            raise
        seconds = time.perf_counter() - started
        return await outcome_of(
            stack, ids.last or "", "".join(parts), seconds, asked_human, error, messages, delivered_how
        )

    try:
        yield ask_one
    finally:
        with contextlib.suppress(Exception):
            await client.close()
        with contextlib.suppress(Exception):
            await backend.close()
