"""Where `ask` shows what it hears: plain lines (a pipe, a file, NO_COLOR: what scripts parse, unchanged),
one JSON object per message (--json), the answer alone (tg-invoke-confidence-agent), or, at a terminal,
colour with a live status line and one progress bar per action batch instead of a line per entity."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Protocol

from rich.console import Console, Group
from rich.live import Live
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Column
from rich.text import Text

from cli.render import render
from contracts.action_path import parse_action_event
from contracts.wire import AgentResponse
from contracts.wire_codec import response_to_wire
from service.terminal import console


class AskView(Protocol):
    def question(self, text: str) -> None: ...

    def message(self, message: AgentResponse) -> None: ...

    def say(self, text: str, style: str = "", *, stderr: bool = False) -> None:
        """A line of the CLI's own (a link, a hint, an outcome), not one of the agent's messages."""

    def prompt(self, text: str) -> None:
        """The start of a line the user answers on (no newline)."""

    def paused(self) -> AbstractContextManager[None]:
        """No live display while the user is asked something."""

    def close(self) -> None: ...


class PlainView:
    """Today's lines, byte for byte: the `[type] text` blocks, one line per action event."""

    def question(self, text: str) -> None:
        print(f"? {text}", flush=True)

    def message(self, message: AgentResponse) -> None:
        line = render(message)
        if line:
            print(line, flush=True)

    def say(self, text: str, style: str = "", *, stderr: bool = False) -> None:
        print(text, file=sys.stderr if stderr else sys.stdout, flush=True)

    def prompt(self, text: str) -> None:
        print(text, end="", flush=True)

    @contextmanager
    def paused(self) -> Iterator[None]:
        yield

    def close(self) -> None:
        pass


class JsonView(PlainView):
    """stdout carries nothing but the responses, one JSON object per line (TrustGraph's wire format); the
    CLI's own lines go to stderr."""

    def question(self, text: str) -> None:
        pass

    def message(self, message: AgentResponse) -> None:
        print(json.dumps(response_to_wire(message)), flush=True)

    def say(self, text: str, style: str = "", *, stderr: bool = False) -> None:
        print(text, file=sys.stderr, flush=True)


class AnswerOnlyView(PlainView):
    """The answer's text as it arrives (chunks joined), a newline at its end; an error on stderr: what
    TrustGraph's `tg-invoke-agent` prints without -v."""

    def question(self, text: str) -> None:
        pass

    def message(self, message: AgentResponse) -> None:
        if message.message_type == "answer":
            print(message.content, end="\n" if message.end_of_dialog else "", flush=True)
        if message.error is not None:
            print(f"error: {message.error.message}", file=sys.stderr, flush=True)


LABEL_STYLES = {
    "[thought]": "cyan",
    "[observation]": "blue",
    "[answer]": "bold green",
    "[error]": "bold red",
    "[action plan]": "magenta",
    "[action error]": "red",
    "[action complete]": "bold magenta",
    "[progress": "magenta",
}


def styled_line(line: str) -> Text:
    """A rendered line with its `[label]` coloured and the rest as the agent sent it."""
    end = line.find("]") + 1 if line.startswith("[") else 0
    label = line[:end]
    style = next((s for prefix, s in LABEL_STYLES.items() if label.startswith(prefix)), "bold")
    text = Text(label, style=style)
    text.append(line[end:])
    if label == "[answer]" and "(low)" in line:
        text.highlight_words(["(low)"], style="bold yellow")
    return text


class TerminalView:
    """Colour, and below the messages a live status line (what the run does now, for how long) and, while
    an action batch runs, one progress bar for it: 10,000 targets are one updating line, not 10,000."""

    ERROR_LINES = 10  # a batch's failures shown one per line; the rest are counted (the answer lists them)

    def __init__(self, terminal: Console | None = None) -> None:
        self.console = terminal or console()
        one_line = Column(no_wrap=True, overflow="ellipsis")  # the status stays one line, however long the step
        self.status = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}", markup=False, table_column=one_line),
            TimeElapsedColumn(),
            console=self.console,
        )
        self.batches = Progress(
            TextColumn("{task.description}", markup=False),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[failed]}", markup=False),
            TimeRemainingColumn(),
            console=self.console,
        )
        self.task = self.status.add_task("waiting for the agent", total=None)
        self.batch: TaskID | None = None
        self.errors = 0  # of the batch running now
        self.streamed = ""  # a streamed answer so far: shown in the status area, printed once whole
        self.live = Live(
            Group(self.batches, self.status),
            console=self.console,
            transient=True,
            refresh_per_second=8,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self.live.start()

    def question(self, text: str) -> None:
        self.console.print(Text(f"? {text}", style="bold"))

    def say(self, text: str, style: str = "", *, stderr: bool = False) -> None:
        self.console.print(Text(text, style=style or "dim"))

    def prompt(self, text: str) -> None:
        self.console.print(Text(text, style="bold yellow"), end="")

    def message(self, message: AgentResponse) -> None:
        body = message.content.rstrip()
        event = parse_action_event(body) if message.message_type == "observation" else None
        if event is not None and self._batch_event(event):
            return
        if message.message_type == "answer" and not message.end_of_dialog:  # a streamed chunk
            self.streamed += message.content
            self.status.update(self.task, description=f"answering: ...{' '.join(self.streamed.split())[-80:]}")
            return
        if message.message_type == "answer" and self.streamed:
            message = message.model_copy(update={"content": self.streamed + message.content})
            self.streamed = ""
        line = render(message)
        if line:
            self.console.print(styled_line(line))
        if message.message_type == "thought" and body:
            self._now(body.splitlines()[0])

    def _now(self, doing: str) -> None:
        """What the run does now; the clock beside it counts from here (how long this step takes)."""
        self.status.reset(self.task, description=doing)

    def _batch_event(self, event: dict[str, Any]) -> bool:
        """Updates the batch's bar; True when the event needs no line of its own."""
        kind = event["type"]
        if kind == "action_plan":
            plan = event["plan"]
            self._end_batch()
            # shown from the first entity on: approval may come first, and may be refused
            self.batch = self.batches.add_task(
                f"{plan['action_name']} on {plan['entity_type']}", visible=False, total=plan["target_count"], failed=""
            )
            self._now(f"running {plan['action_name']}")
            return False
        if kind == "action_progress" and self.batch is not None:
            task = self.batches.tasks[self.batches.task_ids.index(self.batch)]
            failed = int(task.fields.get("failures", 0)) + (not event["success"])
            self.batches.update(
                self.batch,
                completed=max(task.completed, event["completed"]),
                visible=True,
                total=event["total"],
                failures=failed,
                failed=f"{failed} failed" if failed else "",
            )
            return True
        if kind == "action_error":
            self.errors += 1
            return self.errors > self.ERROR_LINES
        if kind == "action_complete":
            self._end_batch()
        return False

    def _end_batch(self) -> None:
        if self.batch is not None:
            self.batches.remove_task(self.batch)
            self.batch = None
        if self.errors > self.ERROR_LINES:
            self.say(f"[action error] ... and {self.errors - self.ERROR_LINES} more", "red")
        self.errors = 0

    @contextmanager
    def paused(self) -> Iterator[None]:
        self.live.stop()
        try:
            yield
        finally:
            self.live.start()

    def close(self) -> None:
        self.live.stop()
