"""Whether the programs that read the question almost as well as code's first give the same answer: each close
rival (evidence within RIVAL_GAP of the first's) is run beside it, and the share whose rows differ is evidence
for the calibrator (confidence/evidence.py `rivals_disagree`). Two readings that agree leave the answer where it
is whichever was meant; two that differ say the ranking decided between answers on little evidence."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from backends.graph_store import GraphQueryError
from cypher.programs import Program

if TYPE_CHECKING:
    from backends.graph_store import GraphStore

RIVALS = 3  # programs after the first that may be run: each costs one read
RIVAL_GAP = 3  # evidence (cypher/programs.py's scale) within which another program is a rival reading
RIVAL_TIMEOUT_MS = 2000  # a rival that takes longer is left out, not waited for
RIVAL_ROWS = 50


def close_rivals(found: Sequence[Program]) -> list[Program]:
    """The programs after the first whose evidence is within RIVAL_GAP of its, at most RIVALS."""
    if not found:
        return []
    return [p for p in found[1 : RIVALS + 1] if found[0].score - p.score <= RIVAL_GAP]


def answer_of(rows: Sequence[Sequence[object]]) -> frozenset[str]:
    """What rows say, whatever their order and columns: the set of their values as text ("Lithium" listed
    alone or beside its own name is the same answer)."""
    return frozenset(str(value) for row in rows for value in row)


async def _answer(graph: GraphStore, query: str) -> frozenset[str] | None:
    try:
        rows = await graph.ro_query(query, timeout_ms=RIVAL_TIMEOUT_MS, max_rows=RIVAL_ROWS)
    except GraphQueryError:  # a timeout too: FalkorDB refuses a read that runs past it
        return None
    return answer_of(rows.rows)


async def rivals_disagree(graph: GraphStore, found: Sequence[Program]) -> float | None:
    """The share of the first program's close rivals whose answer differs from its own: 0 when there is none
    or all agree; None when the first cannot be run (its step will say why)."""
    rivals = close_rivals(found)
    if not rivals:
        return 0.0
    first = await _answer(graph, found[0].query)
    if first is None:
        return None
    answers = [await _answer(graph, rival.query) for rival in rivals]
    compared = [answer for answer in answers if answer is not None]
    return sum(answer != first for answer in compared) / len(compared) if compared else None
