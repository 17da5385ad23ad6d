"""GraphQuery: one read-only openCypher query against the local knowledge graph (FalkorDB)."""

from __future__ import annotations

import json
import time
from functools import partial
from typing import TYPE_CHECKING

from backends.graph_store import GraphQueryError, QueryRows
from backends.grounding import compared_where_held, dates_read_as_dates, ground, misplaced_names
from confidence.answer_check import holds_nothing
from confidence.answer_fit import ORDERED_KEY
from confidence.ladder import Rung
from contracts.plan import ConfidenceMetrics
from contracts.query_path import StepInput, StepOutput
from contracts.tool_spec import ToolArgument, ToolSpec
from cypher.clause_order import repaired
from cypher.null_order import ranked_without_nulls
from cypher.read_only import refusals
from cypher.text import ordered_by, query_literals, query_shape
from planning.adjusters import broadened_query
from service.off_loop import off_loop
from tools.base import Tool
from tools.query_candidates import Tally, cross_check
from tools.query_doubts import QueryDoubts, query_doubts
from tools.unasked_limit import unasked_limit_lifted

if TYPE_CHECKING:
    from backends import Backends

MAX_LITERAL_CHECKS = 6
# The result's list of names the question gives that the graph does not hold: a key the answer writer
# reads as words (a bare "absent" was once written into an answer as if it were a name).
ABSENT_KEY = "names_not_in_the_graph"
# The share of the step's timeout the candidate queries may use in all: the rest is for scoring and slack.
# At 0.6 (18 s of the default 30) the query form, ~15 s on 2 cores, timed out in 11 of 60 steps.
CANDIDATE_BUDGET_SHARE = 0.8
# The score of rows from a query that leaves out a figure the question gives ("a population above 19000000"), or
# that hold no name where the question asks which: below any graph step's threshold, so the ladder repairs the
# query. Left out, the answer named all three neighbours of a country where one has that population, at 0.9;
# asked which airport is lowest, the rows held only the height and the answer invented the airport (seed 2).
DOUBTED_ROWS_SCORE = 0.5


def score_rows(
    row_count: int,
    error: str | None,
    truncated: bool,
    retry_count: int = 0,
    literals: list[tuple[str, str, bool]] | None = None,
    absent: list[str] | None = None,
    unnamed: list[str] | None = None,
) -> ConfidenceMetrics:
    """Score a graph query's result from evidence: its size, whether the values it matched on (`literals`:
    (value, "exact"|"contains", exists in the graph)) exist at all, and whether the names the question
    itself mentions exist (`absent`: those found nowhere, not even in part). An empty result is a genuine
    answer when everything it names exists, and when the question is about something that does not exist;
    it is suspect when the query's own value exists nowhere though the question's names do. `unnamed`: names
    of the question no stored value equals or contains (only other names sharing a word): with an empty
    result, the thing does not exist under that name either; with rows, they may be the other thing's."""
    scored = _score_rows(row_count, error, truncated, retry_count, literals or [], absent or [], unnamed or [])
    missing = sum(1 for _, _, exists in literals or [] if not exists)
    nowhere = len(absent or []) + len(unnamed or [])
    signals = {
        "rows": float(row_count),
        "checked_values": float(len(literals or [])),
        "unmatched_values": float(missing),
        "absent_names": float(nowhere),
        "truncated": float(truncated),
        "error": float(bool(error)),
    }
    names = {
        "absent_names": [*(absent or []), *(unnamed or [])],
        "unmatched_values": [value for value, _, exists in literals or [] if not exists],
    }
    return scored.model_copy(update={"signals": signals, "names": {k: v for k, v in names.items() if v}})


