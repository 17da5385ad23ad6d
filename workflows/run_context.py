"""What every piece of one run shares: its settings and activity options, the caller's messages, the
`status` the query returns, the human overrides that arrived, and the notes, metrics and audit entries
that end up in the run's record. The query path, the step runner and the action path each receive it.
"""

from __future__ import annotations

import asyncio
import re
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import SearchAttributeUpdate

from workflows.activity_options import FamilyOptions, LlmTally
from workflows.explain_store import ExplainStore
from workflows.explain_trace import ExplainTrace
from workflows.outbox import Outbox

with workflow.unsafe.imports_passed_through():
    from contracts.conversation import ActionRecordSummary
    from contracts.explain import Explained
    from contracts.explain_delivery import Published
    from contracts.names import SA_AWAITING_OVERRIDE, SA_CURRENT_STEP, SA_FINAL_CONFIDENCE, SA_STATUS
    from contracts.override import Decision, Override, OverrideRequest
    from contracts.plan import ConfidenceMetrics
    from contracts.query_path import AnswerStream, SynthesisOutput
    from contracts.records import RunMetrics, StepAudit
    from contracts.redaction import redact_text, redacted_after
    from contracts.run import AgentRunInput, AgentRunResult, AgentSettings, RunStatus, StepState
    from contracts.topics import hears_explain
    from contracts.wire import AgentResponse, MessageType
    from contracts.wire_codec import error_response
    from overrides.checks import (
        MAX_REJECTION_CHARS,
        MAX_REJECTIONS_LISTED,
        awaiting_details,
        check_override,
        clipped,
        how_to_answer,
    )


