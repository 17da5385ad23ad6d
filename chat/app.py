"""The HTTP chat API and the browser UI. A client of the same machinery as every other caller: chat messages
go to the agent as TrustGraph AgentRequests over Pulsar (chat/runs.py), and runs, overrides and
conversations are read and answered through Temporal. One router per resource in chat/routes/; what they
share reaches them as dependencies (chat/dependencies.py). docs/http-api.md describes every route; FastAPI
serves the OpenAPI docs at /docs."""

from __future__ import annotations

from fastapi import FastAPI

from chat.dependencies import ChatDeps
from chat.routes import actions, ask, conversations, examples, health, overrides, page, runs, static_files
from chat.same_site import SameSiteOnly


def create_app(deps: ChatDeps) -> FastAPI:
    app = FastAPI(
        title="tg-confidence-agent chat API",
        version="1",
        description="Ask the confidence-controlled agent, watch its runs, answer its questions.",
    )
    app.state.deps = deps
    for routes in (ask, runs, overrides, conversations, actions, examples, health, page, static_files):
        app.include_router(routes.router)
    app.add_middleware(SameSiteOnly, hosts=deps.hosts, origins=deps.origins)
    return app
