"""The local LLM server's streamed chat completions (embedded/token_logprobs.py): the chunks pass as the model
writes them, recorded while they are generated, then one chunk carries the usage (prompt and written tokens,
which llama-cpp-python's own stream leaves out) and, when asked for, every written token's log-probability.
llama-cpp-python itself refuses `logprobs` on a model loaded without `logits_all`, so the model's own call is
made without it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from embedded import token_logprobs
from embedded.token_logprobs import RECORDING, Recording, streamed_with_usage


class FakeLlama:
    """Samples one token per chunk, as llama-cpp-python's sampler would record it."""


def chat(llama: Any, *args: Any, **kwargs: Any) -> Iterator[dict[str, Any]]:
    assert kwargs["stream"] is True
    record: Recording = getattr(llama, RECORDING)
    for n, text in enumerate(["Acme ", "leads."]):
        record.prompt_tokens = record.prompt_tokens or 42  # what RecordingSampler notes at the first token
        record.tokens.append((n, -0.5))  # and as each token is sampled
        yield {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}],
        }
    yield {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
    }


@pytest.fixture(autouse=True)
def every_token_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """No model vocabulary here: every recorded token is a written one."""
    monkeypatch.setattr(token_logprobs, "written", lambda llama, record: record.tokens)
    monkeypatch.setattr(
        token_logprobs,
        "openai_content",
        lambda llama, record: [
            {"token": f"t{token}", "logprob": logprob, "bytes": None, "top_logprobs": []}
            for token, logprob in record.tokens
        ],
    )


def test_a_streamed_completion_ends_with_its_usage_and_the_written_tokens_log_probabilities() -> None:
    llama = FakeLlama()
    asked = {"messages": [], "stream": True, "logprobs": True}

    def without_logprobs(llama: Any, *args: Any, **kwargs: Any) -> Iterator[dict[str, Any]]:
        assert kwargs["logprobs"] is False and kwargs["top_logprobs"] is None  # the model would refuse them
        return chat(llama, *args, **kwargs)

    chunks = list(streamed_with_usage(llama, without_logprobs, (), asked, logprobs=True))
    texts = [c["choices"][0]["delta"].get("content") for c in chunks]
    assert texts == ["Acme ", "leads.", None, None]  # the model's chunks, unchanged and in order, then one more
    assert chunks[2]["choices"][0]["finish_reason"] == "stop"
    last = chunks[-1]
    assert last["id"] == "c" and last["model"] == "m"
    assert last["usage"] == {"prompt_tokens": 42, "completion_tokens": 2, "total_tokens": 44}
    assert last["choices"][0]["logprobs"]["content"] == [
        {"token": "t0", "logprob": -0.5, "bytes": None, "top_logprobs": []},
        {"token": "t1", "logprob": -0.5, "bytes": None, "top_logprobs": []},
    ]
    assert getattr(llama, RECORDING) is None  # the recording ends with the generation


def test_a_stream_without_log_probabilities_still_ends_with_its_usage() -> None:
    llama = FakeLlama()
    chunks = list(streamed_with_usage(llama, chat, (), {"messages": [], "stream": True}, logprobs=False))
    assert [c["choices"][0]["delta"].get("content") for c in chunks] == ["Acme ", "leads.", None, None]
    assert chunks[-1]["usage"]["completion_tokens"] == 2 and "logprobs" not in chunks[-1]["choices"][0]


def test_a_stream_the_server_stops_reading_ends_the_recording() -> None:
    llama = FakeLlama()
    stream = streamed_with_usage(llama, chat, (), {"messages": [], "stream": True, "logprobs": True}, logprobs=True)
    next(stream)
    stream.close()  # the client went away
    assert getattr(llama, RECORDING) is None
