"""The local LLM server's log-probabilities for a streamed chat completion (embedded/token_logprobs.py): the
chunks pass as the model writes them, recorded while they are generated, then one chunk carries every written
token's log-probability. llama-cpp-python itself refuses `logprobs` on a model loaded without `logits_all`, so
the model's own call is made without it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from embedded import token_logprobs
from embedded.token_logprobs import RECORDING, streamed_with_logprobs


class FakeLlama:
    """Samples one token per chunk, as llama-cpp-python's sampler would record it."""


def chat(llama: Any, *args: Any, **kwargs: Any) -> Iterator[dict[str, Any]]:
    assert kwargs["stream"] is True and kwargs["logprobs"] is False and kwargs["top_logprobs"] is None
    for n, text in enumerate(["Acme ", "leads."]):
        getattr(llama, RECORDING).append((n, -0.5))  # what RecordingSampler notes as the token is sampled
        yield {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
               "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
    yield {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
           "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}


def test_a_streamed_completion_ends_with_the_written_tokens_log_probabilities(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(token_logprobs, "openai_content", lambda llama, record: [
        {"token": f"t{token}", "logprob": logprob, "bytes": None, "top_logprobs": []} for token, logprob in record])
    llama = FakeLlama()
    chunks = list(streamed_with_logprobs(llama, chat, (), {"messages": [], "stream": True, "logprobs": True}))
    texts = [c["choices"][0]["delta"].get("content") for c in chunks]
    assert texts == ["Acme ", "leads.", None, None]  # the model's chunks, unchanged and in order, then one more
    assert chunks[2]["choices"][0]["finish_reason"] == "stop"
    last = chunks[-1]
    assert last["id"] == "c" and last["model"] == "m"
    assert last["choices"][0]["logprobs"]["content"] == [
        {"token": "t0", "logprob": -0.5, "bytes": None, "top_logprobs": []},
        {"token": "t1", "logprob": -0.5, "bytes": None, "top_logprobs": []}]
    assert getattr(llama, RECORDING) is None  # the recording ends with the generation


def test_a_stream_the_server_stops_reading_ends_the_recording(monkeypatch: pytest.MonkeyPatch) -> None:
    llama = FakeLlama()
    stream = streamed_with_logprobs(llama, chat, (), {"messages": [], "stream": True, "logprobs": True})
    next(stream)
    stream.close()  # the client went away
    assert getattr(llama, RECORDING) is None
