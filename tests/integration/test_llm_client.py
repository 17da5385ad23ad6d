"""The shared LLM client over real HTTP: retryable vs non-retryable failures, constrained JSON requests."""

from __future__ import annotations

import pytest
from temporalio.exceptions import ApplicationError

from backends.llm import LLMClient
from embedded.processes import free_port
from tests.scripted_llm import ScriptedLLM

MESSAGES = [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize(("status", "kind", "retryable"), [
    (500, "LLMServerError", True),
    (503, "LLMServerError", True),
    (429, "LLMServerError", True),
    (400, "LLMRequestRejected", False),
    (404, "LLMRequestRejected", False),
    (401, "LLMAuthError", False),
    (403, "LLMAuthError", False),
])
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
    assert url in caught.value.message


@pytest.mark.parametrize("body", ['{"object": "chat.completion"}', '{"choices": []}', "<html>oops</html>"])
async def test_a_200_without_a_completion_is_a_retryable_server_fault(body: str) -> None:
    with ScriptedLLM(lambda request: (200, body), raw=True) as server:
        client = LLMClient(server.base_url, "m")
        with pytest.raises(ApplicationError) as caught:
            await client.chat(MESSAGES)
        await client.aclose()
    assert caught.value.type == "LLMBadResponse" and not caught.value.non_retryable


@pytest.mark.parametrize(("mode", "expected"), [
    ("json_object_schema", {"type": "json_object", "schema": {"type": "object"}}),
    ("json_schema", {"type": "json_schema",
                     "json_schema": {"name": "output", "schema": {"type": "object"}, "strict": True}}),
])
async def test_schema_constrained_output_is_requested_in_the_configured_dialect(mode: str, expected: dict) -> None:
    with ScriptedLLM(lambda body: (200, "{}")) as server:
        client = LLMClient(server.base_url, "m", api_key="k", json_mode=mode)  # type: ignore[arg-type]
        completion = await client.chat(MESSAGES, json_schema={"type": "object"})
        await client.aclose()
    assert server.requests[0]["response_format"] == expected
    assert completion.text == "{}" and completion.in_tokens == 10
