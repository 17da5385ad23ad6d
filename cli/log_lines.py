"""`tg-confidence logs` at a terminal: the services' JSON log lines as the readable lines they would have
printed at a terminal themselves. Lines that are not a service's JSON (Temporal's, Pulsar's, the model
server's own logs) pass through as they are."""

from __future__ import annotations

import json
import sys

import structlog

from service.lifecycle import LogFormat, log_renderer


class LogLines:
    """Feed it what a log file grew by; it gives back whole lines, rendered, and keeps a partial last line
    until the rest of it arrives."""

    def __init__(self, fmt: LogFormat = "auto") -> None:
        self._renderer = log_renderer(fmt, stream=sys.stdout)
        self._readable = not isinstance(self._renderer, structlog.processors.JSONRenderer)
        self._partial = ""

    def feed(self, text: str) -> str:
        if not self._readable:
            return text
        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()
        return "".join(self.render(line) + "\n" for line in lines)

    def render(self, line: str) -> str:
        try:
            event = json.loads(line)
        except ValueError:
            return line
        if not isinstance(event, dict) or "event" not in event:
            return line
        return str(self._renderer(None, str(event.get("level", "info")), event))
