"""The TrustGraph flow the current activity works for: set around each activity from its run's flow
(worker/flow_context.py), read where TrustGraph's services are called (backends/trustgraph.py) and where
results are cached (tools/cache.py), so that nothing one flow's services answered reaches another flow's run."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from contracts.flow import FlowTopics

_CURRENT: ContextVar[FlowTopics | None] = ContextVar("tgca_flow", default=None)


def current_flow() -> FlowTopics | None:
    return _CURRENT.get()


@contextmanager
def in_flow(flow: FlowTopics | None) -> Iterator[None]:
    token = _CURRENT.set(flow)
    try:
        yield
    finally:
        _CURRENT.reset(token)
