"""The CLI at a terminal and in a pipe, without servers: when colour is used, what the plain and the
terminal views print, how the inline override prompt reads answers and handles a refusal, and the byte
progress of the model join. tests/integration/test_cli_tty.py runs the real `ask` both ways."""

from __future__ import annotations

import asyncio
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from temporalio.client import WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from cli.ask_command import view_for
from cli.ask_view import AnswerOnlyView, JsonView, PlainView, TerminalView
from cli.inline_override import InlineDecider
from cli.override_choice import Choice, describe, parse_choice, question
from cli.tty_input import LineReader
from contracts.override import OverrideRequest, Role
from contracts.run import RunStatus
from contracts.wire import AgentResponse
from embedded.model_weights import join_parts
from embedded.progress import byte_progress
from service.terminal import styled

WEAK = OverrideRequest(
    step_id="s1",
    function="GraphQuery",
    score=0.3,
    threshold=0.8,
    reasoning="Empty result",
    retries=0,
    arguments={"query": "MATCH (n) RETURN n"},
    timeout_s=600,
    challenge="run/1/s1",
)
APPROVAL = OverrideRequest(
    step_id="approve",
    function="PurchaseOrder.makePayment",
    score=0.95,
    threshold=0.9,
    reasoning="approval needed: makePayment is irreversible",
    retries=0,
    arguments={
        "entity_type": "PurchaseOrder",
        "action_name": "makePayment",
        "targets": "20",
        "would_succeed": "18",
        "would_fail": "2",
    },
    choices=["accept", "skip", "abort"],
    timeout_s=600,
    role=Role.APPROVE,
    challenge="run/1/a",
)


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("env", "expected"), [({}, True), ({"NO_COLOR": "1"}, False), ({"NO_COLOR": ""}, True), ({"TERM": "dumb"}, False)]
)
def test_colour_only_at_a_terminal_that_wants_it(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], expected: bool
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert styled(Tty()) is expected
    assert styled(io.StringIO()) is False  # a pipe or a file: never


def test_scripts_get_plain_json_or_the_bare_answer_wherever_they_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("cli.ask_command.styled", lambda: True)  # even at a terminal
    assert isinstance(view_for(json_output=True, answer_only=False), JsonView)
    assert isinstance(view_for(json_output=False, answer_only=True), AnswerOnlyView)
    monkeypatch.setattr("cli.ask_command.styled", lambda: False)
    assert type(view_for(json_output=False, answer_only=False)) is PlainView


def progress(n: int, success: bool = True) -> AgentResponse:
    return AgentResponse(
        message_type="observation",
        content=json.dumps(
            {"type": "action_progress", "completed": n, "total": 30, "entity_id": f"E{n}", "success": success}
        ),
    )


BATCH = [
    AgentResponse(
        message_type="observation",
        content=json.dumps(
            {
                "type": "action_plan",
                "plan": {
                    "action_name": "pay",
                    "entity_type": "Order",
                    "target_count": 30,
                    "targets": [{"entity_id": "E1"}],
                },
            }
        ),
    ),
    *[progress(n, success=n > 12) for n in range(1, 31)],
    *[
        AgentResponse(
            message_type="observation",
            content=json.dumps({"type": "action_error", "entity_id": f"E{n}", "error": "no funds"}),
        )
        for n in range(1, 13)
    ],
    AgentResponse(
        message_type="observation",
        content=json.dumps({"type": "action_complete", "results": {"succeeded": 18, "total": 30, "failed": 12}}),
    ),
]


def test_plain_lines_are_what_scripts_parse(capsys: pytest.CaptureFixture[str]) -> None:
    view = PlainView()
    view.question("Pay?")
    view.message(AgentResponse(message_type="thought", content="Planning\nsecond line"))
    for message in BATCH:
        view.message(message)
    out = capsys.readouterr().out.splitlines()
    assert out[:3] == ["? Pay?", "[thought] Planning", "    second line"]
    assert out[3] == "[action plan] pay on 30 Order: E1, ... (30 in all)"
    assert out[4:7] == ["[progress 1/30] E1 FAILED", "[progress 2/30] E2 FAILED", "[progress 3/30] E3 FAILED"]
    assert len(out) == 3 + 1 + 30 + 12 + 1 and out[-1] == "[action complete] 18 of 30 succeeded, 12 failed"
    assert "\x1b[" not in "".join(out)


