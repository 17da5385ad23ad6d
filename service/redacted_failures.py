"""Failures with no secret in them: every failure a worker reports to Temporal (an activity's, a local
activity's, an update's refusal, a workflow's) is recorded in the run's history, shown by the Web UI and
`temporal workflow show`, and quoted to the caller. Whatever raised it (a driver quoting its connection
string with a password, a tool quoting its input), its message and stack trace are redacted here, on the
way out, for every exception in the chain."""

from __future__ import annotations

import dataclasses
from typing import Any

from temporalio.api.failure.v1 import Failure
from temporalio.client import Client
from temporalio.converter import DataConverter, DefaultFailureConverter, PayloadConverter

from contracts.redaction import redact_text


class RedactingFailureConverter(DefaultFailureConverter):
    def to_failure(self, exception: BaseException, payload_converter: PayloadConverter, failure: Failure) -> None:
        super().to_failure(exception, payload_converter, failure)
        current: Any = failure
        while True:
            current.message = redact_text(current.message)
            current.stack_trace = redact_text(current.stack_trace)
            if not current.HasField("cause"):
                return
            current = current.cause


def redacting(converter: DataConverter) -> DataConverter:
    """The converter, with failures redacted before they leave the process."""
    if converter.failure_converter_class is RedactingFailureConverter:
        return converter
    return dataclasses.replace(converter, failure_converter_class=RedactingFailureConverter)


def with_redacted_failures(client: Client) -> Client:
    """The same connection, with a converter that redacts the failures its workers report."""
    if client.data_converter.failure_converter_class is RedactingFailureConverter:
        return client
    config = client.config()  # a copy
    config["data_converter"] = redacting(client.data_converter)
    return Client(**config)
