"""The answer streamed as the model writes it (a request with `streaming: true`), under one rule: text already
released to the caller is never taken back, repeated or contradicted; it may only be added to.

The arriving text is cut into sentences. Each complete sentence (the model has begun the next one) is released
at once when it passes the per-sentence checks (every name and figure in it is in the results; nothing in it a
redaction would touch), as an `answer` chunk with the answer's message_id and the delivery id
`<run>#answer.<n>`. The first sentence that fails stops the release; the last sentence, complete only when the
model stops, is never released here: the whole-answer checks see it first. What was released is recorded in
the activity's heartbeat, so that a retried attempt neither repeats it nor contradicts it (`released_before`).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from temporalio import activity

from contracts.query_path import AnswerStream
from contracts.wire import AgentResponse, EmitInput

_SENTENCE_END = re.compile(r"(?<=[.!?\n])(?=\s)")
# How an addition after released sentences begins: a ranking's first row after a draft that named another is a
# correction; the rows or a rewritten answer after sentences that were right is a completion.
CORRECTION = "Correction: "
COMPLETION = "More precisely: "


def complete_sentences(text: str) -> list[str]:
    """The sentences of `text` that are complete (the model has begun writing what follows them), each with the
    whitespace before it; a piece of whitespace alone goes with the sentence after it."""
    pieces = _SENTENCE_END.split(text.lstrip())[:-1]  # the last piece may still be being written
    sentences: list[str] = []
    pending = ""
    for piece in pieces:
        pending += piece
        if pending.strip():
            sentences.append(pending)
            pending = ""
    return sentences


def released_before() -> list[str]:
    """The sentences an earlier attempt of this activity released (its last heartbeat), or none."""
    details = activity.info().heartbeat_details
    last = details[-1] if details else None
    return list(last) if isinstance(last, list) and all(isinstance(s, str) for s in last) else []


def with_addition(released: str, answer: str, how: str) -> tuple[str, bool]:
    """The answer as the caller reads it, and whether the released text needed an addition to stand behind:
    `answer` itself when it goes on from what was released; otherwise what was released, then `answer`
    introduced as a correction (`how` "ranked": the draft named another row than the query ranked first) or a
    completion."""
    if answer.startswith(released):
        return answer, False
    lead = CORRECTION if how == "ranked" else COMPLETION
    return f"{released}\n\n{lead}{answer}", True


Publish = Callable[[EmitInput], Awaitable[None]]


@dataclass
class Release:
    """One attempt's release of the sentences the model writes. `sentences`: those released so far, starting
    with an earlier attempt's; this attempt releases a sentence of its own only after it wrote every one of
    those again word for word (a model asked the same question again usually does), so nothing that follows
    could contradict them."""

    stream: AnswerStream
    publish: Publish
    sentences: list[str] = field(default_factory=list)
    passes: Callable[[str], bool] = lambda sentence: False  # the per-sentence checks (set by the writer)
    stopped: bool = False  # a sentence failed its check, or this attempt wrote other sentences than released
    _text: str = ""
    _seen: int = 0  # complete sentences of this attempt's text already looked at

    @property
    def text(self) -> str:
        return "".join(self.sentences)

    async def written(self, piece: str) -> None:
        """The model wrote `piece`: release the sentences it completes, as long as each passes."""
        self._text += piece
        if self.stopped:
            return
        complete = complete_sentences(self._text)
        while self._seen < len(complete) and not self.stopped:
            n, sentence = self._seen, complete[self._seen]
            self._seen += 1
            if n < len(self.sentences):
                self.stopped = sentence != self.sentences[n]
            elif self.passes(sentence):
                await self._release(n, sentence)
            else:
                self.stopped = True

    async def _release(self, n: int, sentence: str) -> None:
        s = self.stream
        chunk = AgentResponse(
            message_type="answer",
            content=sentence,
            end_of_message=False,
            message_id=s.message_id,
            delivery_id=f"{s.delivery_prefix}#answer.{n}",
        )
        await self.publish(EmitInput(topic=s.topic, request_id=s.request_id, responses=[chunk]))
        self.sentences.append(sentence)
        activity.heartbeat(list(self.sentences))  # a retried attempt starts after them