def _score_rows(
    row_count: int,
    error: str | None,
    truncated: bool,
    retry_count: int,
    literals: list[tuple[str, str, bool]],
    absent: list[str],
    unnamed: list[str],
) -> ConfidenceMetrics:
    nowhere = ", ".join(f"'{name}'" for name in absent)
    missing = [f"'{value}'" for value, mode, exists in literals if not exists]
    match_nothing = f"{', '.join(missing)} {'matches' if len(missing) == 1 else 'match'} nothing in the graph"
    if error:
        return ConfidenceMetrics(score=0.0, reasoning=f"Query failed: {error}", retry_count=retry_count)
    if row_count == 0:
        if unnamed and not absent:
            names = ", ".join(f"'{name}'" for name in unnamed)
            return ConfidenceMetrics(
                score=0.9,
                retry_count=retry_count,
                reasoning=f"Empty result, and no stored name is or contains the question's {names} (only other "
                "names share a word with it): it does not exist here under that name",
            )
        if absent:
            return ConfidenceMetrics(
                score=0.9,
                retry_count=retry_count,
                reasoning=f"Empty result, and the question's {nowhere} matches nothing in the graph, not even in "
                "part: it does not exist here",
            )
        if missing:
            return ConfidenceMetrics(
                score=0.3,
                retry_count=retry_count,
                reasoning=f"Empty result and {match_nothing}: "
                "the entities don't exist under that name or the query is too restrictive",
            )
        if literals:
            return ConfidenceMetrics(
                score=0.85,
                retry_count=retry_count,
                reasoning="Entities verified to exist but nothing matches the pattern: the empty result is "
                "a genuine answer (e.g. they are unconnected)",
            )
        return ConfidenceMetrics(
            score=0.3,
            retry_count=retry_count,
            reasoning="Empty result may indicate entities don't exist or query too restrictive",
        )
    if missing:
        return ConfidenceMetrics(
            score=0.6, retry_count=retry_count, reasoning=f"Query returned {row_count} row(s) but {match_nothing}"
        )
    if absent:
        return ConfidenceMetrics(
            score=0.5,
            retry_count=retry_count,
            reasoning=f"Query returned {row_count} row(s), but the question's {nowhere} matches nothing in the "
            "graph: the rows may not be about what was asked",
        )
    if unnamed:
        names = ", ".join(f"'{name}'" for name in unnamed)
        return ConfidenceMetrics(
            score=0.5,
            retry_count=retry_count,
            reasoning=f"Query returned {row_count} row(s), but no stored name is or contains the question's {names} "
            "(only other names share a word with it): the rows may be about another thing",
        )
    if truncated:
        return ConfidenceMetrics(
            score=0.8, retry_count=retry_count, reasoning="Query returned more rows than kept; the answer may miss some"
        )
    verified = " with every named value found in the graph" if literals else ""
    return ConfidenceMetrics(
        score=0.9, reasoning=f"Query returned {row_count} row(s){verified}", retry_count=retry_count
    )


def _output(rows: QueryRows, named_nowhere: list[str], order: str | None) -> str:
    """The rows as the answer's writer reads them, with the names the question gives that the graph does not
    hold, and what the rows are ordered by (a superlative's answer is the first row: answer_fit.py)."""
    if not named_nowhere and not order:
        return rows.to_json()
    extra: dict[str, object] = {ABSENT_KEY: named_nowhere} if named_nowhere else {}
    if order:
        extra[ORDERED_KEY] = order
    return json.dumps({**json.loads(rows.to_json()), **extra}, default=str, separators=(",", ":"))


def _certain_repairs(query: str) -> str | None:
    """The query with its clause-order slips rewritten and a descending ranking's missing values left out; None for
    a query that is no read (refused as it is, never EXPLAINed or rewritten)."""
    if refusals(query):
        return None
    fixed = repaired(query) or query
    return ranked_without_nulls(fixed) or fixed  # FalkorDB ranks a missing value above every other


def _read_back(query: str) -> tuple[list[tuple[str, str]], str | None, dict[str, float]]:
    """What the query that ran is read for: the values it looks up (to check that they exist), what its rows are
    ordered by, and its shape (evidence for the calibrator)."""
    return query_literals(query)[:MAX_LITERAL_CHECKS], ordered_by(query), query_shape(query)


def _refused(error: str, retry_count: int, *, ran: bool) -> StepOutput:
    """The query's own fault: the same query would fail the same way, so the ladder repairs it."""
    what = "Query rejected by the graph" if ran else "Query not run"
    return StepOutput(
        success=False,
        output=f"{what}: {error}",
        error=error,
        deterministic=True,
        confidence=score_rows(0, error, False, retry_count),
    )


