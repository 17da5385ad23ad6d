"""Sending a human's decision to a run that waits for one: the update `submit_override`, signed over the
challenge of the request the run waits on when a key is given. `tg-confidence override` and the inline
prompt of `ask` both decide through here, so they are checked and recorded alike."""

from __future__ import annotations

import os
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from contracts.override import Override
from overrides.checks import signed_decision
from service.run_client import AgentRun


def default_decider() -> str:
    """Who decides when --by is not given: the logged-in user."""
    return os.environ.get("USER", "")


def default_signing_key() -> Path | None:
    """The private key that signs decisions when --key is not given (env TGCA_OVERRIDE_KEY)."""
    return Path(key) if (key := os.environ.get("TGCA_OVERRIDE_KEY")) else None


class NotAwaiting(Exception):
    """The run waits on no override of that step (decided already, timed out, or never asked)."""


async def signed_for_run(
    run: AgentRun, decision: Override, private: Ed25519PrivateKey, challenge: str = ""
) -> Override:
    """The decision signed over `challenge`, or over the one of the request the run waits on."""
    if not challenge:
        pending = await run.pending_override()
        if pending is None or pending.step_id != decision.step_id:
            waiting = f"it waits on step {pending.step_id}" if pending else "it waits on no step"
            raise NotAwaiting(f"{run.id} is not awaiting an override of step {decision.step_id} ({waiting})")
        challenge = pending.challenge
    return signed_decision(decision, private, run.id, challenge)
