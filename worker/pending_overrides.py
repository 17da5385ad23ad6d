"""How many runs wait for a human's override right now, for the `agent_overrides_pending` gauge.

Temporal holds that state, not this process: a run waiting since before this worker started, or on another
worker, counts too, and a restart loses nothing. So the count comes from Temporal's visibility store (the
`TgcaAwaitingOverride` search attribute each run keeps), read on a timer; every worker reports the same
number, so a dashboard takes the max across workers, not the sum.
"""

from __future__ import annotations

import asyncio

import structlog
from prometheus_client import Gauge
from temporalio.client import Client
from temporalio.service import RPCError

from contracts.names import SA_AWAITING_OVERRIDE

log = structlog.get_logger(__name__)

PENDING_QUERY = f'{SA_AWAITING_OVERRIDE.name} = true AND ExecutionStatus = "Running"'
REFRESH_S = 15.0
UNKNOWN = -1  # the gauge while the count cannot be read: a dashboard shows "unknown", never a stale number


async def count_pending_overrides(
    client: Client, gauge: Gauge, every_s: float = REFRESH_S, query: str = PENDING_QUERY
) -> None:
    """Refresh `gauge` every `every_s` until cancelled; a failed read sets it to UNKNOWN and logs once per outage."""
    failing = False
    while True:
        try:
            count = await asyncio.wait_for(client.count_workflows(query), timeout=every_s)
        except (RPCError, TimeoutError) as exc:
            gauge.set(UNKNOWN)
            if not failing:
                log.warning("overrides_pending_unreadable", query=query, error=str(exc) or type(exc).__name__)
            failing = True
        else:
            gauge.set(count.count)
            if failing:
                log.info("overrides_pending_readable", pending=count.count)
            failing = False
        await asyncio.sleep(every_s)
