"""What every route depends on: the API's shared state (`ChatDeps`, kept on `app.state`) and who is calling.
Routes take them as FastAPI dependencies (`Deps`, `Who`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

import structlog
from fastapi import Depends, Header, HTTPException, Request
from temporalio.client import Client

from backends.action_history import ActionHistory
from backends.graph_store import GraphStore
from chat.auth import Authenticator, Caller, Unauthorized
from chat.runs import RunStreams
from chat.stream_slots import StreamSlots
from contracts.override import OverrideIdentity
from service.run_recovery import RunLookup

log = structlog.get_logger(__name__)


@dataclass
class ChatDeps:
    temporal: Client
    streams: RunStreams
    auth: Authenticator
    namespace: str = "default"
    temporal_ui_url: str = ""
    actions: ActionHistory | None = None
    graph: GraphStore | None = None  # the loaded graph, read for example questions
    override_keys: list[OverrideIdentity] | None = None  # the workers' identities: decisions must be signed
    hosts: set[str] | None = None  # Host names answered (chat/same_site.py); None: any
    origins: list[str] = field(default_factory=list)  # other sites' origins allowed to call from a browser
    streams_open: StreamSlots = field(default_factory=lambda: StreamSlots(total=64, per_caller=8))
    stream_max_s: float = 900.0  # a stream ends after this; the client continues from its last event id
    runs: RunLookup = field(init=False)  # where a stream takes the messages the response topic dropped

    def __post_init__(self) -> None:
        self.runs = RunLookup(self.temporal)

    def ui_link(self, workflow_id: str) -> str:
        """The run in the Temporal Web UI ("" when no UI is configured)."""
        base = self.temporal_ui_url.rstrip("/")
        return f"{base}/namespaces/{self.namespace}/workflows/{workflow_id}" if base else ""


def chat_deps(request: Request) -> ChatDeps:
    deps: ChatDeps = request.app.state.deps
    return deps


Deps = Annotated[ChatDeps, Depends(chat_deps)]


def caller(request: Request, deps: Deps, authorization: Annotated[str | None, Header()] = None) -> Caller:
    """Every route's dependency: who is calling (401 without a valid token when tokens are configured)."""
    try:
        who = deps.auth.caller(authorization)
    except Unauthorized as exc:
        log.warning("http_unauthorized", method=request.method, path=request.url.path, reason=str(exc))
        raise HTTPException(401, str(exc), headers={"WWW-Authenticate": "Bearer"}) from None
    log.info("http_request", who=who.name, method=request.method, path=request.url.path)
    return who


Who = Annotated[Caller, Depends(caller)]
