"""Log-probabilities of the tokens the local model writes, in the OpenAI chat form
(`choices[0].logprobs.content`: token, logprob, bytes), for llama-cpp-python's server; and the usage of a
streamed completion, which llama-cpp-python leaves out (it ignores OpenAI's `stream_options.include_usage`).

llama-cpp-python answers `logprobs: true` only when the model was loaded with `logits_all`, which keeps the
logits of every prompt token: 8,192 x 151,936 floats (5 GB) and the output layer run over every prompt token
(seconds per planner call on 2 cores). The log-probability of each token *written* needs only the logits the
sampler reads anyway, so this records it as the token is sampled: one log-sum-exp over the vocabulary, well
under a millisecond against ~50 ms to decode the token. No top alternatives are given (`top_logprobs` is
ignored). Runs inside the LLM server's process (embedded/llm_server.py), never in the worker.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

# Set on a Llama while one chat completion that asked for log-probabilities, or streams, runs.
RECORDING = "_tg_token_logprobs"


@dataclass
class Recording:
    """What one completion's sampler saw: each written token with its logprob, and the prompt's length."""

    tokens: list[tuple[int, float]] = field(default_factory=list)
    prompt_tokens: int | None = None  # the tokens in the model's context when the first token was sampled


def chosen_logprob(ctx: Any, idx: int, token: int, n_vocab: int) -> float:
    """log p(token) under the model's own distribution at `idx` (temperature 1, before any sampler)."""
    from llama_cpp import llama_cpp as C

    logits = np.ctypeslib.as_array(C.llama_get_logits_ith(ctx.ctx, idx), shape=(n_vocab,))
    top = float(logits.max())
    return float(logits[token]) - top - float(np.log(np.exp(logits - top).sum()))


class RecordingSampler:
    """Any llama-cpp-python sampler (`sample(ctx, idx)`, `close()`), noting each chosen token's logprob, and the
    prompt's length (`llama.n_tokens` before the first token: the whole prompt, a cached prefix included)."""

    def __init__(self, inner: Any, record: Recording, llama: Any) -> None:
        self.inner = inner
        self.record = record
        self.llama = llama
        self.n_vocab = llama.n_vocab()

    def sample(self, ctx: Any, idx: int) -> int:
        if self.record.prompt_tokens is None:
            self.record.prompt_tokens = int(self.llama.n_tokens)
        token = self.inner.sample(ctx, idx)
        self.record.tokens.append((token, chosen_logprob(ctx, idx, token, self.n_vocab)))
        return token

    def close(self) -> None:
        self.inner.close()


def written(llama: Any, record: Recording) -> list[tuple[int, float]]:
    """The recorded tokens that are in the text: end-of-generation tokens left out."""
    from llama_cpp import llama_cpp as C

    return [(token, logprob) for token, logprob in record.tokens if not C.llama_vocab_is_eog(llama._model.vocab, token)]


def openai_content(llama: Any, record: Recording) -> list[dict[str, Any]]:
    """The written tokens in OpenAI's form."""
    content = []
    for token, logprob in written(llama, record):
        piece = llama.detokenize([token])
        content.append(
            {
                "token": piece.decode("utf-8", errors="replace"),
                "logprob": round(logprob, 5),
                "bytes": list(piece),
                "top_logprobs": [],
            }
        )
    return content


def streamed_with_usage(
    llama: Any, chat: Any, args: Any, kwargs: dict[str, Any], logprobs: bool
) -> Iterator[dict[str, Any]]:
    """A streamed chat completion's chunks as the model writes them, then one more chunk with no text that
    carries the usage (as OpenAI's last chunk does) and, when asked for, every written token's
    `logprobs.content` (a reader gathers them from whatever chunk carries them). The recording lasts exactly
    as long as the generation: the chunks are produced only as the server reads them."""
    record = Recording()
    setattr(llama, RECORDING, record)
    last: dict[str, Any] | None = None
    try:
        # A server with logits_all gives its own log-probabilities when asked (`logprobs` False here).
        asked = {**kwargs, "logprobs": False, "top_logprobs": None} if logprobs else kwargs
        for chunk in chat(llama, *args, **asked):
            last = chunk
            yield chunk
    finally:
        setattr(llama, RECORDING, None)
    if last is None:
        return
    out_tokens = len(written(llama, record))
    choice: dict[str, Any] = {"index": 0, "delta": {}, "finish_reason": None}
    if logprobs:
        choice["logprobs"] = {"content": openai_content(llama, record), "refusal": None}
    # No token sampled (an empty completion): the prompt's length is unknown, and no usage beats a made-up one.
    usage = (
        {}
        if record.prompt_tokens is None
        else {
            "usage": {
                "prompt_tokens": record.prompt_tokens,
                "completion_tokens": out_tokens,
                "total_tokens": record.prompt_tokens + out_tokens,
            }
        }
    )
    yield {key: last[key] for key in ("id", "object", "created", "model") if key in last} | {
        "choices": [choice],
        **usage,
    }


def install() -> bool:
    """Make the server answer `logprobs: true` on chat completions without `logits_all`, and give every streamed
    chat completion its usage in a last chunk. Returns False,
    changing nothing, if this llama-cpp-python no longer looks like the one this was written against."""
    import llama_cpp

    init_sampler = getattr(llama_cpp.Llama, "_init_sampler", None)
    chat = getattr(llama_cpp.Llama, "create_chat_completion", None)
    if init_sampler is None or chat is None or "logprobs" not in inspect.signature(chat).parameters:
        log.warning("token_logprobs_not_installed: Llama.create_chat_completion(logprobs=...) not found")
        return False

    def recording_init_sampler(self: Any, *args: Any, **kwargs: Any) -> Any:
        sampler = init_sampler(self, *args, **kwargs)
        record = getattr(self, RECORDING, None)
        return sampler if record is None else RecordingSampler(sampler, record, self)

    def create_chat_completion(self: Any, *args: Any, **kwargs: Any) -> Any:
        ours = bool(kwargs.get("logprobs")) and not self._logits_all  # log-probabilities recorded here
        if kwargs.get("stream"):
            return streamed_with_usage(self, chat, args, kwargs, logprobs=ours)
        if not ours:
            return chat(self, *args, **kwargs)
        record = Recording()
        setattr(self, RECORDING, record)
        try:
            result = chat(self, *args, **{**kwargs, "logprobs": False, "top_logprobs": None})
        finally:
            setattr(self, RECORDING, None)
        result["choices"][0]["logprobs"] = {"content": openai_content(self, record), "refusal": None}
        return result

    # The patch is the point: mypy's method-assign guards against doing this by accident.
    llama_cpp.Llama._init_sampler = recording_init_sampler  # type: ignore[method-assign]
    llama_cpp.Llama.create_chat_completion = create_chat_completion  # type: ignore[method-assign]
    return True
