"""Readiness of the worker and bridge processes a test starts itself, read from their logs.

A request on a non-persistent topic that nobody consumes yet is dropped, not queued: asking before the bridge
has subscribed loses the question (seen under load, where the bridge took more than the 3 s a test slept)."""

from __future__ import annotations

from embedded.processes import ManagedProcess, ReadyCheck


def logged(event: str) -> ReadyCheck:
    """Ready once the process's log has `event` (the bridge logs bridge_ready after subscribing)."""

    async def check(part: ManagedProcess) -> bool:
        try:
            return f'"event": "{event}"' in part.log_path.read_text(errors="replace")
        except OSError:
            return False

    return check
