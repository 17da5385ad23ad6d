"""Step results cached with a TTL, keyed by tool, arguments and the inputs the step saw (memory manager)."""

from __future__ import annotations

import hashlib
import json
import time

from backends.flow_scope import current_flow
from contracts.query_path import StepInput, StepOutput

MAX_ENTRIES = 1000


class ResultCache:
    def __init__(self, ttl_s: float) -> None:
        self.ttl_s = ttl_s
        self._entries: dict[str, tuple[float, StepOutput]] = {}

    @staticmethod
    def key(request: StepInput) -> str:
        """A run on one TrustGraph flow never reads what another flow's services answered: the flow is in the key."""
        flow = current_flow()
        material = json.dumps(
            [
                request.step.function,
                request.step.arguments,
                request.context,
                *([request.collection] if request.collection else []),
                *([f"flow:{flow.key}"] if flow is not None else []),
            ],
            sort_keys=True,
        )
        return hashlib.sha256(material.encode()).hexdigest()

    def get(self, request: StepInput) -> StepOutput | None:
        # A retry asked for a fresh attempt: never answer it from the cache.
        if self.ttl_s <= 0 or request.retry_count:
            return None
        entry = self._entries.get(self.key(request))
        if entry is None or entry[0] < time.monotonic():
            return None
        return entry[1]

    def put(self, request: StepInput, output: StepOutput) -> None:
        """Kept without the explain messages of the services the tool called: those link a trace under this step of
        this run, and a result answered from the cache called no service."""
        if self.ttl_s <= 0 or not output.success:
            return
        output = output.model_copy(update={"explain": []})
        if len(self._entries) >= MAX_ENTRIES:
            now = time.monotonic()
            self._entries = {k: v for k, v in self._entries.items() if v[0] >= now}
            if len(self._entries) >= MAX_ENTRIES:
                self._entries.pop(next(iter(self._entries)))
        self._entries[self.key(request)] = (time.monotonic() + self.ttl_s, output)
