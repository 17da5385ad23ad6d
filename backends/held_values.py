"""Which of a question's candidate value words (questions/value_words.py) the graph stores as values: a word
that is one of the few values a property takes across a label ("open", "paid" of an invoice's status), or the
name of a true/false property ("paid" of an order). A name ("Paris" of a city) is not: its property takes about
as many values as there are nodes. One scan of the graph for the words, one count per property found."""

from __future__ import annotations

from collections.abc import Sequence

from backends.graph_store import BOOKKEEPING_LABELS, GraphStore
from cypher.programs import HeldValue
from questions.value_words import ValueWord

MAX_FOUND = 50  # (label, key, value) rows read: a question names a few values
MAX_CATEGORIES = 30  # a property taking more values than this names things rather than sorting them
NODES_PER_VALUE = 2  # ... or taking about as many values as there are nodes (fewer than this many nodes each)

_FIND = (
    "MATCH (n) WHERE NOT labels(n)[0] IN $skip UNWIND keys(n) AS k "
    "WITH labels(n)[0] AS label, k, n[k] AS v "
    "WHERE (typeOf(v) = 'String' AND toLower(v) IN $words) OR (typeOf(v) = 'Boolean' AND toLower(k) IN $words) "
    "RETURN DISTINCT label, k, typeOf(v) = 'Boolean', CASE WHEN typeOf(v) = 'Boolean' THEN '' ELSE v END "
    "LIMIT $limit"
)
_SPREAD = "MATCH (n:`{label}`) WHERE n.`{key}` IS NOT NULL RETURN count(DISTINCT n.`{key}`), count(n)"


def _quoted_name(name: str) -> str:
    return name.replace("`", "``")


async def _sorts_nodes(graph: GraphStore, label: str, key: str) -> bool:
    """Does `key` take few values across the nodes of `label` (a category, not a name)?"""
    rows = (await graph.ro_query(_SPREAD.format(label=_quoted_name(label), key=_quoted_name(key)))).rows
    if not rows:
        return False
    values, nodes = int(rows[0][0]), int(rows[0][1])
    return values <= MAX_CATEGORIES and values * NODES_PER_VALUE <= nodes


async def held_values(graph: GraphStore, candidates: Sequence[ValueWord]) -> list[HeldValue]:
    """The candidates the graph stores as a category value or names as a flag, each with the label and key
    that hold it. A word held as said is not also read as negated ("unpaid" stored as a value)."""
    if not candidates:
        return []
    words = {c.word for c in candidates} | {c.said for c in candidates if c.said}
    rows = (
        await graph.ro_query(
            _FIND,
            {"words": sorted(words), "skip": list(BOOKKEEPING_LABELS), "limit": MAX_FOUND},
            max_rows=MAX_FOUND,
            timeout_ms=30_000,
        )
    ).rows
    stored: dict[tuple[str, str, str], str] = {}  # (label, key, word) -> the value as stored
    for label, key, flag, value in rows:
        word = str(key).lower() if flag else str(value).lower()
        stored[(str(label), str(key), word)] = "true" if flag else str(value)
    sorting: dict[tuple[str, str], bool] = {}
    found: list[HeldValue] = []
    for candidate in candidates:
        for (label, key, word), value in stored.items():
            if word != candidate.word or (label, key, candidate.said) in stored:
                continue  # "unpaid" stored as a value of the same key: it is not "paid" negated
            if value != "true" and (label, key) not in sorting:
                sorting[(label, key)] = await _sorts_nodes(graph, label, key)
            if value == "true" or sorting[(label, key)]:
                found.append(HeldValue(label, key, value, candidate.negated))
    return list(dict.fromkeys(found))
