"""The shared frame of the read-only action look-up tools (list_available_actions and its siblings):
they read the ontology's action definitions, and the graph for a dry run. None changes anything."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from contracts.plan import ConfidenceMetrics
from contracts.query_path import StepOutput
from tools.base import Tool

if TYPE_CHECKING:
    from backends import Backends


def action_output(payload: dict[str, Any], success: bool, score: float, reasoning: str, retry: int) -> StepOutput:
    # A look-up that failed names something the ontology lacks: the same arguments fail the same way.
    return StepOutput(
        success=success,
        output=json.dumps(payload, default=str),
        error=None if success else reasoning,
        deterministic=not success and score == 0.0,
        confidence=ConfidenceMetrics(score=score, reasoning=reasoning, retry_count=retry),
    )


class ActionLookupTool(Tool):
    def available(self, backends: Backends) -> bool:
        return backends.graph is not None and backends.ontology is not None and bool(backends.ontology.actions)
