"""What an action batch asks before it writes: was it started by one of this service's agent runs, and does
that run's own history say it started exactly this batch (same run, step, targets, values)? Answered by the
`check_batch_parent` local activity (`contracts/names.py: Activities.CHECK_BATCH_PARENT`,
activities/batch_parent.py) for ActionBatchWorkflow."""

from __future__ import annotations

from pydantic import BaseModel

from contracts.action_path import BatchRequest


class BatchParentCheck(BaseModel):
    batch_id: str  # the batch workflow's own id, as its parent named it when starting it
    parent_id: str
    parent_run_id: str
    request: BatchRequest  # the batch's input, to be found word for word in the parent's history


class BatchParentVerdict(BaseModel):
    refusal: str = ""  # why the batch must not run; empty: the parent started exactly this batch

    @property
    def approved(self) -> bool:
        return not self.refusal
