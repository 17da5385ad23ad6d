"""An activity's LLM usage is counted once per call, whichever layers the call passes (the worker's metered
model over the OpenAI-compatible client), through the real client against the scripted server."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from backends.llm import LLMClient, MeteredChatModel, metering
from service.agent_metrics import AgentMetrics
from tests.scripted_llm import ScriptedLLM


async def test_each_call_is_counted_once_through_the_metered_client() -> None:
    with ScriptedLLM(lambda body: (200, "fine")) as llm:
        client = LLMClient(llm.base_url, "scripted")
        model = MeteredChatModel(client, AgentMetrics(CollectorRegistry()), "scripted", meter_tokens=True)
        try:
            with metering() as meter:
                for _ in range(3):
                    await model.chat([{"role": "user", "content": "hello"}])
            await model.chat([{"role": "user", "content": "outside any activity"}])  # counted nowhere
        finally:
            await model.aclose()
    usage = meter.usage()
    assert (usage.calls, usage.in_tokens, usage.out_tokens, usage.model) == (3, 30, 15, "scripted")
