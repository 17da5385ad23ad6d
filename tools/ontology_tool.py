"""The shared frame of the ontology-driven knowledge-graph tools (search_instances and its siblings).

Parameterized, read-only Cypher with enforced limits. Labels, relationship types and property keys come
only from the ontology (never from the caller's text); search terms, names and filter values travel as
query parameters, so nothing a user or an LLM writes can change a query.
"""

from __future__ import annotations

import json
from abc import abstractmethod
from typing import TYPE_CHECKING, Any

from actions.ontology import Ontology, UnknownName
from backends.graph_store import GraphQueryError
from contracts.plan import ConfidenceMetrics
from contracts.query_path import StepInput, StepOutput
from tools.base import Tool

if TYPE_CHECKING:
    from backends import Backends
    from backends.graph_store import GraphStore

MAX_LIMIT = 100


class BadArguments(ValueError):
    pass


def int_argument(arguments: dict[str, str], name: str, default: int, low: int, high: int) -> int:
    """A whole-number argument, clamped to [low, high]; missing or blank: the default."""
    raw = arguments.get(name, "")
    if not str(raw).strip():
        return default
    try:
        value = int(str(raw).strip())
    except ValueError as exc:
        raise BadArguments(f"{name} must be a whole number, got {raw!r}") from exc
    return min(max(value, low), high)


def label(class_name: str) -> str:
    return f":`{class_name}`" if class_name else ""


def match_instance(ontology: Ontology, variable: str, parameter: str) -> str:
    """A node whose key or display property equals the parameter (exactly, or ignoring case)."""
    checks = " OR ".join(
        f"({variable}:`{name}` AND (toLower(toString({variable}.`{c.key}`)) = toLower(${parameter}) OR "
        f"toLower(toString({variable}.`{c.display}`)) = toLower(${parameter})))"
        for name, c in ontology.classes.items()
    )
    return f"MATCH ({variable}) WHERE {checks}"


def instance(labels: list[str], props: dict[str, Any]) -> dict[str, Any]:
    return {"class": labels[0] if labels else None, **props}


def rows_output(rows: list[Any], what: str, retry_count: int) -> StepOutput:
    """Found rows are strong evidence (0.9); none found is weak (0.3): the retry ladder may broaden."""
    if not rows:
        return StepOutput(
            success=True,
            output=json.dumps({"results": [], "count": 0}),
            confidence=ConfidenceMetrics(score=0.3, reasoning=f"no {what} found", retry_count=retry_count),
        )
    return StepOutput(
        success=True,
        output=json.dumps({"results": rows, "count": len(rows)}, default=str),
        confidence=ConfidenceMetrics(score=0.9, reasoning=f"{len(rows)} {what} found", retry_count=retry_count),
    )


def refused(error: Exception, retry_count: int) -> StepOutput:
    return StepOutput(
        success=False,
        output=f"Bad arguments: {error}",
        error=str(error),
        deterministic=True,
        confidence=ConfidenceMetrics(score=0.0, reasoning=f"bad arguments: {error}", retry_count=retry_count),
    )


class OntologyTool(Tool):
    """A tool over the local graph whose query is built from the ontology. Subclasses say what they
    find (`finds`, for the reasoning) and build the rows from validated arguments."""

    finds: str = "results"

    def available(self, backends: Backends) -> bool:
        return backends.graph is not None and backends.ontology is not None

    async def run(self, request: StepInput, backends: Backends) -> StepOutput:
        assert backends.graph is not None and backends.ontology is not None  # not registered without them
        try:
            rows = await self.rows(request.step.arguments, backends.graph, backends.ontology)
        except (BadArguments, UnknownName, GraphQueryError) as exc:
            return refused(exc, request.retry_count)
        return rows_output(rows, self.finds, request.retry_count)

    @abstractmethod
    async def rows(self, args: dict[str, str], graph: GraphStore, ontology: Ontology) -> list[Any]:
        """The result rows; BadArguments, UnknownName or GraphQueryError for arguments that cannot work."""
