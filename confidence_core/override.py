"""The checks on a human's override decision, and the short form a Pulsar follow-up carries it in."""

from __future__ import annotations

import hashlib

from contracts.override import Decision, Override, OverrideRejected, OverrideRequest


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def check_override(override: Override, pending: OverrideRequest | None, known_steps: set[str],
                   token_sha256: list[str]) -> Decision:
    """The decision if the override is acceptable now; OverrideRejected says why not."""
    if token_sha256 and token_digest(override.token) not in token_sha256:
        raise OverrideRejected("not authorized: overrides need a valid override token")
    if override.step_id not in known_steps:
        raise OverrideRejected(f"unknown step {override.step_id!r}")
    try:
        decision = Decision(override.decision)
    except ValueError:
        raise OverrideRejected(
            f"invalid decision {override.decision!r}; choose one of {', '.join(d.value for d in Decision)}"
        ) from None
    if pending is None or pending.step_id != override.step_id:
        waiting = f"step {pending.step_id} is" if pending else "no step is"
        raise OverrideRejected(f"step {override.step_id} is not awaiting an override ({waiting})")
    if decision.value not in pending.choices:
        raise OverrideRejected(f"{decision.value} is not a choice here; choose one of {', '.join(pending.choices)}")
    if override.arguments is not None and decision is not Decision.RETRY:
        raise OverrideRejected("arguments can only be given with the retry decision")
    return decision


def parse_pulsar_override(text: str) -> Override:
    """The decision carried by a follow-up AgentRequest (state "override") in its question: a JSON object
    {"step_id": ..., "decision": ..., "arguments"?, "reason"?, "by"?, "token"?} or the short form
    "<step_id> <decision> [reason ...]"."""
    text = text.strip()
    if text.startswith("{"):
        try:
            return Override.model_validate_json(text)
        except ValueError as exc:
            raise OverrideRejected(f"the override is not a valid JSON decision: {exc}") from exc
    words = text.split()
    if len(words) < 2:
        raise OverrideRejected('an override needs a step id and a decision, e.g. "s1 accept"')
    return Override(step_id=words[0], decision=words[1].lower(), reason=" ".join(words[2:]))