def terminal() -> tuple[TerminalView, io.StringIO]:
    screen = io.StringIO()
    view = TerminalView(
        Console(
            file=screen,
            force_terminal=True,
            width=100,
            color_system="standard",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    )
    return view, screen


def test_at_a_terminal_a_batch_is_one_bar_and_failures_are_capped() -> None:
    view, screen = terminal()
    for message in BATCH:
        view.message(message)
    view.close()
    shown = screen.getvalue()
    assert "\x1b[" in shown and "[progress " not in shown
    assert shown.count("[action error]") == TerminalView.ERROR_LINES + 1 and "... and 2 more" in shown
    assert "[action complete] 18 of 30 succeeded, 12 failed" in shown


def test_at_a_terminal_a_streamed_answer_is_printed_once_whole() -> None:
    view, screen = terminal()
    for chunk in ("The top supplier ", "is Acme."):
        view.message(AgentResponse(message_type="answer", content=chunk))
    view.message(AgentResponse(message_type="answer", content="", end_of_message=True, end_of_dialog=True))
    view.close()
    shown = screen.getvalue()
    assert "[answer]" in shown and shown.count("[answer]") == 1 and "The top supplier is Acme." in shown


@pytest.mark.parametrize(
    ("line", "choice"),
    [
        ("a", Choice("accept")),
        ("accept checked by hand", Choice("accept", "checked by hand")),
        ("ABORT wrong plan", Choice("abort", "wrong plan")),
        ("b", Choice("abort")),
        ("sk", Choice("skip")),
        ('retry {"query": "MATCH (s) RETURN s"}', Choice("retry", arguments={"query": "MATCH (s) RETURN s"})),
    ],
)
def test_an_answer_names_a_choice_its_letter_or_a_prefix(line: str, choice: Choice) -> None:
    assert parse_choice(line, WEAK.choices) == choice


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("", "choose one of"),
        ("a", None),
        ("maybe", "'maybe' is not a choice"),
        ("r", "'r' is not a choice here"),
        ("retry", "'retry' is not a choice"),
    ],
)
def test_only_the_request_s_choices_are_taken(line: str, said: str | None) -> None:
    if said is None:
        assert parse_choice(line, APPROVAL.choices) == Choice("accept")
        return
    with pytest.raises(ValueError, match=said):
        parse_choice(line, APPROVAL.choices)


def test_the_prompt_says_what_waits_and_what_each_choice_does() -> None:
    weak = describe(WEAK)
    assert weak[0].startswith("Step s1 (GraphQuery) needs your decision: confidence 0.30 is below 0.80")
    assert "    query = MATCH (n) RETURN n" in weak and "  a[b]ort: end the run" in weak
    approval = describe(APPROVAL)
    assert approval[0] == (
        "Approval needed: makePayment on 20 PurchaseOrder (18 would succeed, 2 would fail); "
        "confidence 0.95: makePayment is irreversible"
    )
    assert "  [a]ccept: execute" in approval and not any("retry" in line for line in approval)
    assert "[a/s/b]" in question(APPROVAL) and "[a/r/s/b]" in question(WEAK)


async def test_typed_lines_are_read_one_at_a_time_and_end_of_input_is_none() -> None:
    read, write = os.pipe()
    try:
        reader = LineReader(read)
        os.write(write, b"first\nsecond\r\n")
        assert await reader.readline() == "first"
        assert await reader.readline() == "second"
        os.write(write, b"last")
        os.close(write)
        assert await reader.readline() == "last"
        assert await reader.readline() is None
    finally:
        os.close(read)


class RecordingView(PlainView):
    def __init__(self) -> None:
        self.lines: list[str] = []

    def say(self, text: str, style: str = "", *, stderr: bool = False) -> None:
        self.lines.append(text)

    def prompt(self, text: str) -> None:
        self.lines.append(text)


class FakeHandle:
    """A run (service/run_client.AgentRun's face) waiting on WEAK that refuses the first decision, as the
    update's validator would."""

    id = "agent-r1"

    def __init__(self) -> None:
        self.sent: list[Any] = []

    async def status(self) -> RunStatus:
        return RunStatus(phase="awaiting_override", pending_override=WEAK)

    async def pending_override(self) -> Any:
        return (await self.status()).pending_override

    async def submit_override(self, decision: Any) -> str:
        self.sent.append(decision)
        if len(self.sent) == 1:
            raise WorkflowUpdateFailedError(ApplicationError("not authorized: 'eve' may not decide"))
        return f"{decision.decision} recorded for step {decision.step_id}"


async def test_a_refused_decision_is_shown_and_asked_again() -> None:
    read, write = os.pipe()
    os.write(write, b"skip not needed\naccept\n")
    view, handle = RecordingView(), FakeHandle()
    try:
        decider = InlineDecider("unused:7233", "default", by="eve", reader=LineReader(read))
        await decider._decide(handle, WEAK, None, view)  # type: ignore[arg-type]
    finally:
        os.close(read)
        os.close(write)
    assert [(d.decision, d.reason, d.by) for d in handle.sent] == [("skip", "not needed", "eve"), ("accept", "", "eve")]
    assert "rejected: not authorized: 'eve' may not decide" in view.lines
    assert view.lines[-1] == "accept recorded for step s1"


