"""A graph query's doubts: the signs that it answers another question than the one asked, computed once per
query and step. Three readers used to recompute them each in its own way: whether the planner's query is
cross-checked by the query form (`form_when_doubted`), which candidate loses a tie (tools/query_candidates.py),
and the evidence signals of the query that ran (`unasked`, `short_walk`, `unused_names`). The checks
themselves live in questions/, backends/schema_check.py and backends/grounding.py (an empty walk against how the
graph connects the names it joins); this module only gathers them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from backends.grounding import walks_shorter_than_connection
from confidence.answer_check import holds_nothing
from confidence.answer_fit import asks_for_name
from questions.figures import unused_figures
from questions.named_terms import unused_names
from questions.walks import without_names
from service.off_loop import off_loop

if TYPE_CHECKING:
    from backends.graph_store import QueryRows
    from backends.schema_check import SchemaCheck
    from contracts.query_path import Grounding


@dataclass(frozen=True)
class QueryDoubts:
    """What one query leaves out of, or adds to, the question it was written for."""

    query: str
    ignored_names: tuple[str, ...] = ()  # names the question gives, the graph holds and the query never uses
    unused_figures: tuple[str, ...] = ()  # figures the question gives ("above 5000") the query never uses
    unasked: str | None = None  # the kind of thing asked for ("which supplier") that the query never matches
    walk_doubts: tuple[str, ...] = ()  # a walk shorter than the question spells out, or rows of the named things
    rows_without_names: bool = False  # "which"/"who" asked, but the rows hold no text (False when rows unknown)
    # an empty result (or an aggregate over nothing) whose walk joins two named things by fewer relationships
    # than the graph needs to connect them: it could never match
    too_short_joins: tuple[str, ...] = ()

    @property
    def calls_for_form(self) -> bool:
        """Worth a cross-check by the query form (`form_when_doubted`): it ignores a name or a figure the question
        gives (the form sets a condition on what it reaches), or draws one of the planner's doubts. The rows are
        left out: they were never part of this."""
        return bool(
            self.ignored_names or self.unused_figures or self.unasked or self.walk_doubts or self.too_short_joins
        )

    @property
    def loses_ties(self) -> bool:
        """Placed after undoubted candidates on a tie (tools/query_candidates.py): it returns only figures where
        a name is asked for, leaves out a figure the question gives, or draws one of the planner's doubts."""
        return self.rows_without_names or bool(
            self.unused_figures or self.unasked or self.walk_doubts or self.too_short_joins
        )


async def query_doubts(
    question: str, query: str, grounding: Grounding, schema: SchemaCheck | None, rows: QueryRows | None = None
) -> QueryDoubts:
    """The query's doubts, each kind checked once: the schema's only with a schema, the rows' only with rows (an
    empty result's walk is checked against how the graph connects the names it joins). The grounding's names and
    what it matched are what count (not its facts for the writers)."""
    textless = (
        rows is not None and asks_for_name(question) and not any(isinstance(v, str) for row in rows.rows for v in row)
    )
    unasked = await schema.unasked(question, [query]) if schema is not None else None
    walks = await schema.walk_doubts(question, [query], grounding) if schema is not None else []
    too_short = (
        await walks_shorter_than_connection(query, grounding, schema.graph)
        if schema is not None and rows is not None and holds_nothing(rows.rows)
        else []
    )
    names, figures = await off_loop(
        "the query's name and figure checks", lambda: _text_doubts(question, query, grounding)
    )
    return QueryDoubts(
        query=query,
        ignored_names=names,
        unused_figures=figures,
        unasked=unasked,
        walk_doubts=tuple(walks),
        rows_without_names=textless,
        too_short_joins=tuple(too_short),
    )


def _text_doubts(question: str, query: str, grounding: Grounding) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The names and the figures the question gives that the query leaves out: text checks only."""
    return (tuple(unused_names(query, grounding)), tuple(unused_figures(without_names(question, grounding), query)))
