"""A small real MCP server for the demo and the tests (official `mcp` SDK), over stdio or streamable HTTP.

Its tools are deterministic and need no network: business-day arithmetic and currency conversion at
fixed demo rates (stated in each result, so no one mistakes them for market rates).

    python -m embedded.mcp_demo_server                                  # stdio
    python -m embedded.mcp_demo_server --transport streamable-http --port 8765
    DEMO_TOKEN=s3cret python -m embedded.mcp_demo_server --transport streamable-http --bearer-token-env DEMO_TOKEN

With `--bearer-token-env NAME`, every HTTP request must carry `Authorization: Bearer <the value of NAME>`
(read from the environment, so the token never shows in a process list): to try an MCP client's headers.
"""

from __future__ import annotations

import argparse
import hmac
import os
from datetime import date, timedelta
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel

DEMO_RATES_TO_USD = {
    "USD": 1.0,
    "EUR": 1.08,
    "GBP": 1.27,
    "JPY": 0.0067,
    "CAD": 0.73,
    "BRL": 0.18,
    "INR": 0.012,
    "MXN": 0.055,
}

# Both tools only compute: marked read-only, they are called without a human's approval.
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

server = MCPServer(
    name="tg-confidence-demo-tools", instructions="Deterministic date and currency helpers for procurement questions."
)


class Conversion(BaseModel):
    amount: float
    from_currency: str
    to_currency: str
    converted: float
    rate: float
    rates_note: str


class BusinessDays(BaseModel):
    start: str
    end: str
    business_days: int


def _parse(day: str, what: str) -> date:
    try:
        return date.fromisoformat(day)
    except ValueError as exc:
        raise ToolError(f"{what} must be an ISO date like 2024-03-15, got {day!r}") from exc


@server.tool(
    annotations=READ_ONLY,
    description="Convert an amount between currencies (USD EUR GBP JPY CAD BRL INR MXN) at fixed demo rates.",
)
def convert_currency(amount: float, from_currency: str, to_currency: str) -> Conversion:
    source, target = from_currency.upper(), to_currency.upper()
    for code in (source, target):
        if code not in DEMO_RATES_TO_USD:
            raise ToolError(f"unknown currency {code!r}; known: {', '.join(DEMO_RATES_TO_USD)}")
    rate = DEMO_RATES_TO_USD[source] / DEMO_RATES_TO_USD[target]
    return Conversion(
        amount=amount,
        from_currency=source,
        to_currency=target,
        converted=round(amount * rate, 2),
        rate=round(rate, 6),
        rates_note="fixed demo rates, not market data",
    )


@server.tool(
    annotations=READ_ONLY,
    description="Count business days (Monday to Friday) from start (inclusive) to end (exclusive), ISO dates.",
)
def business_days_between(start: str, end: str) -> BusinessDays:
    first, last = _parse(start, "start"), _parse(end, "end")
    step = 1 if last >= first else -1
    count = 0
    day = first
    while day != last:
        if day.weekday() < 5:
            count += step
        day += timedelta(days=step)
    return BusinessDays(start=start, end=end, business_days=count)


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m embedded.mcp_demo_server",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--transport", choices=["stdio", "streamable-http"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument(
        "--bearer-token-env",
        metavar="NAME",
        default="",
        help="HTTP only: require the bearer token held by this environment variable",
    )
    args = parser.parse_args()
    if args.transport == "stdio":
        server.run("stdio")
    elif not args.bearer_token_env:
        server.run("streamable-http", host=args.host, port=args.port)
    else:
        import uvicorn

        token = os.environ.get(args.bearer_token_env, "")
        if not token:
            parser.error(f"the environment variable {args.bearer_token_env} is not set")
        app = BearerRequired(server.streamable_http_app(host=args.host), token)
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


class BearerRequired:
    """ASGI middleware: a 401 for any HTTP request without the right bearer token."""

    def __init__(self, app: Any, token: str) -> None:
        self.app, self.expected = app, f"Bearer {token}".encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers", [])).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [(b"content-type", b"text/plain"), (b"www-authenticate", b"Bearer")],
                    }
                )
                await send({"type": "http.response.body", "body": b"a bearer token is required"})
                return
        await self.app(scope, receive, send)


if __name__ == "__main__":
    main()
