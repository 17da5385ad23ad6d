"""Connections to the parts every service and command talks to: Temporal and Pulsar. A part that cannot
be reached is a PartUnreachable whose message names the part and its address."""

from __future__ import annotations

import logging

import pulsar
import pulsar.asyncio
from pulsar.asyncio import Client as AsyncPulsarClient
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.runtime import Runtime
from temporalio.service import RPCError

# pulsar-client's asyncio API raises its own PulsarException, which is not a pulsar.PulsarException:
# catching only the latter lets a broker outage escape as a raw traceback.
PULSAR_ERRORS: tuple[type[Exception], ...] = (pulsar.PulsarException, pulsar.asyncio.PulsarException)


class PartUnreachable(RuntimeError):
    """A part of the stack cannot be reached; the message names the part and its address."""


async def connect_temporal(address: str, namespace: str, runtime: Runtime | None = None) -> Client:
    try:
        return await Client.connect(address, namespace=namespace, data_converter=pydantic_data_converter,
                                    runtime=runtime)
    except (RPCError, RuntimeError, OSError) as exc:
        raise PartUnreachable(f"Temporal at {address} (namespace {namespace}) is unreachable: {exc}") from exc


def pulsar_logger() -> logging.Logger:
    """pulsar-client logs through this (its C++ default prints every reconnect at INFO to stdout)."""
    logger = logging.getLogger("pulsar")
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.WARNING)
    return logger


def pulsar_client(url: str) -> AsyncPulsarClient:
    return AsyncPulsarClient(url, operation_timeout_seconds=10, connection_timeout_ms=5000, logger=pulsar_logger())
