"""Process plumbing shared by the worker, the bridge and the CLI: logging and the Temporal connection."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from pulsar.asyncio import Client as AsyncPulsarClient
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.runtime import Runtime
from temporalio.service import RPCError


class PartUnreachable(RuntimeError):
    """A part of the stack cannot be reached; the message names the part and its address."""


def configure_logging(level: str = "INFO") -> None:
    """structlog JSON lines on stderr; stdlib loggers (Temporal's included) go through the same renderer."""
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        raise ValueError(f"unknown log level {level!r}")
    shared = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    structlog.configure(
        processors=[*shared, structlog.processors.format_exc_info, structlog.processors.JSONRenderer()],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(structlog.stdlib.ProcessorFormatter(
        processor=structlog.processors.JSONRenderer(), foreign_pre_chain=shared))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(numeric)


async def connect_temporal(address: str, namespace: str, runtime: Runtime | None = None) -> Client:
    try:
        return await Client.connect(address, namespace=namespace, data_converter=pydantic_data_converter,
                                    runtime=runtime)
    except (RPCError, RuntimeError, OSError) as exc:
        raise PartUnreachable(f"Temporal at {address} (namespace {namespace}) is unreachable: {exc}") from exc


def run_until_signalled(serve_fn: Callable[[Any, asyncio.Event], Awaitable[None]], config: Any) -> None:
    """Run `serve_fn(config, stop)` until SIGINT/SIGTERM; a PartUnreachable exits 2 with its message."""

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
    # No interpreter finalization: Temporal's native threads can touch the GIL while Python finalizes and
    # abort the process (SIGABRT seen about once in 100 CLI runs); the service has shut down cleanly here.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def pulsar_logger() -> logging.Logger:
    """pulsar-client logs through this (its C++ default prints every reconnect at INFO to stdout)."""
    logger = logging.getLogger("pulsar")
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.WARNING)
    return logger


def pulsar_client(url: str) -> AsyncPulsarClient:
    return AsyncPulsarClient(url, operation_timeout_seconds=10, connection_timeout_ms=5000, logger=pulsar_logger())
