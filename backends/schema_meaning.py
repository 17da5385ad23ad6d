"""A question's words linked to the live schema by meaning (questions/linking.py), with the sentence vectors of
the schema's parts computed once per process and kept: a graph's few hundred descriptions cost about a second
the first time and nothing after. Without the encoder's weights installed, words are linked by spelling only,
and the log says why once."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

import structlog

from questions.linking import Linking, SchemaTerm, link_question
from questions.meant_keys import meant_keys

if TYPE_CHECKING:  # the encoder (and numpy) load with the first question linked, not with the worker
    from backends.sentence_encoder import SentenceEncoder, Vectors

log = structlog.get_logger(__name__)

KEPT_VECTORS = 8192  # texts whose vectors are kept (a schema's descriptions and recent questions' words)


class SchemaMeaning:
    """Links questions to a schema's terms by meaning; one per process (`shared_meaning()`), thread-safe."""

    def __init__(self, encoder: Callable[[], SentenceEncoder] | None = None) -> None:
        self._encoder = encoder
        self._kept: OrderedDict[str, Vectors] = OrderedDict()
        self._lock = threading.Lock()
        self._unavailable: str | None = None

    def encode(self, texts: Sequence[str]) -> Vectors:
        """Each text's unit vector; those seen before come from memory."""
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._kept))
        fresh = self._encoder_now().encode(missing) if missing else None
        with self._lock:
            if fresh is not None:
                for text, vector in zip(missing, fresh, strict=True):
                    self._kept[text] = vector
            for text in texts:
                self._kept.move_to_end(text)
            rows = [self._kept[t] for t in texts]
            while len(self._kept) > KEPT_VECTORS:
                self._kept.popitem(last=False)
        import numpy as np

        return np.stack(rows) if rows else np.zeros((0, 0), dtype=np.float32)

    def _encoder_now(self) -> SentenceEncoder:
        if self._encoder is None:
            from backends.sentence_encoder import shared_encoder

            self._encoder = shared_encoder
        return self._encoder()

    def link(self, text: str, terms: Sequence[SchemaTerm], spent: Iterable[str] = ()) -> Linking:
        """`text`'s words linked to `terms` (by spelling alone when the encoder is not installed)."""
        from backends.sentence_encoder import EncoderUnavailable

        encode = None if self._unavailable else self.encode
        try:
            return link_question(text, terms, encode, spent)
        except EncoderUnavailable as exc:
            self._unavailable = str(exc)
            log.warning("schema_meaning_unavailable", reason=str(exc))
            return link_question(text, terms, None, spent)

    def meant_keys(
        self, sentences: Sequence[str], labels: Sequence[str], nodes: dict[str, list[str]]
    ) -> tuple[str, ...]:
        """The key of `labels` the first of `sentences` to mean one clearly means (questions/meant_keys.py);
        none without the encoder."""
        from backends.sentence_encoder import EncoderUnavailable

        if self._unavailable:
            return ()
        try:
            return meant_keys(sentences, labels, nodes, self.encode)
        except EncoderUnavailable as exc:
            self._unavailable = str(exc)
            log.warning("schema_meaning_unavailable", reason=str(exc))
            return ()


@lru_cache(maxsize=1)
def shared_meaning() -> SchemaMeaning:
    """The process's one linker, whose kept vectors every question shares."""
    return SchemaMeaning()
