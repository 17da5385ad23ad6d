"""The human override of a step whose confidence stayed below its threshold, and the approval of an
action: the request a run makes and the decision a human sends (signal `override`, update
`submit_override`, or a Pulsar follow-up with state "override"). The checks are confidence_core/override.py."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class Decision(StrEnum):
    ACCEPT = "accept"  # use the low-confidence result as it is
    RETRY = "retry"    # run the step once more, optionally with new arguments
    SKIP = "skip"      # drop the step (its dependents are skipped too)
    ABORT = "abort"    # end the run with an error


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


class Override(BaseModel):
    """What a human sends. Unknown keys are rejected, not dropped: a misspelled "argumnets" must not turn
    "retry with this query" into "retry with the same query"."""

    model_config = ConfigDict(extra="forbid")

    step_id: str
    decision: str
    arguments: dict[str, str] | None = None
    reason: str = ""
    by: str = ""
    token: str = ""


class OverrideRejected(ValueError):
    pass


OVERRIDE_STATE = "override"