class RunAborted(Exception):
    """A human ended the run (abort, or no approval in time): the caller gets this message as an error."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def answer_chunks(answer: str, size: int = 120) -> list[str]:
    """Sentence-aligned chunks of about `size` characters that join back to the whole answer."""
    chunks: list[str] = []
    current = ""
    for sentence in re.split(r"(?<=[.!?\n])(?=\s)", answer):
        if current and len(current) + len(sentence) > size:
            chunks.append(current)
            current = ""
        current += sentence
    return [*chunks, current] if current else chunks or [answer]


class RunContext:
    def __init__(self, inp: AgentRunInput) -> None:
        self.inp = inp
        self.question = inp.request.question
        self.workflow_id = workflow.info().workflow_id
        self.notes: list[str] = []
        self.outbox = Outbox(
            inp.response_topic, inp.request_id, self.workflow_id, subagent=inp.subagent, on_published=self._published
        )
        self.trace = ExplainTrace(
            self.emit,
            inp.request.session_id or self.workflow_id,
            enabled=hears_explain(inp.response_topic),
            subagent=inp.subagent,
        )
        self.explain_store = ExplainStore(inp.response_topic, inp.request.collection, inp.queues.workflow, self.notes)
        self.status = RunStatus()
        self.overrides: dict[str, Override] = {}  # step id -> the decision that arrived for it
        self.audit: dict[str, StepAudit] = {}
        self.metrics = RunMetrics()
        self.evidence: dict[str, float] = {}  # the answer's evidence features (confidence/evidence.py)
        self.finished: list[ConfidenceMetrics] = []  # every finished step's final confidence, usable or not
        self.action_record: ActionRecordSummary | None = None  # what an action turn changed, for the conversation
        # While set, the closing answer waits in `held` (release_answer): a conversation's next turn must not
        # be asked before this one is in its memory.
        self.hold_answer = False
        self.held: list[AgentResponse] = []
        self._override_lock = asyncio.Lock()
        self._override_requests = 0
        self.llm_usage = LlmTally()  # every activity's LLM usage, for the final message (as TrustGraph's agent)
        self.configure(inp.settings or AgentSettings())

    def begin(self) -> None:
        """The run's first message: its provenance's session (the question, when it was asked)."""
        self.trace.session(self.question, self.iso_now(), self.inp.request.collection)

    def configure(self, settings: AgentSettings) -> None:
        """The settings this run executes with (known once the worker's own were read)."""
        self.settings = settings
        self.options = FamilyOptions.of(settings, self.inp.queues, self.llm_usage)

    # -- the caller's messages -----------------------------------------------------------------

    def emit(self, response: AgentResponse) -> None:
        self.outbox.emit(response)

    def _published(self, published: Published, entities: list[Explained]) -> None:
        """After each batch the caller was sent: as the worker's `explain` setting says, the batch's explain
        entities go to the store, and with explain off the run stops explaining itself."""
        if published.explain == "off":
            self.trace.stop()
        if published.store and entities:
            self.explain_store.keep(entities)

    def say(self, kind: MessageType, text: str) -> AgentResponse:
        # Thoughts and observations quote questions, queries, tool output and reasoning: no secret leaves.
        response = AgentResponse(message_type=kind, content=redact_text(text), end_of_message=True)
        self.emit(response)
        return response

    def answer_stream(self) -> AnswerStream | None:
        """Where the synthesis activity sends the answer's sentences as they are written and checked: for a run
        that streams, as written (`stream_answer_as_written`), to its caller (a supervisor's sub-goal reports
        one completion instead)."""
        if not (self.inp.request.streaming and self.settings.stream_answer_as_written) or self.inp.subagent:
            return None
        return AnswerStream(
            topic=self.inp.response_topic,
            request_id=self.inp.request_id,
            message_id=self.trace.answer_uri,
            delivery_prefix=self.workflow_id,
        )

    async def answer(self, answer: str, synthesis: SynthesisOutput | None, why: str = "") -> None:
        """The answer with its provenance; `why`: the reasons for its stated confidence (status.final_confidence).
        The start the synthesis activity already released (`synthesis.released`) is not sent again."""
        released = synthesis.released if synthesis else ""
        # Before chunking: a secret split across chunks would slip through. The released start was checked
        # sentence by sentence (contracts/redaction.may_hold_secret) and stands as it was sent.
        answer = redacted_after(released, answer)
        sent = released if answer.startswith(released) else ""
        unsent = answer[len(sent) :]
        # The sentences the synthesis activity sent are part of how the dialog ends, as it sent them.
        self.outbox.closing.extend(
            AgentResponse(
                message_type="answer",
                content=sentence,
                end_of_message=False,
                message_id=self.trace.answer_uri,
                delivery_id=f"{self.workflow_id}#answer.{n}",
            )
            for n, sentence in enumerate(synthesis.released_sentences if synthesis else [])
        )
        explained = self.trace.answer(
            answer, self.status.final_confidence, why, self.evidence, synthesis.evidence_effects if synthesis else {}
        )
        explain = [explained] if explained is not None else []
        # As TrustGraph's agent: the whole run's LLM usage on the message that ends the dialog, one message_id
        # (the answer's entity) on every chunk of the answer, and the answer's explain message just before the
        # end: after a streamed answer's last chunk, before a whole answer.
        tokens = self.llm_usage.tokens()
        entity = self.trace.answer_uri
        if self.inp.request.streaming:
            # TrustGraph's streaming shape: chunks with end_of_message false, then an empty closing answer.
            messages = [
                AgentResponse(message_type="answer", content=chunk, end_of_message=False, message_id=entity)
                for chunk in answer_chunks(unsent)
            ]
            messages += [
                *explain,
                AgentResponse(
                    message_type="answer",
                    content="",
                    end_of_message=True,
                    end_of_dialog=True,
                    message_id=entity,
                    **tokens,
                ),
            ]
        else:
            messages = [
                *explain,
                AgentResponse(
                    message_type="answer",
                    content=answer,
                    end_of_message=True,
                    end_of_dialog=True,
                    message_id=entity,
                    **tokens,
                ),
            ]
        if self.hold_answer:
            self.held.extend(messages)
            return
        for message in messages:
            self.emit(message)

    def release_answer(self) -> None:
        """The run's last messages go out, a conversation's held answer among them."""
        self.hold_answer = False
        held, self.held = self.held, []
        for message in held:
            self.emit(message)

    async def fail(self, message: str) -> AgentRunResult:
        """Tell the caller, unless the bridge will hand the request to the existing agent instead."""
        # Failures quote what went wrong (a connection string, a tool's output): no secret leaves, neither to
        # the caller nor into the run's result in its history.
        message = redact_text(message)
        self.phase("failed")
        if self.inp.fallback_on_failure:
            return AgentRunResult(answer="", error=message, plan=self.status.plan, needs_fallback=True)
        self.trace.failure(message, "error")
        self.emit(error_response(message))
        return AgentRunResult(answer="", error=message, plan=self.status.plan)

    # -- status ----------------------------------------------------------------------------------

    def phase(self, phase: str, step: str | None = None) -> None:
        """The run's phase, for the `status` query and, when enabled, the Web UI's search attributes."""
        self.status.phase = phase
        if not self.settings.search_attributes:
            return
        updates: list[SearchAttributeUpdate[Any]] = [
            SA_STATUS.value_set(phase),
            SA_AWAITING_OVERRIDE.value_set(phase == "awaiting_override"),
        ]
        if step is not None:
            updates.append(SA_CURRENT_STEP.value_set(step))
        if self.status.final_confidence is not None:
            updates.append(SA_FINAL_CONFIDENCE.value_set(self.status.final_confidence))
        workflow.upsert_search_attributes(updates)

    @staticmethod
    def iso_now() -> str:
        return workflow.now().isoformat().replace("+00:00", "Z")

    # -- human overrides -------------------------------------------------------------------------

    def check(self, override: Override) -> Decision:
        """The decision, if acceptable now; OverrideRejected says why not."""
        known = {s.step_id for s in self.status.steps}
        return check_override(
            override, self.status.pending_override, known, self.settings, self.workflow_id, self.inp.request.user
        )

    def reject(self, override: Override, reason: str) -> None:
        """A refused override signal, listed in the status: each entry and the list bounded, so that no signal
        grows the status (a query answer) or the logs without limit."""
        entry = clipped(f"{clipped(override.step_id, 100)}: {reason}", MAX_REJECTION_CHARS)
        self.status.rejected_overrides_total += 1
        self.status.rejected_overrides = [*self.status.rejected_overrides, entry][-MAX_REJECTIONS_LISTED:]
        workflow.logger.warning("override signal rejected: %s", entry)

    async def wait_for_override(self, request: OverrideRequest, what: str) -> Override | None:
        """Ask a human (signal, update or Pulsar follow-up) and wait up to the request's timeout."""
        async with self._override_lock:  # one pending override at a time, even with parallel steps
            step_id = request.step_id
            # Unique to this request (this run, its n-th request): a signed decision covers it, so a signature
            # read from the history approves nothing else.
            self._override_requests += 1
            request = request.model_copy(
                update={"challenge": f"{workflow.info().run_id}/{self._override_requests}/{step_id}"}
            )
            self.status.pending_override = request
            self.status.step(step_id).state = StepState.AWAITING_OVERRIDE
            self.phase("awaiting_override", step_id)
            # While the run waits, what it explained so far is in TrustGraph's store, to be looked at.
            self.explain_store.at_once = True
            self.explain_store.write()
            signed = bool(self.settings.override_keys)
            self.status.waiting_message = self.say(
                "observation",
                f"{what} Waiting {request.timeout_s:.0f} s. {how_to_answer(self.workflow_id, request, signed)}",
            )
            workflow.set_current_details(redact_text(awaiting_details(self.workflow_id, request, what, signed)))
            try:
                await workflow.wait_condition(
                    lambda: step_id in self.overrides, timeout=timedelta(seconds=request.timeout_s)
                )
                decided = True
            except TimeoutError:
                decided = False
            finally:
                self.status.pending_override = None
                self.status.waiting_message = None
                self.explain_store.at_once = False
                self.phase("executing", step_id)
            # Not in `finally`: a run evicted from the worker's cache while waiting is no longer in a workflow
            # event loop, and the details go with it anyway.
            workflow.set_current_details("")
            return self.overrides.pop(step_id) if decided else None
