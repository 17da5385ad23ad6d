"""The shared LLM client over real HTTP: retryable vs non-retryable failures, constrained JSON requests."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry
from temporalio.exceptions import ApplicationError

from backends.llm import LLMClient, MeteredChatModel
from contracts.redaction import shown_url
from embedded.processes import free_port
from service.agent_metrics import AgentMetrics
from tests.scripted_llm import ScriptedLLM

MESSAGES = [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize(
    ("status", "kind", "retryable"),
    [
        (500, "LLMServerError", True),
        (503, "LLMServerError", True),
        (429, "LLMServerError", True),
        (400, "LLMRequestRejected", False),
        (404, "LLMRequestRejected", False),
        (401, "LLMAuthError", False),
        (403, "LLMAuthError", False),
    ],
)
async def test_http_errors_are_classified(status: int, kind: str, retryable: bool) -> None:
    with ScriptedLLM(lambda body: (status, "nope")) as server:
        client = LLMClient(server.base_url, "m")
        with pytest.raises(ApplicationError) as caught:
            await client.chat(MESSAGES)
        await client.aclose()
    assert caught.value.type == kind
    assert caught.value.non_retryable is (not retryable)
    assert f"HTTP {status}" in caught.value.message


async def test_unreachable_server_is_retryable_and_names_the_address() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    client = LLMClient(url, "m", timeout_s=2)
    with pytest.raises(ApplicationError) as caught:
        await client.chat(MESSAGES)
    await client.aclose()
    assert caught.value.type == "LLMUnavailable" and not caught.value.non_retryable
    assert shown_url(url) in caught.value.message  # where it is, without path or credentials


@pytest.mark.parametrize("body", ['{"object": "chat.completion"}', '{"choices": []}', "<html>oops</html>"])
async def test_a_200_without_a_completion_is_a_retryable_server_fault(body: str) -> None:
    with ScriptedLLM(lambda request: (200, body), raw=True) as server:
        client = LLMClient(server.base_url, "m")
        with pytest.raises(ApplicationError) as caught:
            await client.chat(MESSAGES)
        await client.aclose()
    assert caught.value.type == "LLMBadResponse" and not caught.value.non_retryable


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("json_object_schema", {"type": "json_object", "schema": {"type": "object"}}),
        (
            "json_schema",
            {"type": "json_schema", "json_schema": {"name": "output", "schema": {"type": "object"}, "strict": True}},
        ),
    ],
)
async def test_schema_constrained_output_is_requested_in_the_configured_dialect(mode: str, expected: dict) -> None:
    with ScriptedLLM(lambda body: (200, "{}")) as server:
        client = LLMClient(server.base_url, "m", api_key="k", json_mode=mode)  # type: ignore[arg-type]
        completion = await client.chat(MESSAGES, json_schema={"type": "object"})
        await client.aclose()
    assert server.requests[0]["response_format"] == expected
    assert completion.text == "{}" and completion.in_tokens == 10


def metered(base_url: str, meter_tokens: bool = True) -> tuple[MeteredChatModel, CollectorRegistry]:
    registry = CollectorRegistry()
    return MeteredChatModel(LLMClient(base_url, "m"), AgentMetrics(registry), "served-model", meter_tokens), registry


def tokens(registry: CollectorRegistry, direction: str) -> float | None:
    return registry.get_sample_value("tg_metering_tokens_total", {"model": "served-model", "direction": direction})


async def test_every_call_is_timed_and_its_tokens_metered_under_the_configured_model_name() -> None:
    with ScriptedLLM(lambda body: (200, "fine")) as server:  # reports 10 prompt and 5 completion tokens
        llm, registry = metered(server.base_url)
        for _ in range(2):
            assert (await llm.chat(MESSAGES)).text == "fine"
        await llm.aclose()
    assert registry.get_sample_value("tg_agent_llm_duration_seconds_count", {"processor": "agent-manager"}) == 2
    assert tokens(registry, "input") == 20 and tokens(registry, "output") == 10


async def test_a_failed_call_is_timed_and_raises_as_before() -> None:
    with ScriptedLLM(lambda body: (503, "busy")) as server:
        llm, registry = metered(server.base_url)
        with pytest.raises(ApplicationError) as caught:
            await llm.chat(MESSAGES)
        await llm.aclose()
    assert caught.value.type == "LLMServerError"
    assert registry.get_sample_value("tg_agent_llm_duration_seconds_count", {"processor": "agent-manager"}) == 1
    assert tokens(registry, "input") is None


@pytest.mark.parametrize(
    "usage",
    ['{"prompt_tokens": -3, "completion_tokens": "many"}', "null", '{"prompt_tokens": true, "completion_tokens": 1.5}'],
)
async def test_nonsense_token_counts_from_a_server_are_not_metered(usage: str) -> None:
    body = (
        f'{{"model": "other", "choices": [{{"message": {{"role": "assistant", "content": "ok"}}}}], "usage": {usage}}}'
    )
    with ScriptedLLM(lambda request: (200, body), raw=True) as server:
        llm, registry = metered(server.base_url)
        assert (await llm.chat(MESSAGES)).text == "ok"
        await llm.aclose()
    assert tokens(registry, "input") is None and tokens(registry, "output") is None
    assert registry.get_sample_value("tg_metering_tokens_total", {"model": "other", "direction": "input"}) is None


async def test_tokens_are_left_to_trustgraph_when_its_services_answer() -> None:
    """With tool_backend trustgraph, TrustGraph's metering already counts its text-completion responses."""
    with ScriptedLLM(lambda body: (200, "fine")) as server:
        llm, registry = metered(server.base_url, meter_tokens=False)
        await llm.chat(MESSAGES)
        await llm.aclose()
    assert registry.get_sample_value("tg_agent_llm_duration_seconds_count", {"processor": "agent-manager"}) == 1
    assert tokens(registry, "input") is None