async def test_a_signed_run_without_a_key_is_left_to_the_printed_command() -> None:
    view = RecordingView()
    decider = InlineDecider("127.0.0.1:1", "default", signed=True)  # never connects: nothing to sign with
    await decider.on_message("Override needed ... Answer with: tg-confidence override agent-r1 s1 accept --by", view)
    assert len(view.lines) == 1 and "takes signed decisions" in view.lines[0] and "--key" in view.lines[0]


def test_the_model_join_reports_its_bytes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import hashlib

    parts = []
    for n, data in enumerate((b"x" * 1000, b"y" * 500), start=1):
        parts.append(tmp_path / f"part{n}.bin")
        parts[-1].write_bytes(data)
    seen: list[tuple[int, int]] = []
    with byte_progress("joining") as report:  # not a terminal here: one line, once

        def both(done: int, total: int) -> None:
            seen.append((done, total))
            report(done, total)

        join_parts(parts, tmp_path / "model.gguf", hashlib.sha256(b"x" * 1000 + b"y" * 500).hexdigest(), both)
    assert seen[-1] == (1500, 1500) and all(total == 1500 for _, total in seen)
    assert capsys.readouterr().err == "joining (0.0 MB) ...\n"


def test_no_join_no_line(capsys: pytest.CaptureFixture[str]) -> None:
    with byte_progress("joining"):
        pass
    assert capsys.readouterr().err == ""


async def test_up_joins_the_model_first_and_ctrl_c_stops_the_join(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`up` joins the slices (with its bar) before any part starts, only when nothing is cached, and stops
    joining at Ctrl-C."""
    from cli import up

    calls: list[int] = []

    def resolve(progress: Any = None) -> None:
        for done in range(0, 101, 10):
            calls.append(done)
            progress(done, 100)

    monkeypatch.setattr(up, "default_cache_dir", lambda: tmp_path)
    monkeypatch.setattr(up, "resolve_model", resolve)
    options = up.StackOptions(data_dir=tmp_path)
    stop = asyncio.Event()
    await up._join_model(options, stop)
    assert calls[-1] == 100
    calls.clear()
    stop.set()
    with pytest.raises(up._Interrupted):
        await up._join_model(options, stop)
    assert calls == [0]
    (tmp_path / up.MODEL_FILENAME).write_bytes(b"cached")
    await up._join_model(options, asyncio.Event())
    await up._join_model(up.StackOptions(data_dir=tmp_path, llm_base_url="http://llm/v1"), asyncio.Event())
    assert calls == [0]  # cached, or an external LLM: nothing joined


class DecidedElsewhere(FakeHandle):
    """A run whose request is answered from another terminal while the user still thinks."""

    def __init__(self) -> None:
        super().__init__()
        self.queries = 0

    async def status(self) -> RunStatus:
        self.queries += 1
        return RunStatus(phase="executing")


async def test_a_decision_made_elsewhere_withdraws_the_question(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("cli.inline_override.WATCH_S", 0.01)
    read, write = os.pipe()  # nothing is typed
    view, handle = RecordingView(), DecidedElsewhere()
    try:
        decider = InlineDecider("unused:7233", "default", reader=LineReader(read))
        await asyncio.wait_for(decider._decide(handle, WEAK, None, view), 5)  # type: ignore[arg-type]
    finally:
        os.close(read)
        os.close(write)
    assert handle.sent == [] and handle.queries >= 1
    assert "step s1 no longer waits (decided elsewhere, or its time ran out)" in view.lines[-1]


def test_the_plan_line_names_the_related_entity_and_what_was_left_out() -> None:
    from cli.render import render_action_event

    event = {
        "type": "action_plan",
        "plan": {
            "entity_type": "Order",
            "action_name": "pay",
            "parameters": {},
            "filters": [],
            "target_count": 2,
            "targets": [{"entity_id": "E1", "entity_name": "E1"}, {"entity_id": "E2", "entity_name": "E2"}],
            "targets_listed": 500,
            "related": {"class": "Vendor", "name": "Acme", "filters": [], "excluded": True},
            "left_out": ["the number 5000"],
        },
    }
    assert (
        render_action_event(json.dumps(event))
        == "[action plan] pay on 2 Order of no Vendor 'Acme': E1, E2 LEFT OUT: the number 5000."
    )
