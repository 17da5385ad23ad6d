"""The graph's side of checking an action request's scope (actions/scope.py): which of the
request's names the graph stores, on which class and property, and the stored values of the targets'
category properties (a status), so that a stated "approved" can be told from ordinary words."""

from __future__ import annotations

from actions.ontology import Ontology
from actions.request_scope import HeldName, RequestScope
from actions.scope_words import names_class, says, words
from backends.graph_store import GraphStore
from backends.grounding import vocabulary
from contracts.action_path import ActionIntent
from questions.named_terms import mentions

MAX_CATEGORIES = 30  # a property with more distinct values is free text (a reason, a note), not a category
_HELD = (
    "MATCH (n) WHERE labels(n)[0] IN $classes UNWIND keys(n) AS k WITH n, k, n[k] AS v "
    "WHERE typeOf(v) = 'String' AND toLower(v) = toLower($term) "
    "RETURN labels(n)[0], k, v, count(n), collect(properties(n))[0]"
)


async def request_scope(request: str, graph: GraphStore, ontology: Ontology, intent: ActionIntent) -> RequestScope:
    """The request's names as the graph stores them (in the ontology's classes only: the agent's own
    bookkeeping is not the domain), the stored values of the targets' category properties, and how many
    related entities the plan's related name names (as target resolution reads it: exactly or in part)."""
    scope = RequestScope()
    entity_type = intent.entity_type
    name = intent.related_name.strip()
    if name and intent.related_class in ontology.classes:
        related = ontology.classes[intent.related_class]
        rows = await graph.ro_query(
            f"MATCH (x:`{intent.related_class}`) WHERE toLower(toString(x.`{related.display}`)) "
            f"CONTAINS toLower($name) OR x.`{related.key}` = $name RETURN count(x)",
            {"name": name},
        )
        scope.related_name_entities = int(rows.rows[0][0]) if rows.rows else 0
    for mention in mentions(request, await vocabulary(graph)):
        rows = await graph.ro_query(_HELD, {"term": mention, "classes": list(ontology.classes)}, max_rows=50)
        if not rows.rows:
            scope.unheld.append(mention)
        for label, prop, value, count, first in rows.rows:
            key = ontology.classes[str(label)].key
            scope.held.append(
                HeldName(
                    mention=mention,
                    class_name=str(label),
                    property=str(prop),
                    value=str(value),
                    entities=int(count),
                    key=str(first.get(key, "")) if count == 1 else "",
                )
            )
    scope.categories = await categories(graph, ontology, entity_type)
    # A related class's category value in lower case ("payments whose method is check") is no capitalised
    # name: found where the request speaks of that class.
    text = words(request)
    own = {words(v) for values in scope.categories.values() for v in values}  # the targets' own come first
    for r in ontology.relationships_of(entity_type):
        other = r.to if r.from_ == entity_type else r.from_
        if other == entity_type or not names_class(text, other):
            continue
        for prop, values in (await categories(graph, ontology, other)).items():
            for value in values:
                held = any(
                    h.class_name == other and h.property == prop and words(h.value) == words(value) for h in scope.held
                )
                inside = any(says(words(h.mention), value) for h in scope.held)  # "Hamburg" of "Hamburg Depot"
                if not held and not inside and words(value) not in own and says(text, value):
                    scope.held.append(HeldName(mention=value, class_name=other, property=prop, value=value, entities=2))
    return scope


async def categories(graph: GraphStore, ontology: Ontology, class_name: str) -> dict[str, list[str]]:
    """The class's string properties with few distinct values (a status, a method), and their values."""
    cls = ontology.require_class(class_name)
    found = {}
    for prop, kind in cls.properties.items():
        if kind != "string" or prop in (cls.key, cls.display):
            continue
        rows = await graph.ro_query(
            f"MATCH (e:`{class_name}`) WHERE e.`{prop}` IS NOT NULL "
            f"RETURN DISTINCT e.`{prop}` LIMIT {MAX_CATEGORIES + 1}",
            max_rows=MAX_CATEGORIES + 1,
        )
        if 0 < len(rows.rows) <= MAX_CATEGORIES:
            found[prop] = [str(r[0]) for r in rows.rows]
    return found
