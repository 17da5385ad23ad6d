"""Find the names a question mentions in the graph: exactly (ignoring case), as part of a stored value,
or by their longer words. What matches nothing at all is evidence too: the thing does not exist here."""

from __future__ import annotations

from backends.graph_store import PROPERTY_TEXT, GraphStore
from confidence_core.grounding import mentions, name_tokens
from contracts.query_path import EntityMatch, Grounding

MATCHES_PER_MENTION = 3
BOOKKEEPING_LABELS = ("ActionRecord",)  # the agent's own nodes, not the domain's

_FIND = ("MATCH (n) WHERE NOT labels(n)[0] IN $skip " + PROPERTY_TEXT + " WHERE {condition} "
         "RETURN labels(n)[0], k, text LIMIT $limit")
_CONDITIONS = {
    "exact": "toLower(text) = toLower($term)",
    "contains": "toLower(text) CONTAINS toLower($term)",
}


async def vocabulary(graph: GraphStore) -> set[str]:
    """The schema's own words: labels, relationship types and property keys."""
    words: set[str] = set()
    for procedure in ("db.labels()", "db.relationshipTypes()", "db.propertyKeys()"):
        words |= {str(r[0]) for r in (await graph.ro_query(f"CALL {procedure}", max_rows=10_000)).rows}
    return words


async def _find(graph: GraphStore, mention: str) -> list[EntityMatch]:
    for how, condition in _CONDITIONS.items():
        rows = await graph.ro_query(_FIND.format(condition=condition),
                                    {"term": mention, "skip": list(BOOKKEEPING_LABELS), "limit": MATCHES_PER_MENTION},
                                    max_rows=MATCHES_PER_MENTION)
        if rows.rows:
            return [EntityMatch(mention=mention, label=str(label), property=str(prop), value=str(value), how=how)
                    for label, prop, value in rows.rows]
    for word in name_tokens(mention):
        rows = await graph.ro_query(_FIND.format(condition=_CONDITIONS["contains"]),
                                    {"term": word, "skip": list(BOOKKEEPING_LABELS), "limit": MATCHES_PER_MENTION},
                                    max_rows=MATCHES_PER_MENTION)
        if rows.rows:
            return [EntityMatch(mention=mention, label=str(label), property=str(prop), value=str(value), how="words")
                    for label, prop, value in rows.rows]
    return []


def existence_query(names: list[str]) -> str:
    """A read-only query for where the graph holds any of `names` (in any property, as part of a value):
    the plan of last resort for a question about names that grounding found nowhere."""
    def literal(name: str) -> str:
        return "'" + name.replace("\\", "\\\\").replace("'", "\\'") + "'"
    condition = " OR ".join(f"toLower(text) CONTAINS toLower({literal(n)})" for n in names)
    return (f"MATCH (n) {PROPERTY_TEXT} WHERE {condition} "
            "RETURN labels(n)[0] AS label, k AS property, text AS value LIMIT 5")


async def ground(question: str, graph: GraphStore) -> Grounding:
    grounding = Grounding()
    for mention in mentions(question, await vocabulary(graph)):
        found = await _find(graph, mention)
        if found:
            grounding.matches.extend(found)
        else:
            grounding.unmatched.append(mention)
    return grounding
