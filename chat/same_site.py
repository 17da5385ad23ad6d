"""Refuse requests a web page on another site makes with the user's browser. DNS rebinding points a
hostile name at the API's loopback address, so the browser sends that name as Host: only the API's own
names are answered. A cross-site form or fetch carries the other site's Origin: only the API's own origin
and the configured ones are answered. Both are compared whole, as `name[:port]` and `scheme://name[:port]`:
a URL parser reads `evil.example@localhost` or `localhost#.evil.example` as "localhost", and an origin on
another scheme is another site. A plain ASGI middleware, so the event streams pass through unbuffered."""

from __future__ import annotations

import re

import structlog
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from chat.auth import is_loopback

log = structlog.get_logger(__name__)
LOOPBACK_NAMES = {"localhost", "127.0.0.1", "[::1]"}
SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}
# What a Host header may be (RFC 9110's uri-host [":" port], without percent-escapes): a DNS name or IPv4
# address (underscores allowed, as container names have them), or an IPv6 address in brackets. Anything
# else (userinfo, a path, a fragment, a space) is no host of ours.
_HOST = re.compile(
    r"(?P<name>[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?|\[[0-9a-f:.]+\])(?::(?P<port>[0-9]{1,5}))?", re.IGNORECASE
)


def host_parts(host: str) -> tuple[str, str] | None:
    """(name, port) of a Host header: the name lower-case (an IPv6 address in brackets) without a trailing
    dot, the port "" when none is given. None when it is not exactly `name[:port]`."""
    match = _HOST.fullmatch(host.strip())
    if match is None:
        return None
    return match["name"].lower().rstrip("."), match["port"] or ""


def answered_hosts(bind_host: str, configured: list[str]) -> set[str] | None:
    """The hosts to answer, each `name` (any port) or `name:port` (that port only); None: any (an API bound
    off loopback needs tokens, which a page lacks)."""
    names = {_written(h) for h in configured} - {""}
    own = _written(bind_host)
    if is_loopback(bind_host):
        return names | LOOPBACK_NAMES | {own}
    return (names | {own}) if names else None


def _written(host: str) -> str:
    """A configured host (or the bind address) as answers() compares it; "" when it is no host."""
    if host.count(":") > 1 and not host.startswith("["):
        host = f"[{host}]"  # a bare IPv6 address, as a bind address is written
    parts = host_parts(host)
    if parts is None:
        return ""
    name, port = parts
    return f"{name}:{port}" if port else name


class SameSiteOnly:
    def __init__(self, app: ASGIApp, hosts: set[str] | None, origins: list[str]) -> None:
        self.app = app
        self.hosts = hosts
        self.origins = {o.rstrip("/").lower() for o in origins}

    def refusal(self, headers: Headers, method: str, scheme: str) -> str:
        host = headers.get("host", "")
        parts = host_parts(host)
        if (host and parts is None) or (self.hosts is not None and not self.answers(parts)):
            return f"this API does not answer to the host name {host!r}"
        origin = headers.get("origin")
        if origin is not None:
            # Same origin: the very scheme, name and port this request came to (a browser sends them as such).
            same = bool(host) and origin.lower() == f"{scheme}://{host}".lower()
            if not same and origin.rstrip("/").lower() not in self.origins:
                return f"cross-site requests from {origin!r} are refused"
        elif headers.get("sec-fetch-site") == "cross-site" and method not in SAFE_METHODS:
            return "cross-site requests are refused"
        return ""

    def answers(self, parts: tuple[str, str] | None) -> bool:
        """Is the Host one of ours: its name (any port), or exactly its name and port?"""
        if self.hosts is None:
            return True
        if parts is None:
            return False
        name, port = parts
        return name in self.hosts or (bool(port) and f"{name}:{port}" in self.hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refused = self.refusal(Headers(scope=scope), scope["method"], scope.get("scheme", "http"))
        if refused:
            log.warning("http_cross_site_refused", method=scope["method"], path=scope["path"], reason=refused)
            await JSONResponse({"detail": refused}, status_code=403)(scope, receive, send)
            return
        await self.app(scope, receive, send)
