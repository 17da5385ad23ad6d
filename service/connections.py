"""Connections to the parts every service and command talks to: Temporal and Pulsar. A part that cannot
be reached is a PartUnreachable whose message names the part and its address."""

from __future__ import annotations

import logging
import os
from typing import Any

import pulsar
import pulsar.asyncio
from pulsar.asyncio import Client as AsyncPulsarClient
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.envconfig import ClientConfigProfile
from temporalio.runtime import Runtime
from temporalio.service import RPCError

from service.redacted_failures import redacting

# pulsar-client's asyncio API raises its own PulsarException, which is not a pulsar.PulsarException:
# catching only the latter lets a broker outage escape as a raw traceback.
PULSAR_ERRORS: tuple[type[Exception], ...] = (pulsar.PulsarException, pulsar.asyncio.PulsarException)


class PartUnreachable(RuntimeError):
    """A part of the stack cannot be reached; the message names the part and its address."""


def temporal_connect_options() -> dict[str, Any]:
    """What Temporal's own client configuration adds to an address and namespace: the API key, TLS and gRPC
    metadata from TEMPORAL_API_KEY, TEMPORAL_TLS*, TEMPORAL_PROFILE and its config file (temporal.toml), as
    the `temporal` CLI and every Temporal SDK read them. A broken config file is a PartUnreachable."""
    try:
        profile = ClientConfigProfile.load().to_client_connect_config()
    except Exception as exc:  # the SDK raises several kinds for an unreadable or invalid file
        raise PartUnreachable(f"Temporal's client configuration cannot be read: {exc}") from exc
    return {key: profile[key] for key in ("api_key", "tls", "rpc_metadata") if key in profile}


async def connect_temporal(address: str, namespace: str, runtime: Runtime | None = None) -> Client:
    options = temporal_connect_options()
    try:
        return await Client.connect(
            address, namespace=namespace, data_converter=redacting(pydantic_data_converter), runtime=runtime, **options
        )
    except (RPCError, RuntimeError, OSError) as exc:
        raise PartUnreachable(f"Temporal at {address} (namespace {namespace}) is unreachable: {exc}") from exc


# The `pulsar` Python logger's level, as pulsar-client's C++ logger takes it.
_PULSAR_LEVELS = (
    (logging.DEBUG, pulsar.LoggerLevel.Debug),
    (logging.INFO, pulsar.LoggerLevel.Info),
    (logging.WARNING, pulsar.LoggerLevel.Warn),
    (logging.ERROR, pulsar.LoggerLevel.Error),
)


def pulsar_logger() -> pulsar.FileLogger:
    """pulsar-client's log: written to stderr by its C++ I/O thread itself, at the level of the `pulsar` Python
    logger (WARNING unless set; its C++ default prints every reconnect at INFO to stdout). Not a Python logger:
    the I/O thread would take the GIL for every line, and on a machine whose cores the model saturates a log
    line ahead of a Pong can hold the Pong past the broker's liveness check, which then closes the connection
    and drops what a non-persistent topic had for it (BENCHMARKS.md, the Pulsar client's log)."""
    logger = logging.getLogger("pulsar")
    level = logger.level or logging.WARNING
    c_level = next((c for py, c in _PULSAR_LEVELS if level <= py), None)
    if c_level is None:  # CRITICAL: the client says nothing (a command's own one-line error says it all)
        return pulsar.FileLogger(pulsar.LoggerLevel.Error, os.devnull)
    return pulsar.FileLogger(c_level, "/dev/stderr")


def pulsar_client(url: str) -> AsyncPulsarClient:
    return AsyncPulsarClient(url, operation_timeout_seconds=10, connection_timeout_ms=5000, logger=pulsar_logger())