async def _without_unasked_limit(
    request: StepInput, query: str, rows: QueryRows, backends: Backends
) -> tuple[str, QueryRows, str]:
    """The query and its rows, run again without a LIMIT the question never asked for when the rows stopped
    exactly there (tools/unasked_limit.py), with what was done in words; as they were otherwise."""
    if rows.total_rows < 2:
        return query, rows, ""  # no LIMIT below 2 is lifted: the query need not be read
    lifted = await off_loop(
        "the check for a LIMIT the question never asked for",
        partial(unasked_limit_lifted, query, request.question, rows.total_rows),
    )
    if lifted is None:
        return query, rows, ""
    assert backends.graph is not None
    try:
        fuller = await backends.graph.ro_query(lifted, timeout_ms=request.step.timeout_ms, max_rows=backends.max_rows)
    except GraphQueryError:
        return query, rows, ""  # the written query's rows stand
    if fuller.total_rows <= rows.total_rows:
        return query, rows, ""
    return (
        lifted,
        fuller,
        (
            f"the query stopped at LIMIT {rows.total_rows}, which the question does not ask for: "
            f"run without it, {len(fuller.rows)} rows"
        ),
    )


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

    async def check(self, arguments: dict[str, str], backends: Backends) -> list[str]:
        """A query that is no read (it writes, loads a CSV file or calls a procedure not on the read list), that
        FalkorDB rejects without running it (syntax, unknown function), or that names what the graph's schema
        lacks (a label, a relationship type or its direction, a property)."""
        assert backends.graph is not None
        query = arguments.get("query", "")
        refused = await off_loop("the read-only check", partial(refusals, query))
        if refused:
            return refused
        error = await backends.graph.explain_error(query)
        if error:
            hint = await backends.schema.sql_hint(query) if backends.schema is not None else None
            return [f"FalkorDB rejects the query: {error}" + (f"; {hint}" if hint else "")]
        return await backends.schema.problems(query) if backends.schema is not None else []

    async def fix(self, arguments: dict[str, str], backends: Backends) -> dict[str, str] | None:
        """Clause-order slips FalkorDB rejects (a WHERE after RETURN, an aggregate in ORDER BY without an
        alias, a RETURN mid-query) are rewritten, and relationships written against their direction or
        between labels they do not join are corrected where the schema leaves no doubt, and a value compared on
        a node whose label never stores it moves to the one node that does: the small model often hands the
        same query back when asked to repair these. A descending ranking by a property leaves out the rows
        without it (cypher/null_order.py)."""
        query = arguments.get("query")
        if not query:
            return None
        fixed = await off_loop("the query's clause-order repairs", partial(_certain_repairs, query))
        if fixed is None:  # no read
            return None
        if backends.schema is not None:
            fixed = await backends.schema.corrected(fixed) or fixed
        if backends.graph is not None:
            fixed = await compared_where_held(fixed, backends.graph) or fixed
            fixed = await dates_read_as_dates(fixed, backends.graph) or fixed
        return {**arguments, "query": fixed} if fixed != query else None

    async def run(self, request: StepInput, backends: Backends) -> StepOutput:
        graph = backends.graph
        assert graph is not None  # not registered without one
        arguments = await self.fix(request.step.arguments, backends) or request.step.arguments
        query = arguments.get("query", "")
        problems = await self.check(arguments, backends)
        if problems:
            return _refused("; ".join(problems), request.retry_count, ran=False)
        started = time.monotonic()
        try:
            rows = await graph.ro_query(query, timeout_ms=request.step.timeout_ms, max_rows=backends.max_rows)
        except GraphQueryError as exc:
            # The query's own fault (syntax, a write, an unknown function): no transport retry helps.
            return _refused(str(exc), request.retry_count, ran=True)
        query, rows, lifted = await _without_unasked_limit(request, query, rows, backends)
        # Only candidate queries read the entity descriptions: without them the step needs none.
        grounding = await ground(request.question, graph, describe=backends.graph_candidates > 1)
        # Checked once: for the cross-check's decision and vote, and (if it stays the query that ran) its evidence.
        doubts = await query_doubts(request.question, query, grounding, backends.schema, rows)
        candidates = self._candidates(request, doubts, backends)
        tally: Tally | None = None
        if candidates > 1:
            if backends.graph_candidates == 1:  # cross-checked because doubted: the writers need the descriptions
                grounding = await ground(request.question, graph)
            budget = CANDIDATE_BUDGET_SHARE * request.step.timeout_ms / 1000 - (time.monotonic() - started)
            tally = await cross_check(
                self,
                request.question,
                query,
                rows,
                grounding,
                backends,
                budget,
                request.step.timeout_ms,
                candidates,
                doubts,
            )
            query, rows, doubts = tally.query, tally.rows, tally.doubts
        looked_up, order, shape = await off_loop("the reading of the query that ran", partial(_read_back, query))
        literals = [(value, mode, await graph.value_exists(value, mode)) for value, mode in looked_up]
        absent = grounding.unmatched
        unnamed = grounding.only_by_words()
        named_nowhere = absent + unnamed
        output = _output(rows, named_nowhere, order)
        # A count of 0 over a name stored nowhere is the empty result it stands for, not an answer about it.
        # So is one over a walk too short to join the names it joins (tools/query_doubts.py).
        found = 0 if (named_nowhere or doubts.too_short_joins) and holds_nothing(rows.rows) else rows.total_rows
        confidence = score_rows(found, None, rows.truncated, request.retry_count, literals, absent, unnamed)
        misplaced = await misplaced_names(query, grounding, graph) if found == 0 and not named_nowhere else []
        if misplaced:  # not "entities verified to exist": they exist, but not where the query looked
            confidence = confidence.model_copy(
                update={
                    "score": 0.3,
                    "reasoning": "Empty result, and " + "; ".join(misplaced),
                    "signals": {**confidence.signals, "unmatched_values": float(len(misplaced))},
                    "names": {k: v for k, v in confidence.names.items() if k != "unmatched_values"},
                }
            )
        elif found == 0 and doubts.too_short_joins:  # not "they are unconnected": the walk could never join them
            confidence = confidence.model_copy(
                update={"score": 0.3, "reasoning": "Empty result, and " + "; ".join(doubts.too_short_joins)}
            )
        if doubts.unasked:
            # the rows are about other things than the question asks for: evidence for the calibrator
            confidence = confidence.model_copy(update={"signals": {**confidence.signals, "unasked": 1.0}})
        if doubts.walk_doubts or doubts.too_short_joins:
            # a walk shorter than the question spells out, or rows of the named things themselves
            confidence = confidence.model_copy(update={"signals": {**confidence.signals, "short_walk": 1.0}})
        if doubts.unused_figures:  # a broader question's answer: the ladder repairs it, told which figure
            figures = ", ".join(doubts.unused_figures)
            confidence = confidence.model_copy(
                update={
                    "score": min(confidence.score, DOUBTED_ROWS_SCORE),
                    "reasoning": f"{confidence.reasoning}; the query never uses the question's "
                    f"figure{'s' if len(doubts.unused_figures) > 1 else ''} {figures}, so it answers a "
                    "broader question: add the condition it sets",
                    "signals": {**confidence.signals, "unused_figures": float(len(doubts.unused_figures))},
                    "names": {**confidence.names, "unused_figures": list(doubts.unused_figures)},
                }
            )
        nameless = doubts.rows_without_names and not holds_nothing(rows.rows)
        if nameless:  # "which airport is highest" answered with a height: the answer would have to invent the name
            confidence = confidence.model_copy(
                update={
                    "score": min(confidence.score, DOUBTED_ROWS_SCORE),
                    "reasoning": f"{confidence.reasoning}; the question asks which or who, but the rows hold no name: "
                    "return the name of what the query reaches or ranks, with the figure",
                }
            )
        if lifted:
            confidence = confidence.model_copy(update={"reasoning": f"{confidence.reasoning}; {lifted}"})
        if tally is not None:
            confidence = confidence.model_copy(
                update={
                    "reasoning": f"{confidence.reasoning}; {tally.describe()}",
                    "signals": {
                        **confidence.signals,
                        "candidates": float(tally.valid),
                        "agreement": tally.agreement,
                        **({"form_agrees": float(tally.form_agrees)} if tally.form_agrees is not None else {}),
                    },
                }
            )
        # the shape of the query that ran, and the question's names it ignores: evidence for the calibrator
        ignored = list(doubts.ignored_names)
        confidence = confidence.model_copy(
            update={
                "signals": {**confidence.signals, **shape, "unused_names": float(len(ignored))},
                "names": {**confidence.names, "unused_names": ignored} if ignored else confidence.names,
            }
        )
        # A walk that could never join the names gives the same nothing when run again, a query without the
        # question's figure the same broader answer, rows without names the same figures: the ladder repairs them.
        return StepOutput(
            success=True,
            output=output,
            confidence=confidence,
            deterministic=(found == 0 and bool(doubts.too_short_joins)) or bool(doubts.unused_figures) or nameless,
        )

    @staticmethod
    def _candidates(request: StepInput, doubts: QueryDoubts, backends: Backends) -> int:
        """How many queries this step compares: none besides its own once repaired (a repaired query is not
        voted on); the setting's; or, with the setting off, the query form's too when the planner's query looks
        like an answer to another question (it ignores a name the question gives and the graph holds, or draws
        one of the planner's doubts: `form_when_doubted`), so that only doubted steps pay for it."""
        if request.retry_count > 0:
            return 1
        if backends.graph_candidates > 1:
            return backends.graph_candidates
        if not backends.form_when_doubted or backends.schema is None:
            return 1
        return 2 if doubts.calls_for_form else 1

    def adjust(self, arguments: dict[str, str], rung: Rung) -> dict[str, str] | None:
        """The adjusted rung broadens the query (planning/adjusters.py, which workflow code calls)."""
        return broadened_query(arguments, rung)
