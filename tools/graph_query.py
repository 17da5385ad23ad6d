"""GraphQuery: one read-only openCypher query against the local knowledge graph (FalkorDB)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from backends.graph_store import GraphQueryError
from confidence_core.cypher_text import broaden_cypher, query_literals
from confidence_core.ladder import Rung
from contracts.plan import ConfidenceMetrics
from contracts.query_path import StepInput, StepOutput
from tools.base import Tool
from tools.spec import ToolArgument, ToolSpec

if TYPE_CHECKING:
    from backends import Backends

MAX_LITERAL_CHECKS = 6


def score_rows(row_count: int, error: str | None, truncated: bool, retry_count: int = 0,
               literals: list[tuple[str, str, bool]] | None = None) -> ConfidenceMetrics:
    """Score a graph query's result from evidence: its size, and whether the values it matched on
    (`literals`: (value, "exact"|"contains", exists in the graph)) exist at all. An empty result is a
    genuine answer when everything it names exists; it is suspect when a named value exists nowhere."""
    literals = literals or []
    missing = [f"'{value}'" for value, mode, exists in literals if not exists]
    match_nothing = f"{', '.join(missing)} {'matches' if len(missing) == 1 else 'match'} nothing in the graph"
    if error:
        return ConfidenceMetrics(score=0.0, reasoning=f"Query failed: {error}", retry_count=retry_count)
    if row_count == 0:
        if missing:
            return ConfidenceMetrics(
                score=0.3, retry_count=retry_count,
                reasoning=f"Empty result and {match_nothing}: "
                          "the entities don't exist under that name or the query is too restrictive")
        if literals:
            return ConfidenceMetrics(
                score=0.85, retry_count=retry_count,
                reasoning="Entities verified to exist but nothing matches the pattern: the empty result is "
                          "a genuine answer (e.g. they are unconnected)")
        return ConfidenceMetrics(
            score=0.3, retry_count=retry_count,
            reasoning="Empty result may indicate entities don't exist or query too restrictive")
    if missing:
        return ConfidenceMetrics(
            score=0.6, retry_count=retry_count,
            reasoning=f"Query returned {row_count} row(s) but {match_nothing}")
    if truncated:
        return ConfidenceMetrics(
            score=0.8, retry_count=retry_count,
            reasoning=f"Query returned more rows than kept ({row_count} in all); the answer may miss some")
    verified = " with every named value found in the graph" if literals else ""
    return ConfidenceMetrics(score=0.9, reasoning=f"Query returned {row_count} row(s){verified}",
                             retry_count=retry_count)


class GraphQuery(Tool):
    spec = ToolSpec(
        offered_by_default=True,
        position=10,
        name="GraphQuery",
        description=(
            "Run one read-only openCypher query against the knowledge graph and return the rows. "
            "Use the graph schema given below: only its labels, relationship types and properties exist."
        ),
        arguments=[ToolArgument(name="query", description="a read-only openCypher query (MATCH ... RETURN ...)")],
        default_threshold=0.8,
        uses_schema=True,
    )

    def available(self, backends: Backends) -> bool:
        return backends.graph is not None

    async def run(self, request: StepInput, backends: Backends) -> StepOutput:
        graph = backends.graph
        assert graph is not None  # not registered without one
        query = request.step.arguments.get("query", "")
        try:
            rows = await graph.ro_query(query, timeout_ms=request.step.timeout_ms, max_rows=backends.max_rows)
        except GraphQueryError as exc:
            # The query's own fault (syntax, a write, an unknown function): no transport retry helps.
            error = str(exc)
            return StepOutput(success=False, output=f"Query rejected by the graph: {error}", error=error,
                              confidence=score_rows(0, error, False, request.retry_count))
        literals = [(value, mode, await graph.value_exists(value, mode))
                    for value, mode in query_literals(query)[:MAX_LITERAL_CHECKS]]
        return StepOutput(success=True, output=rows.to_json(),
                          confidence=score_rows(rows.total_rows, None, rows.truncated, request.retry_count, literals))

    def adjust(self, arguments: dict[str, str], rung: Rung) -> dict[str, str] | None:
        """The adjusted rung broadens the query: exact matches become case-insensitive CONTAINS, more hops."""
        if rung is not Rung.ADJUSTED:
            return None
        broadened = broaden_cypher(arguments.get("query", ""))
        return {**arguments, "query": broadened} if broadened else None
