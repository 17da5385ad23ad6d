"""The process frame every service and command shares: logging, running until SIGINT/SIGTERM, and
leaving without interpreter finalization (Temporal's and Pulsar's native threads can abort a finalizing
interpreter)."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import Any, Literal, TextIO

import structlog
from structlog.typing import Processor

from contracts.redaction import redact_log_event
from service.connections import PartUnreachable

LogFormat = Literal["auto", "json", "console"]


def log_renderer(fmt: LogFormat = "auto", stream: TextIO | None = None) -> Any:
    """JSON lines for machines (log shippers, `docker logs`, files); aligned, coloured lines for a person at a
    terminal. "auto" picks by whether `stream` (stderr) is a terminal; NO_COLOR keeps the console form plain."""
    stream = stream or sys.stderr
    if fmt == "json" or (fmt == "auto" and not stream.isatty()):
        return structlog.processors.JSONRenderer()
    colors = not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb" and stream.isatty()
    return structlog.dev.ConsoleRenderer(colors=colors, exception_formatter=structlog.dev.plain_traceback)


def configure_logging(level: str = "INFO", fmt: LogFormat = "auto") -> None:
    """structlog on stderr, rendered by `log_renderer`; stdlib loggers (Temporal's included) go through the
    same renderer."""
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        raise ValueError(f"unknown log level {level!r}")
    renderer = log_renderer(fmt)
    shared: list[Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    structlog.configure(
        processors=[*shared, structlog.processors.format_exc_info, redact_log_event, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            # Tracebacks formatted before redaction: an exception's message may quote a connection string.
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                redact_log_event,
                renderer,
            ],
            foreign_pre_chain=shared,
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(numeric)


def exit_now(code: int) -> None:
    """Leave without interpreter finalization: Temporal's native client threads can touch the GIL while
    Python finalizes and abort the process (SIGABRT seen about once in 100 CLI runs). Everything the
    process had to do is done by now; its output is flushed here."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def run_until_signalled(serve_fn: Callable[[Any, asyncio.Event], Awaitable[None]], config: Any) -> None:
    """Run `serve_fn(config, stop)` until SIGINT/SIGTERM sets `stop`; a PartUnreachable exits 2 with its message."""

    async def runner() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await serve_fn(config, stop)

    code = 0
    try:
        asyncio.run(runner())
    except PartUnreachable as exc:
        structlog.get_logger(__name__).error("part_unreachable", error=str(exc))
        code = 2
    exit_now(code)
