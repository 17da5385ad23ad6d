"""A dashboard or alert built for TrustGraph's agent-manager reads the same series from this service: the
request consumer's and the response producer's, under TrustGraph's names and the `processor` label."""

from __future__ import annotations

from prometheus_client import REGISTRY

from service.defaults import PROCESSOR_ID
from tests.integration.test_end_to_end import collect, reads_the_rows
from tests.scripted_llm import ScriptedLLM


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, {"processor": PROCESSOR_ID, **labels}) or 0.0


async def test_the_request_consumer_and_the_response_producer_count_as_trustgraph_counts_them(make_stack) -> None:
    with ScriptedLLM(reads_the_rows) as llm:
        stack = await make_stack(llm.base_url)
        request_topic, response_topic = stack.request_topic, stack.config.response_topic
        assert sample("tg_consumer_state", consumer=request_topic, tg_consumer_state="running") == 1
        messages = await collect(stack, "Which supplier has the most purchase orders?")

    assert messages[-1].message_type == "answer"
    assert sample("tg_consumer_processing_total", consumer=request_topic, status="ok") == 1
    assert sample("tg_consumer_processing_total", consumer=request_topic, status="error") == 0
    assert sample("tg_consumer_request_duration_seconds_count", consumer=request_topic) == 1
    # Every message the caller received was counted once, on the topic it went to.
    assert sample("tg_producer_messages_total", producer=response_topic) == len(messages)
