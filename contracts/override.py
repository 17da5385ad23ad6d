"""The human override of a step whose confidence stayed below its threshold, and the approval of an
action: the request a run makes and the decision a human sends (signal `override`, update
`submit_override`, or a Pulsar follow-up with state "override"). The checks are overrides/checks.py."""

from __future__ import annotations

import base64
import binascii
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, field_validator


class Decision(StrEnum):
    ACCEPT = "accept"  # use the low-confidence result as it is
    RETRY = "retry"  # run the step once more, optionally with new arguments
    SKIP = "skip"  # drop the step (its dependents are skipped too)
    ABORT = "abort"  # end the run with an error


class Role(StrEnum):
    """What an identity may decide (AgentSettings.override_keys)."""

    REVIEW = "review"  # accept, retry, skip or abort a step whose confidence stayed low
    APPROVE = "approve"  # approve (or refuse) an action batch
    UNDO = "undo"  # undo executed actions (tg-confidence actions undo)
    AUDIT = "audit"  # over HTTP: read every caller's runs and conversations, and the action history
    ACT = "act"  # start an action that changes data (the request's user, when identities are configured)


class OverrideIdentity(BaseModel):
    """Someone who may decide: a name, the Ed25519 public key their decisions are signed with (base64 of the
    32 raw bytes; `tg-confidence keys new` makes a pair) and their roles. Only public keys are configured,
    so nothing in the settings, and hence in any history, lets anyone sign."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    public_key: str
    roles: list[Role] = Field(min_length=1)

    @field_validator("public_key")
    @classmethod
    def _raw_ed25519(cls, value: str) -> str:
        try:
            raw = base64.b64decode(value, validate=True)
        except (ValueError, binascii.Error):
            raw = b""
        if len(raw) != 32:
            raise ValueError("public_key must be the base64 of a 32-byte Ed25519 public key (tg-confidence keys new)")
        return value


class OverrideRequest(BaseModel):
    step_id: str
    function: str
    score: float
    threshold: float
    reasoning: str
    retries: int
    arguments: dict[str, str] = Field(default_factory=dict)
    choices: list[str] = Field(default_factory=lambda: [d.value for d in Decision])
    timeout_s: float
    # The role a decider needs, and the challenge a signed decision must cover: unique to this request, so a
    # decision recorded in a history approves nothing else.
    role: Role = Role.REVIEW
    challenge: str = ""
    # Set when `retry` was taken out of the choices: a human had the step retried this many times already.
    max_human_retries: int | None = None


class Override(BaseModel):
    """What a human sends. Unknown keys are rejected, not dropped: a misspelled "argumnets" must not turn
    "retry with this query" into "retry with the same query"."""

    model_config = ConfigDict(extra="forbid")

    step_id: str
    decision: str
    arguments: dict[str, str] | None = None
    reason: str = ""
    by: str = ""  # the identity deciding (its name in override_keys, when keys are configured)
    # base64 Ed25519 signature of overrides.signing.signed_message(...): over every field above, `reason` and
    # `by` included, since each reaches the run's record and its caller.
    signature: str = ""


class OverrideRejected(ValueError):
    pass


OVERRIDE_STATE = "override"
