"""`ask` at a terminal: when the run asks a human (a step stayed below its threshold, or an action batch
needs approval), ask the user right there instead of sending them to another terminal. The decision goes
through the same update as `tg-confidence override` (cli/decide.py); a refusal is shown and asked again.
Runs that take signed decisions are decided here only with a key (--key or TGCA_OVERRIDE_KEY)."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.exceptions import TemporalError

from cli.ask_view import AskView
from cli.decide import signed_for_run
from cli.override_choice import Choice, describe, parse_arguments, parse_choice, question
from cli.tty_input import LineReader
from contracts.override import Override, OverrideRequest
from overrides.checks import refusal_reason
from overrides.signing import load_private_key
from service.connections import PartUnreachable, connect_temporal
from service.run_client import AgentRun

# The command every override request's observation names (overrides.checks.how_to_answer).
ASKED = re.compile(r"tg-confidence override (\S+) (\S+) accept")
SIGNED = "signing over challenge"  # how_to_answer's words when decisions must be signed
WATCH_S = 1.0  # how often the run is asked whether it still waits while the user thinks


class Withdrawn(Exception):
    """The run stopped waiting for this answer (decided elsewhere, or its time ran out)."""


@dataclass
class InlineDecider:
    temporal_address: str
    namespace: str
    by: str = ""
    key_path: Path | None = None
    signed: bool = False  # the configuration names override_keys: decisions must be signed
    reader: LineReader = field(default_factory=LineReader)
    _client: Client | None = field(default=None, init=False, repr=False)

    async def on_message(self, text: str, view: AskView) -> None:
        """Ask the user when `text` (an observation) is an override request; otherwise nothing."""
        asked = ASKED.search(text)
        if asked is None:
            return
        workflow_id, step_id = asked.groups()
        if (self.signed or SIGNED in text) and self.key_path is None:
            view.say(
                "This run takes signed decisions: answer with the command above, or ask again with --key "
                "<private key> --by <name> (or TGCA_OVERRIDE_KEY) to decide here.",
                "yellow",
            )
            return
        try:
            private = load_private_key(self.key_path) if self.key_path else None
        except (OSError, ValueError) as exc:
            view.say(f"cannot read the key {self.key_path}: {exc}; answer with the command above", "red")
            return
        try:
            if self._client is None:
                self._client = await connect_temporal(self.temporal_address, self.namespace)
            run = AgentRun(self._client, workflow_id)
            pending = await run.pending_override()
        except (PartUnreachable, TemporalError) as exc:  # e.g. a Pulsar-only client with no way to Temporal
            view.say(
                f"cannot ask {workflow_id} here ({getattr(exc, 'message', exc)}); answer with the command above", "red"
            )
            return
        if pending is None or pending.step_id != step_id:
            return  # already decided (e.g. from another terminal)
        with view.paused():
            await self._decide(run, pending, private, view)

    async def _decide(
        self, run: AgentRun, pending: OverrideRequest, private: Ed25519PrivateKey | None, view: AskView
    ) -> None:
        for line in describe(pending):
            view.say(line, "yellow")
        while True:
            try:
                choice = await self._while_waiting(run, pending, self._ask(pending, view))
            except Withdrawn:
                self.reader.discard_typed()
                view.say(f"\nstep {pending.step_id} no longer waits (decided elsewhere, or its time ran out)")
                return
            if choice is None:
                view.say(f"left to `tg-confidence override {run.id} {pending.step_id} ...`")
                return
            decision = Override(
                step_id=pending.step_id,
                decision=choice.decision,
                arguments=choice.arguments,
                reason=choice.reason,
                by=self.by,
            )
            try:
                if private is not None:
                    decision = await signed_for_run(run, decision, private, pending.challenge)
                view.say(await run.submit_override(decision), "green")
                return
            except WorkflowUpdateFailedError as exc:
                view.say(f"rejected: {refusal_reason(exc.cause)}", "red")
            except TemporalError as exc:  # Temporal went away, or the run is gone
                view.say(
                    f"cannot send the decision ({getattr(exc, 'message', exc)}); answer with the command above", "red"
                )
                return

    async def _ask(self, pending: OverrideRequest, view: AskView) -> Choice | None:
        """The user's choice, asked again until it is one; None when they leave it (Ctrl-D)."""
        while True:
            view.prompt(question(pending))
            line = await self.reader.readline()
            if line is None:
                return None
            try:
                choice = parse_choice(line, pending.choices)
            except ValueError as exc:
                view.say(str(exc), "red")
                continue
            if choice.decision == "retry" and choice.arguments is None and pending.arguments:
                return await self._new_arguments(choice, pending, view)
            return choice

    async def _new_arguments(self, choice: Choice, pending: OverrideRequest, view: AskView) -> Choice | None:
        """Each argument of the retry: a new value, or Enter to keep it (all kept: the same arguments)."""
        changed: dict[str, str] = {}
        for name in pending.arguments:
            view.prompt(f"  new {name} (Enter keeps it; a JSON object sets them all): ")
            line = await self.reader.readline()
            if line is None:
                return None
            if line.strip().startswith("{"):
                try:
                    return Choice("retry", choice.reason, parse_arguments(line))
                except ValueError as exc:
                    view.say(str(exc), "red")
                    return await self._new_arguments(choice, pending, view)
            if line.strip():
                changed[name] = line.strip()
        return Choice("retry", choice.reason, {**pending.arguments, **changed} if changed else None)

    async def _while_waiting(
        self, run: AgentRun, pending: OverrideRequest, asking: Coroutine[Any, Any, Choice | None]
    ) -> Choice | None:
        """The answer, unless the run stops waiting for it first (then Withdrawn)."""
        answer = asyncio.ensure_future(asking)
        watch = asyncio.create_task(self._still_waiting(run, pending))
        try:
            await asyncio.wait({answer, watch}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (answer, watch):
                if not task.done():
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
        if answer.done() and not answer.cancelled():
            return answer.result()
        raise Withdrawn

    @staticmethod
    async def _still_waiting(run: AgentRun, pending: OverrideRequest) -> None:
        """Returns once the run no longer waits on this very request."""
        while True:
            await asyncio.sleep(WATCH_S)
            try:
                now = await run.pending_override()
            except Exception:  # Temporal briefly unreachable, or a query failing: the question stays open
                continue
            if now is None or now.challenge != pending.challenge:
                return
