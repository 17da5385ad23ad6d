"""What a caller that missed a run's messages learns from Temporal. The caller's messages travel on a
non-persistent topic (TrustGraph's clients listen there), which drops what no consumer was attached to take
at that instant: a reconnecting client can miss the answer of a run that completed. The run itself is durable:
its result keeps the messages that ended the dialog, exactly as sent, and while it waits for a human its
`status` holds the message that asked. Every caller (ask, the chat, the benchmarks, the tests) looks here when
its messages show a hole or fall silent; contracts/delivery.Repeats then drops whatever it already had."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import timedelta

import structlog
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowFailureError
from temporalio.service import RPCError, RPCStatusCode

from contracts.names import Handlers
from contracts.run import AgentRunResult, RunStatus
from contracts.wire import AgentResponse
from contracts.wire_codec import error_response
from service.connections import PartUnreachable, connect_temporal

log = structlog.get_logger(__name__)

LOOKUP_TIMEOUT_S = 10.0  # one look-up's bound: a caller must not hang on Temporal in place of Pulsar
RECONNECT_AFTER_S = 60.0  # a caller with no way to Temporal (a Pulsar-only client) does not keep trying


@dataclass(frozen=True)
class RunOutcome:
    """A run as Temporal has it now. `execution`: Temporal's status name ("RUNNING", "COMPLETED", ...), "" when
    there is no such run (not started yet, or the request never reached the bridge)."""

    workflow_id: str
    execution: str = ""
    closing: list[AgentResponse] = field(default_factory=list)  # closed: the messages that end the dialog
    status: RunStatus | None = None  # running: the `status` query's answer, when the run could be asked

    @property
    def closed(self) -> bool:
        return self.execution not in ("", "RUNNING")

    @property
    def waiting(self) -> AgentResponse | None:
        """The message that asks for the decision the run waits on, as the run sent it."""
        return self.status.waiting_message if self.status is not None else None

    @property
    def handover(self) -> list[AgentResponse]:
        """What a caller that missed messages can take now: the messages that ended the dialog once the run is
        closed; the message that asked for a human while it waits for one; nothing while it works."""
        if self.closed:
            return self.closing
        waiting = self.waiting
        return [waiting] if waiting is not None else []


def closing_of(workflow_id: str, result: AgentRunResult) -> list[AgentResponse]:
    """The messages a completed run ended its dialog with. A result that kept none: a run handed to the fallback
    agent (which answers the caller itself) keeps none, and a sub-goal's went to its supervisor."""
    if result.closing or result.needs_fallback:
        return list(result.closing)
    # A result recorded without its closing messages: the answer (or error) it holds, as one final message.
    if result.error:
        response = error_response(result.error)
    else:
        response = AgentResponse(message_type="answer", content=result.answer, end_of_message=True, end_of_dialog=True)
    response.delivery_id = response.message_id = f"{workflow_id}#closed"
    return [response]


def ended_without_result(workflow_id: str, execution: str, cause: str) -> list[AgentResponse]:
    """A run that failed, was terminated, cancelled or timed out ended without a result: the caller is told so
    (one error, with a delivery id of its own so that it is told once)."""
    response = error_response(
        f"The run {workflow_id} ended {execution.lower()} without an answer" + (f": {cause}" if cause else "")
    )
    response.delivery_id = response.message_id = f"{workflow_id}#closed"
    return [response]


class RunLookup:
    """Looks runs up in Temporal for a caller; connects on first use. `temporal`: a client already connected
    (the chat's, a test's), else `address` and `namespace` are connected to when first needed."""

    def __init__(self, temporal: Client | None = None, *, address: str = "", namespace: str = "default") -> None:
        self._temporal = temporal
        self._address, self._namespace = address, namespace
        self._unreachable_said = False
        self._connect_after = 0.0  # a failed connect is not tried again before this (loop time)

    async def _client(self) -> Client:
        if self._temporal is None:
            loop = asyncio.get_running_loop()
            if loop.time() < self._connect_after:
                raise PartUnreachable(f"Temporal at {self._address} was unreachable moments ago")
            try:
                self._temporal = await connect_temporal(self._address, self._namespace)
            except PartUnreachable:
                self._connect_after = loop.time() + RECONNECT_AFTER_S
                raise
        return self._temporal

    async def outcome(self, workflow_id: str) -> RunOutcome | None:
        """The run now; None when Temporal cannot be asked (said once in the log until it can be again: the
        caller goes on waiting)."""
        try:
            found = await asyncio.wait_for(self._outcome(await self._client(), workflow_id), LOOKUP_TIMEOUT_S)
        except (PartUnreachable, RPCError, TimeoutError) as exc:
            if not self._unreachable_said:
                self._unreachable_said = True
                log.warning("run_lookup_failed", workflow_id=workflow_id, error=str(exc))
            return None
        self._unreachable_said = False
        return found

    async def _outcome(self, temporal: Client, workflow_id: str) -> RunOutcome:
        handle = temporal.get_workflow_handle(workflow_id, result_type=AgentRunResult)
        try:
            description = await handle.describe()
        except RPCError as exc:
            if exc.status == RPCStatusCode.NOT_FOUND:
                return RunOutcome(workflow_id)
            raise
        execution = description.status.name if description.status is not None else "UNKNOWN"
        if description.status == WorkflowExecutionStatus.RUNNING:
            try:
                status = await handle.query(
                    Handlers.STATUS, result_type=RunStatus, rpc_timeout=timedelta(seconds=LOOKUP_TIMEOUT_S / 2)
                )
            except RPCError:  # no worker to answer right now: the run is still running
                status = None
            return RunOutcome(workflow_id, execution, status=status)
        # A run that continued as new has its result on the last run of the chain: follow it.
        try:
            result = await handle.result(follow_runs=True)
        except WorkflowFailureError as exc:
            cause = exc.cause
            return RunOutcome(
                workflow_id,
                execution,
                ended_without_result(workflow_id, execution, str(getattr(cause, "message", "") or cause or "")),
            )
        return RunOutcome(workflow_id, execution, closing_of(workflow_id, result))
