"""Whether a person is at the terminal: colour, a live status line and progress bars only then (a pipe, a
file, NO_COLOR or TERM=dumb get the plain text scripts parse), and prompts only when they can answer."""

from __future__ import annotations

import os
import sys
from typing import TextIO

from rich.console import Console


def styled(stream: TextIO | None = None) -> bool:
    """True when `stream` (stdout by default) is a terminal that wants colour and cursor movement.
    NO_COLOR counts when set to anything but "" (no-color.org)."""
    stream = stream or sys.stdout
    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stream
        return False
    return terminal and not os.environ.get("NO_COLOR") and os.environ.get("TERM", "") != "dumb"


def can_prompt() -> bool:
    """True when someone can read a question and type an answer: stdin and stdout are both terminals. A script
    (stdin a pipe or /dev/null) or a redirected stdout is never asked anything."""
    try:
        return sys.stdin.isatty() and sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def console(stream: TextIO | None = None) -> Console:
    """A rich console on `stream` for a styled terminal: no markup or highlighting of the agent's text (it
    is shown as sent), and long lines left to the terminal to wrap (a query copied from it stays one line)."""
    return Console(file=stream or sys.stdout, markup=False, highlight=False, emoji=False, soft_wrap=True)
