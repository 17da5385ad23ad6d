"""Refuse requests a web page on another site makes with the user's browser. DNS rebinding points a
hostile name at the API's loopback address, so the browser sends that name as Host: only the API's own
names are answered. A cross-site form or fetch carries the other site's Origin: only the API's own origin
and the configured ones are answered. A plain ASGI middleware, so the event streams pass through
unbuffered."""

from __future__ import annotations

from urllib.parse import urlsplit

import structlog
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from chat.auth import is_loopback

log = structlog.get_logger(__name__)
LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1"}
SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}


def answered_hosts(bind_host: str, configured: list[str]) -> set[str] | None:
    """The Host names to answer; None: any (an API bound off loopback needs tokens, which a page lacks)."""
    names = {h.lower().strip("[]") for h in configured}
    if is_loopback(bind_host):
        return names | LOOPBACK_NAMES | {bind_host.lower()}
    return (names | {bind_host.lower()}) if names else None


def host_name(host_header: str) -> str:
    """`name:port`, `[v6]:port` or `name` -> the name, lower-case, without brackets."""
    return (urlsplit(f"//{host_header}").hostname or "").lower()


class SameSiteOnly:
    def __init__(self, app: ASGIApp, hosts: set[str] | None, origins: list[str]) -> None:
        self.app = app
        self.hosts = hosts
        self.origins = {o.rstrip("/").lower() for o in origins}

    def refusal(self, headers: Headers, method: str) -> str:
        host = headers.get("host", "")
        if self.hosts is not None and host_name(host) not in self.hosts:
            return f"this API does not answer to the host name {host!r}"
        origin = headers.get("origin")
        if origin is not None:
            parts = urlsplit(origin)
            same = origin != "null" and parts.netloc.lower() == host.lower()
            if not same and origin.rstrip("/").lower() not in self.origins:
                return f"cross-site requests from {origin!r} are refused"
        elif headers.get("sec-fetch-site") == "cross-site" and method not in SAFE_METHODS:
            return "cross-site requests are refused"
        return ""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refused = self.refusal(Headers(scope=scope), scope["method"])
        if refused:
            log.warning("http_cross_site_refused", method=scope["method"], path=scope["path"], reason=refused)
            await JSONResponse({"detail": refused}, status_code=403)(scope, receive, send)
            return
        await self.app(scope, receive, send)
