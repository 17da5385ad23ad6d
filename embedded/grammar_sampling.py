"""Grammar-constrained sampling that checks one token instead of the whole vocabulary, for llama-cpp-python.

llama-cpp-python puts the JSON-schema grammar in the sampler chain before everything else, so every generated
token runs the grammar over all 151,936 candidates: ~20-40 ms a token on 2 cores, as long as decoding the token
itself. llama.cpp's own sampler (common/sampling.cpp) samples first and asks the grammar about the chosen token
only, running the full pass only when that token is rejected. This does the same. At temperature 0 the result
is the same token (the grammar's best token is the overall best whenever the overall best is allowed); at a
higher temperature a rejected token is resampled from the allowed ones, as llama.cpp does.

Runs inside the LLM server's process (embedded/llm_server.py), never in the worker.
"""

from __future__ import annotations

import ctypes
import inspect
import logging
import math
from typing import Any

import numpy as np

log = logging.getLogger(__name__)


class GrammarCheckedSampler:
    """What `Llama._init_sampler` returns when a grammar is given: `sample(ctx, idx)` and `close()`, like
    llama-cpp-python's own LlamaSampler, with the grammar kept out of the chain."""

    def __init__(self, unconstrained: Any, model: Any, grammar: Any) -> None:
        from llama_cpp import llama_cpp as C

        self._c = C
        self.unconstrained = unconstrained  # llama-cpp-python's chain built without the grammar
        self.grammar = C.llama_sampler_init_grammar(
            model.vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8")
        )
        if not self.grammar:  # llama-cpp-python would put the NULL in the chain and crash the server on it
            unconstrained.close()
            raise ValueError("llama.cpp could not parse the grammar made from this JSON schema")
        self.n_vocab = C.llama_vocab_n_tokens(model.vocab)
        self._candidates_buffer = (C.llama_token_data * self.n_vocab)()
        self._candidates_view = np.ctypeslib.as_array(self._candidates_buffer)  # fields id, logit, p
        self._token_ids = np.arange(self.n_vocab, dtype=np.int32)
        self._one = (C.llama_token_data * 1)()
        self.tokens = 0
        self.rejected = 0  # tokens the grammar refused, each of which took the full pass

    def _candidates(self, ctx: Any, idx: int) -> Any:
        """Every token with its logit at `idx`; rebuilt each time because samplers sort the array in place."""
        C = self._c
        logits = np.ctypeslib.as_array(C.llama_get_logits_ith(ctx.ctx, idx), shape=(self.n_vocab,))
        view = self._candidates_view
        view["id"] = self._token_ids
        view["logit"] = logits
        view["p"] = 0.0
        return C.llama_token_data_array(data=self._candidates_buffer, size=self.n_vocab, selected=-1, sorted=False)

    def allows(self, token: int) -> bool:
        """Whether the grammar, in its current state, allows `token` next."""
        C = self._c
        # llama-cpp-python annotates `id` as c_int32; ctypes reads and writes the field as an int.
        self._one[0].id, self._one[0].logit, self._one[0].p = token, 0.0, 0.0  # type: ignore[assignment]
        single = C.llama_token_data_array(data=self._one, size=1, selected=-1, sorted=False)
        C.llama_sampler_apply(self.grammar, ctypes.byref(single))
        return not math.isinf(self._one[0].logit)

    def sample(self, ctx: Any, idx: int) -> int:
        C = self._c
        chain = self.unconstrained.sampler
        candidates = self._candidates(ctx, idx)
        C.llama_sampler_apply(chain, ctypes.byref(candidates))
        token = int(candidates.data[candidates.selected].id)
        self.tokens += 1
        if not self.allows(token):
            self.rejected += 1
            candidates = self._candidates(ctx, idx)
            C.llama_sampler_apply(self.grammar, ctypes.byref(candidates))
            C.llama_sampler_apply(chain, ctypes.byref(candidates))
            token = int(candidates.data[candidates.selected].id)
        # Accepted only now, once: the penalties and the grammar advance on the token actually chosen.
        C.llama_sampler_accept(self.grammar, token)
        C.llama_sampler_accept(chain, token)
        return token

    def close(self) -> None:
        if getattr(self, "grammar", None):
            self._c.llama_sampler_free(self.grammar)
            self.grammar = None
        if hasattr(self, "unconstrained"):
            self.unconstrained.close()

    def __del__(self) -> None:
        self.close()


def install() -> bool:
    """Make llama-cpp-python sample grammar-constrained output this way. Returns False, changing nothing, if
    this llama-cpp-python's `Llama._init_sampler` no longer looks like the one this was written against."""
    import llama_cpp

    original = getattr(llama_cpp.Llama, "_init_sampler", None)
    if original is None or "grammar" not in inspect.signature(original).parameters:
        log.warning("grammar_sampling_not_installed: llama_cpp.Llama._init_sampler(grammar=...) not found")
        return False

    def init_sampler(self: Any, *args: Any, grammar: Any = None, **kwargs: Any) -> Any:
        unconstrained = original(self, *args, grammar=None, **kwargs)
        return unconstrained if grammar is None else GrammarCheckedSampler(unconstrained, self._model, grammar)

    llama_cpp.Llama._init_sampler = init_sampler  # type: ignore[method-assign]  # the patch is the point
    return True
