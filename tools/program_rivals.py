"""Whether the programs that read the question almost as well as code's first give the same answer: each close
rival (the same answer shape, evidence within RIVAL_GAP of the first's) is run beside it, and the share whose
rows differ is evidence for the calibrator (confidence/evidence.py `rivals_disagree`). Two readings that agree
leave the answer where it is whichever was meant; two that differ say the ranking chose on little evidence."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from backends.graph_store import GraphQueryError
from cypher.programs import Program

if TYPE_CHECKING:
    from backends.graph_store import GraphStore

RIVALS = 3  # rival programs run at most: each costs one read
RANKED = 8  # programs looked through for rivals
RIVAL_GAP = 3  # evidence (cypher/programs.py's scale) within which another program is a rival reading
RIVAL_TIMEOUT_MS = 2000  # a rival that takes longer is left out, not waited for
RIVAL_ROWS = 50


def close_rivals(found: Sequence[Program]) -> list[Program]:
    """The programs after the first that answer in the same shape (another walk, key or condition for the
    names, the count, the total asked) with evidence within RIVAL_GAP of its, at most RIVALS. A count beside
    a list always differs, so another shape says nothing of which reading was meant."""
    if not found:
        return []
    first = found[0]
    return [
        p for p in found[1:RANKED] if p.intent.answer == first.intent.answer and first.score - p.score <= RIVAL_GAP
    ][:RIVALS]


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
