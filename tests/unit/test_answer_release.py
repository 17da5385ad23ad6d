"""Releasing a streamed answer sentence by sentence (activities/answer_release.py), run in Temporal's activity
test environment: which sentences go out, what the heartbeat records, and what a retried attempt does with an
earlier attempt's sentences. The end to end behaviour is in tests/contract/test_answer_streamed_as_written.py."""

from __future__ import annotations

import dataclasses
from typing import Any

from temporalio.testing import ActivityEnvironment

from activities.answer_release import (
    COMPLETION,
    CORRECTION,
    Release,
    complete_sentences,
    released_before,
    with_addition,
)
from contracts.query_path import AnswerStream
from contracts.wire import EmitInput

STREAM = AnswerStream(topic="t", request_id="r", message_id="urn:answer", delivery_prefix="agent-1")


def test_a_sentence_is_complete_once_the_model_has_begun_what_follows_it() -> None:
    assert complete_sentences("Acme leads (9).") == []  # maybe "(9).5" is still coming
    assert complete_sentences("Acme leads (9). Glo") == ["Acme leads (9)."]
    # Whitespace alone is never a sentence of its own: it goes with the sentence after it.
    assert complete_sentences("A one.\n\nB two. C") == ["A one.", "\n\nB two."]
    assert complete_sentences("Figures like 3.5 stay whole. X") == ["Figures like 3.5 stay whole."]


def test_the_released_text_stands_and_a_different_checked_answer_follows_it() -> None:
    assert with_addition("", "Acme leads.", "ranked") == ("Acme leads.", False)
    assert with_addition("Acme leads.", "Acme leads. By far.", "verified") == ("Acme leads. By far.", False)
    assert with_addition("Globex leads.", "Acme: first of 2 rows.", "ranked") == (
        f"Globex leads.\n\n{CORRECTION}Acme: first of 2 rows.",
        True,
    )
    assert with_addition("Acme leads.", "The rows: Acme 9.", "composed") == (
        f"Acme leads.\n\n{COMPLETION}The rows: Acme 9.",
        True,
    )


class Published:
    def __init__(self) -> None:
        self.messages: list[EmitInput] = []

    async def __call__(self, message: EmitInput) -> None:
        self.messages.append(message)


async def write(release: Release, *pieces: str) -> None:
    for piece in pieces:
        await release.written(piece)


def environment(heartbeat: list[Any] | None = None) -> tuple[ActivityEnvironment, list[list[str]]]:
    env = ActivityEnvironment()
    env.info = dataclasses.replace(env.info, heartbeat_details=heartbeat or [])
    beats: list[list[str]] = []
    env.on_heartbeat = lambda *details: beats.append(details[0])
    return env, beats


async def test_passing_sentences_go_out_at_once_until_one_fails() -> None:
    env, beats = environment()
    published = Published()
    release = Release(STREAM, published, passes=lambda sentence: "Initech" not in sentence)
    await env.run(write, release, "Acme leads ", "(9). Globex follows. Initech is ", "third. Acme again. End")
    assert release.sentences == ["Acme leads (9).", " Globex follows."] and release.stopped
    chunks = [r for m in published.messages for r in m.responses]
    assert [(c.content, c.delivery_id, c.message_id, c.end_of_message) for c in chunks] == [
        ("Acme leads (9).", "agent-1#answer.0", "urn:answer", False),
        (" Globex follows.", "agent-1#answer.1", "urn:answer", False),
    ]
    assert beats == [["Acme leads (9)."], ["Acme leads (9).", " Globex follows."]]


async def test_a_retry_goes_on_after_the_sentences_an_earlier_attempt_released() -> None:
    env, _ = environment([["Acme leads (9).", " Globex follows."]])
    released = env.run(released_before)
    published = Published()
    release = Release(STREAM, published, released, passes=lambda sentence: True)
    await env.run(write, release, "Acme leads (9). Globex follows. Initech is third. End")
    # The two released before are not sent again; the next one has the next delivery id.
    assert [(r.content, r.delivery_id) for m in published.messages for r in m.responses] == [
        (" Initech is third.", "agent-1#answer.2")
    ]


async def test_a_retry_that_writes_other_sentences_releases_nothing_more() -> None:
    env, _ = environment([["Acme leads (9)."]])
    published = Published()
    release = Release(STREAM, published, env.run(released_before), passes=lambda sentence: True)
    await env.run(write, release, "Globex has 7. Acme has 9. End")
    assert published.messages == [] and release.stopped and release.text == "Acme leads (9)."


async def test_heartbeat_details_of_another_shape_are_no_released_sentences() -> None:
    for details in ([], [42], [["ok", 3]], ["text"]):
        env, _ = environment(details)
        assert env.run(released_before) == []
