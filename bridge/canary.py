"""Canary routing: which requests this agent takes and which go to the existing
agent-manager (ReAct), decided deterministically by request id so a redelivery goes the same way."""

from __future__ import annotations

import hashlib


def takes_request(request_id: str, enabled: bool, traffic_percentage: float) -> bool:
    if not enabled or traffic_percentage <= 0:
        return False
    if traffic_percentage >= 100:
        return True
    bucket = int(hashlib.sha256(request_id.encode()).hexdigest()[:8], 16) % 10_000  # 0.01 % resolution
    return bucket < traffic_percentage * 100
