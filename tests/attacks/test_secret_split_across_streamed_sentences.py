"""A secret split across the sentences of a streamed answer: the model (repeating what a tool read, or told to by
an injected instruction) writes "Its password:" and the value in the next sentence. Each sentence alone is
nothing redaction would touch, and a sentence once released cannot be taken back; the whole answer, redacted,
would hide the value. A sentence holding a word a secret follows is therefore never released as written: the
rest waits for the whole answer's redaction. The canary appears in none of the caller's messages (real Temporal,
Pulsar, FalkorDB and bridge; the model scripted, streaming through the client)."""

from __future__ import annotations

from typing import Any

from tests.contract.test_answer_streamed_as_written import FIRST, Model, answer_chunks, dialog, streamed_by_synthesis
from tests.scripted_llm import ScriptedLLM

CANARY = "swordfishlemoncanary"


async def test_a_secret_split_across_sentences_is_never_streamed(make_stack) -> None:
    draft = f"{FIRST} Its password:\n {CANARY}. They are the only two."
    with ScriptedLLM(Model(draft)) as llm:
        stack = await make_stack(llm.base_url)
        messages, result = await dialog(stack, streaming=True)
    chunks = answer_chunks(messages)
    assert streamed_by_synthesis(chunks) == [FIRST]  # the sentence leading to the secret stopped the release
    seen: list[Any] = [m.model_dump() for m in messages]
    assert CANARY not in repr(seen)
    # Redacted as a whole, as an answer that is not streamed is; what was released stands unchanged before it.
    assert "".join(c.content for c in chunks).startswith(f"{FIRST} Its [REDACTED]")
    assert result["answer"].startswith(FIRST)
