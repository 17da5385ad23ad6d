"""Log-probabilities of the tokens the local model writes, in the OpenAI chat form
(`choices[0].logprobs.content`: token, logprob, bytes), for llama-cpp-python's server.

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
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

# Set on a Llama while one chat completion that asked for log-probabilities runs: (token id, logprob) each.
RECORDING = "_tg_token_logprobs"


def chosen_logprob(ctx: Any, idx: int, token: int, n_vocab: int) -> float:
    """log p(token) under the model's own distribution at `idx` (temperature 1, before any sampler)."""
    from llama_cpp import llama_cpp as C

    logits = np.ctypeslib.as_array(C.llama_get_logits_ith(ctx.ctx, idx), shape=(n_vocab,))
    top = float(logits.max())
    return float(logits[token]) - top - float(np.log(np.exp(logits - top).sum()))


class RecordingSampler:
    """Any llama-cpp-python sampler (`sample(ctx, idx)`, `close()`), noting each chosen token's logprob."""

    def __init__(self, inner: Any, record: list[tuple[int, float]], n_vocab: int) -> None:
        self.inner = inner
        self.record = record
        self.n_vocab = n_vocab

    def sample(self, ctx: Any, idx: int) -> int:
        token = self.inner.sample(ctx, idx)
        self.record.append((token, chosen_logprob(ctx, idx, token, self.n_vocab)))
        return token

    def close(self) -> None:
        self.inner.close()


def openai_content(llama: Any, record: list[tuple[int, float]]) -> list[dict[str, Any]]:
    """The recorded tokens in OpenAI's form, end-of-generation tokens left out (they are not in the text)."""
    from llama_cpp import llama_cpp as C

    content = []
    for token, logprob in record:
        if C.llama_vocab_is_eog(llama._model.vocab, token):
            continue
        piece = llama.detokenize([token])
        content.append({"token": piece.decode("utf-8", errors="replace"), "logprob": round(logprob, 5),
                        "bytes": list(piece), "top_logprobs": []})
    return content


def streamed_with_logprobs(llama: Any, chat: Any, args: Any, kwargs: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """A streamed chat completion's chunks as the model writes them, recorded as they are sampled, then one
    more chunk with no text whose `logprobs.content` holds every written token's (a reader gathers them from
    whatever chunk carries them). The recording lasts exactly as long as the generation: the chunks are
    produced only as the server reads them."""
    record: list[tuple[int, float]] = []
    setattr(llama, RECORDING, record)
    last: dict[str, Any] | None = None
    try:
        for chunk in chat(llama, *args, **{**kwargs, "logprobs": False, "top_logprobs": None}):
            last = chunk
            yield chunk
    finally:
        setattr(llama, RECORDING, None)
    if last is not None:
        yield {key: last[key] for key in ("id", "object", "created", "model") if key in last} | {
            "choices": [{"index": 0, "delta": {}, "finish_reason": None,
                         "logprobs": {"content": openai_content(llama, record), "refusal": None}}]}


def install() -> bool:
    """Make the server answer `logprobs: true` on chat completions without `logits_all`. Returns False,
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
        return sampler if record is None else RecordingSampler(sampler, record, self.n_vocab())

    def create_chat_completion(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not kwargs.get("logprobs") or self._logits_all:
            return chat(self, *args, **kwargs)
        if kwargs.get("stream"):
            return streamed_with_logprobs(self, chat, args, kwargs)
        record: list[tuple[int, float]] = []
        setattr(self, RECORDING, record)
        try:
            result = chat(self, *args, **{**kwargs, "logprobs": False, "top_logprobs": None})
        finally:
            setattr(self, RECORDING, None)
        result["choices"][0]["logprobs"] = {"content": openai_content(self, record), "refusal": None}
        return result

    llama_cpp.Llama._init_sampler = recording_init_sampler
    llama_cpp.Llama.create_chat_completion = create_chat_completion
    return True
