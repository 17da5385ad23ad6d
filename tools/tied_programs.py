"""Of the programs code ranks first or nearly (within TIED_GAP), one that answers before one that matches
nothing: a walk the words do not tell from another ("the country an airport is in", by its city or by its
city's region, one hop more that no word says) is about as likely meant, and the one the data does not hold
returns no rows. Run, not guessed: each tied program is read once (a row is enough), the first to give one
goes first, and the rest keep their order. An empty answer stays possible: when every tied program is empty,
or the others trail by more, the order is code's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import structlog

from backends.graph_store import GraphQueryError
from cypher.programs import Program

if TYPE_CHECKING:
    from backends.graph_store import GraphStore

log = structlog.get_logger(__name__)

TIED_RUN = 4  # tied programs read at most: each costs one short read of the graph
TIED_GAP = 1  # evidence below the first's that still counts as tied: one hop the words do not account for
TIED_TIMEOUT_MS = 3000


def _answers(rows: list[list[Any]]) -> bool:
    """Whether the rows say something: any row but a lone one of nothing (a count of 0, a total of null)."""
    if not rows:
        return False
    return len(rows) > 1 or any(cell not in (None, 0, [], "") for cell in rows[0])


async def answering_first(found: Sequence[Program], graph: GraphStore) -> list[Program]:
    """`found` with the first of its tied programs that answers moved to the front."""
    ranked = list(found)
    tied = [i for i, program in enumerate(ranked[:TIED_RUN]) if program.score >= ranked[0].score - TIED_GAP]
    if len(tied) < 2:
        return ranked
    for i in tied:
        try:
            rows = (await graph.ro_query(ranked[i].query, timeout_ms=TIED_TIMEOUT_MS, max_rows=1)).rows
        except GraphQueryError as exc:  # too slow, say: it keeps its place
            log.info("tied_program_unread", error=str(exc))
            continue
        if _answers(rows):
            return [ranked[i], *ranked[:i], *ranked[i + 1 :]]
    return ranked