class Told:
    """What a streamed call told its caller, piece by piece."""

    def __init__(self) -> None:
        self.pieces: list[str] = []

    async def __call__(self, piece: str) -> None:
        self.pieces.append(piece)


class Sure:
    """A model sure of every token, writing `text`."""

    def __init__(self, text: object) -> None:
        self.text = text

    def __call__(self, body: dict) -> tuple[int, object]:
        return 200, self.text

    def token_logprob(self, body: dict) -> float:
        return -0.01


async def test_a_streamed_completion_is_told_piece_by_piece_and_metered_like_a_whole_one() -> None:
    text = "Acme Industrial has the most purchase orders. It has nine of them."
    with ScriptedLLM(Sure(text)) as server:
        llm, registry = metered(server.base_url)
        told = Told()
        completion = await llm.chat_stream(MESSAGES, on_text=told, logprobs=True)
        await llm.aclose()
        asked = server.requests[0]
    assert asked["stream"] is True and asked["stream_options"] == {"include_usage": True}
    assert len(told.pieces) > 2 and "".join(told.pieces) == completion.text == text
    assert (completion.in_tokens, completion.out_tokens, completion.model) == (10, 5, "scripted")
    # The log-probabilities given along the way spell the text: token evidence, as for a whole completion.
    assert completion.token_logprobs is not None and "".join(t for t, _ in completion.token_logprobs) == text
    assert tokens(registry, "input") == 10 and tokens(registry, "output") == 5


@pytest.mark.parametrize("done", [False, True], ids=["connection closed", "[DONE] without a finish reason"])
async def test_a_stream_cut_off_mid_answer_is_a_retryable_fault_after_what_arrived(done: bool) -> None:
    from tests.scripted_llm import Hangup

    with ScriptedLLM(lambda body: (200, ["The first sentence. ", "The sec", Hangup(done)])) as server:
        client = LLMClient(server.base_url, "m")
        told = Told()
        with pytest.raises(ApplicationError) as caught:
            await client.chat_stream(MESSAGES, on_text=told)
        await client.aclose()
    assert caught.value.type == "LLMBadResponse" and not caught.value.non_retryable
    assert "".join(told.pieces) == "The first sentence. The sec"


@pytest.mark.parametrize(("status", "kind"), [(503, "LLMServerError"), (401, "LLMAuthError")])
async def test_a_refused_stream_is_classified_as_a_refused_call(status: int, kind: str) -> None:
    with ScriptedLLM(lambda body: (status, "nope")) as server:
        client = LLMClient(server.base_url, "m")
        with pytest.raises(ApplicationError) as caught:
            await client.chat_stream(MESSAGES, on_text=Told())
        await client.aclose()
    assert caught.value.type == kind


async def test_a_server_that_ignores_stream_is_told_its_whole_completion_once() -> None:
    body = '{"model": "m", "choices": [{"message": {"role": "assistant", "content": "whole"}}]}'
    with ScriptedLLM(lambda request: (200, body), raw=True) as server:
        client = LLMClient(server.base_url, "m")
        told = Told()
        completion = await client.chat_stream(MESSAGES, on_text=told)
        await client.aclose()
    assert told.pieces == ["whole"] and completion.text == "whole"
