"""Find the names a question mentions in the graph: exactly (ignoring case), as part of a stored value,
or by their longer words. What matches nothing at all is evidence too: the thing does not exist here."""

from __future__ import annotations

import re
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

import structlog

from backends.graph_store import BOOKKEEPING_LABELS, PROPERTY_TEXT, GraphQueryError, GraphStore
from contracts.query_path import EntityMatch, Grounding
from contracts.redaction import sanitize
from cypher.intent import identifying_key
from cypher.text import blank_strings, labelled_variables
from cypher.text_dates import all_iso_dates, converted_reads, temporal_comparisons
from questions.answer_shape import SHAPE_WORDS
from questions.linking import FUNCTION_WORDS, NUMBER_WORDS
from questions.named_terms import (
    FORMED_EXTRA,
    Neighbours,
    describe_connection,
    describe_entity,
    describe_grounding,
    mentions,
    misplaced_name,
    move_comparison,
    name_stems,
    name_tokens,
    named_lookups,
    names_in_lower_case,
    occurrences,
    opened_phrases,
    property_comparisons,
    said_phrases,
)
from questions.walks import named_joins
from service.off_loop import off_loop

if TYPE_CHECKING:
    from backends import Backends

log = structlog.get_logger(__name__)

MATCHES_PER_MENTION = 3
DESCRIBED_ENTITIES = 2  # entities whose stored facts the planner is shown (each costs prompt tokens)
NEIGHBOUR_EXAMPLES = 3

_FIND = (
    "MATCH (n) WHERE NOT labels(n)[0] IN $skip " + PROPERTY_TEXT + " WHERE {condition} "
    "RETURN labels(n)[0], k, text LIMIT $limit"
)

_StoredMatch = Literal["exact", "contains"]  # how a stored value holds the term
_CONDITIONS: dict[_StoredMatch, str] = {
    "exact": "toLower(text) = toLower($term)",
    "contains": "toLower(text) CONTAINS toLower($term)",
}


async def vocabulary(graph: GraphStore) -> set[str]:
    """The schema's own words: labels, relationship types and property keys."""
    words: set[str] = set()
    for procedure in ("db.labels()", "db.relationshipTypes()", "db.propertyKeys()"):
        words |= {str(r[0]) for r in (await graph.ro_query(f"CALL {procedure}", max_rows=10_000)).rows}
    return words


async def _stored(
    graph: GraphStore, how: _StoredMatch, term: str, limit: int = MATCHES_PER_MENTION
) -> list[list[object]]:
    """(label, property, value) of up to `limit` domain nodes storing `term` exactly or as part of a value."""
    return (
        await graph.ro_query(
            _FIND.format(condition=_CONDITIONS[how]),
            {"term": term, "skip": list(BOOKKEEPING_LABELS), "limit": limit},
            max_rows=limit,
        )
    ).rows


# With one holder's keys, as _PHRASES: a stem is kept only on the key that names nodes of its label.
_FORMED = (
    "MATCH (n) WHERE NOT labels(n)[0] IN $skip " + PROPERTY_TEXT + " WHERE ANY(stem IN $stems WHERE "
    "toLower(text) STARTS WITH toLower(stem) AND size(text) <= size(stem) + $extra) "
    "WITH labels(n)[0] AS label, k, text, collect(keys(n)) AS held RETURN label, k, text, head(held) LIMIT $limit"
)
FORMED_LOOKED = 20  # stored names looked at for an adjective's stems (the nearest few are kept)


async def _formed(graph: GraphStore, mention: str) -> list[EntityMatch]:
    """The stored names a capitalised adjective is formed from ("African": Africa, "Swedish": Sweden), on the
    key that names nodes of their label: those nearest in length to a stem ("Indian": India, not Indiana)."""
    stems = name_stems(mention)
    if not stems:
        return []
    rows = (
        await graph.ro_query(
            _FORMED,
            {"stems": stems, "extra": FORMED_EXTRA, "skip": list(BOOKKEEPING_LABELS), "limit": FORMED_LOOKED},
            max_rows=FORMED_LOOKED,
        )
    ).rows
    named = [(str(label), str(key), str(value)) for label, key, value, keys in rows if identifying_key(keys) == key]

    def distance(value: str) -> int:
        return min(len(value) - len(stem) for stem in stems if value.lower().startswith(stem.lower()))

    nearest = min((distance(value) for _, _, value in named), default=0)
    named = sorted((m for m in named if distance(m[2]) == nearest), key=lambda m: m[2])
    return [
        EntityMatch(mention=mention, label=label, property=key, value=value, how="formed")
        for label, key, value in named
    ][:MATCHES_PER_MENTION]


CONTINUED_WORDS = 2  # lower-case words after a capitalised name that may end it ("the Swiss franc")
_NEXT_WORDS = re.compile(r"\s+([a-z][\w-]*)")


async def _continued(question: str, graph: GraphStore, mention: str) -> list[EntityMatch]:
    """The stored name a capitalised mention begins and the lower-case words after it end, the longest first:
    "the Swiss franc" is the currency Swiss Franc, though "Swiss" alone is only part of names."""
    at = question.find(mention)
    if at < 0:
        return []
    after: list[str] = []
    rest = question[at + len(mention) :]
    while len(after) < CONTINUED_WORDS and (word := _NEXT_WORDS.match(rest)) is not None:
        after.append(word.group(1))
        rest = rest[word.end() :]
    for n in range(len(after), 0, -1):
        phrase = " ".join([mention, *after[:n]])
        rows = await _stored(graph, "exact", phrase)
        if rows:
            return [
                EntityMatch(mention=phrase, label=str(label), property=str(prop), value=str(value), how="exact")
                for label, prop, value in rows
            ]
    return []


async def _find(graph: GraphStore, mention: str) -> list[EntityMatch]:
    for how in _CONDITIONS:
        rows = await _stored(graph, how, mention)
        if rows:
            return [
                EntityMatch(mention=mention, label=str(label), property=str(prop), value=str(value), how=how)
                for label, prop, value in rows
            ]
    for word in name_tokens(mention):
        rows = await _stored(graph, "contains", word)
        if rows:
            return [
                EntityMatch(mention=mention, label=str(label), property=str(prop), value=str(value), how="words")
                for label, prop, value in rows
            ]
    return []


# Names a question writes as stored, found in one scan: equal as written (case and all), so a city called
# "Reading" is no match for the word "reading". One row per stored value, however many nodes hold it, with one
# holder's keys: the name is kept only when it is on the key that names nodes of its label (not a status).
_PHRASES = (
    "MATCH (n) WHERE NOT labels(n)[0] IN $skip UNWIND keys(n) AS k WITH n, k, n[k] AS v "
    "WHERE typeOf(v) = 'String' AND (CASE WHEN $any_case THEN toLower(v) ELSE v END) IN $phrases "
    "WITH labels(n)[0] AS label, k, v, collect(keys(n)) AS held RETURN label, k, v, head(held) LIMIT $limit"
)
# The words English opens a request or a question with ("Count the ...", "Which ...", "Three of ..."): a
# sentence's capitalised first word that is none of them may be a name ("Protactinium was found by whom?").
REQUEST_WORDS = FUNCTION_WORDS | SHAPE_WORDS | NUMBER_WORDS
PHRASE_MATCHES = 200
PHRASE_TIMEOUT_MS = 5000  # an optional look: on a graph too large to scan in time, the names found one by one stand


async def _said_names(question: str, graph: GraphStore, words: set[str]) -> list[EntityMatch]:
    """The names the question writes as stored, each the longest at its place: those no capital or quote marks
    ("s-block", "simple cubic", "Period 2") and those whose capitals a lower-case word splits ("Bosnia and
    Herzegovina")."""
    phrases = said_phrases(question, words, REQUEST_WORDS)
    # A question that writes its names in lower case ("which country is lagos in") is compared in lower case.
    any_case = names_in_lower_case(question)
    if not phrases:
        return [] if any_case else await _opened_names(question, graph, words)
    params = {
        "phrases": sorted({p.lower() for p in phrases}) if any_case else phrases,
        "skip": list(BOOKKEEPING_LABELS),
        "limit": PHRASE_MATCHES,
        "any_case": any_case,
    }
    try:
        rows = (await graph.ro_query(_PHRASES, params, max_rows=PHRASE_MATCHES, timeout_ms=PHRASE_TIMEOUT_MS)).rows
    except GraphQueryError as exc:  # a timeout: FalkorDB refuses a read that runs past it
        log.info("said_names_skipped", reason=str(exc))
        return []
    named = [(str(label), str(key), str(value)) for label, key, value, keys in rows if identifying_key(keys) == key]
    matches: list[EntityMatch] = [] if any_case else await _opened_names(question, graph, words)
    stored = {value.lower() if any_case else value for _, _, value in named}
    for phrase in occurrences(question, stored, any_case=any_case):
        found = [(label, key, value) for label, key, value in named if value.lower() == phrase.lower()]
        # As written first: "Georgia" the country before "georgia" the state, where both are stored.
        found.sort(key=lambda m: m[2] != phrase)
        matches += [
            EntityMatch(mention=phrase, label=label, property=key, value=value, how="exact")
            for label, key, value in found
        ][:MATCHES_PER_MENTION]
    # a name in lower case found both as written and where a noun phrase opens is one match
    unique = {(m.mention, m.label, m.property, m.value): m for m in reversed(matches)}
    return [m for m in matches if unique[(m.mention, m.label, m.property, m.value)] is m]


async def _opened_names(question: str, graph: GraphStore, words: set[str]) -> list[EntityMatch]:
    """The names a question that capitalises its others writes in lower case where a noun phrase opens ("use the
    euro", "which lanthanides", "pay in euros"): the longest run at each opening that a node stores as its
    name, in any case and with its last word in the singular or not."""
    openings = opened_phrases(question, words)
    forms = sorted({form.lower() for opening in openings for form, _ in opening})
    if not forms:
        return []
    params = {"phrases": forms, "skip": list(BOOKKEEPING_LABELS), "limit": PHRASE_MATCHES, "any_case": True}
    try:
        rows = (await graph.ro_query(_PHRASES, params, max_rows=PHRASE_MATCHES, timeout_ms=PHRASE_TIMEOUT_MS)).rows
    except GraphQueryError as exc:
        log.info("opened_names_skipped", reason=str(exc))
        return []
    named = [(str(label), str(key), str(value)) for label, key, value, keys in rows if identifying_key(keys) == key]
    matches: list[EntityMatch] = []
    for opening in openings:
        for form, said in opening:
            found = [m for m in named if m[2].lower() == form.lower()]
            if found:
                matches += [
                    EntityMatch(mention=said, label=label, property=key, value=value, how="exact")
                    for label, key, value in found
                ][:MATCHES_PER_MENTION]
                break
    return matches


def _within(inner: str, outer: str) -> bool:
    """`inner` is `outer` or some of its whole words ("Ann" is in "Ann Shop", not in "annual report")."""
    return re.search(rf"(?<!\w){re.escape(inner)}(?!\w)", outer, re.IGNORECASE) is not None


def _add_said(question: str, grounding: Grounding, said: list[EntityMatch]) -> None:
    """The names found as written, added to those found one by one where the question says them: one already
    found (or part of one) is not added again; one that spans names found apart ("Bosnia" and "Herzegovina"
    in "Bosnia and Herzegovina") takes their place."""

    def place(mention: str) -> int:
        at = question.lower().find(mention.lower())
        return at if at >= 0 else len(question)

    for phrase in dict.fromkeys(m.mention for m in said):
        known = [m.mention for m in grounding.matches] + grounding.unmatched
        if any(_within(phrase, mention) for mention in known):
            continue
        parts = {mention for mention in known if _within(mention, phrase)}
        kept = [m for m in grounding.matches if m.mention not in parts]
        at = next((i for i, m in enumerate(kept) if place(m.mention) > place(phrase)), len(kept))
        grounding.matches = [*kept[:at], *(m for m in said if m.mention == phrase), *kept[at:]]
        grounding.unmatched = [mention for mention in grounding.unmatched if mention not in parts]


async def _titled(question: str, graph: GraphStore, mention: str) -> list[EntityMatch]:
    """The name with the capitalised article the question gives it, when stored so ("The Netherlands", "The
    Hague"): the mention itself comes without it, and would find only the names that contain it."""
    titled = next(
        (f"{article} {mention}" for article in ("The", "A", "An") if f"{article} {mention}" in question), None
    )
    if titled is None:
        return []
    return [
        EntityMatch(mention=titled, label=str(label), property=str(prop), value=str(value), how="exact")
        for label, prop, value in await _stored(graph, "exact", titled)
    ]


async def held_exactly(question: str, graph: GraphStore) -> list[str]:
    """The names the question gives that some node stores exactly (ignoring case) as a property value: one
    equality scan per name, none of the broader looks `ground` takes."""
    said = await _mentions(question, await vocabulary(graph))
    return [mention for mention in said if await _stored(graph, "exact", mention, limit=1)]


async def _mentions(question: str, words: set[str]) -> list[str]:
    """The names the question gives (`words`: the schema's), read off the event loop (a question may be long)."""
    return await off_loop("the question's names", partial(mentions, question, words))


def existence_query(names: list[str]) -> str:
    """A read-only query for where the graph holds any of `names` (in any property, as part of a value):
    the plan of last resort for a question about names that grounding found nowhere."""

    def literal(name: str) -> str:
        return "'" + name.replace("\\", "\\\\").replace("'", "\\'") + "'"

    condition = " OR ".join(f"toLower(text) CONTAINS toLower({literal(n)})" for n in names)
    return (
        f"MATCH (n) {PROPERTY_TEXT} WHERE {condition} "
        "RETURN labels(n)[0] AS label, k AS property, text AS value LIMIT 5"
    )


def _labelled(label: str, variable: str = "n") -> str:
    """The node pattern `(n:Label)`, the label escaped so that any stored name is read as one label."""
    return f"({variable}:`" + label.replace("`", "``") + "`)"


def _entity(label: str) -> str:
    return _labelled(label) + " WHERE toString(n[$prop]) = $value WITH n LIMIT 1 "


async def entity_facts(graph: GraphStore, match: EntityMatch) -> str:
    """What the graph stores about one found entity: its properties, and per relationship type and
    direction the neighbours' label, how many there are and a few of their names."""
    params = {"prop": match.property, "value": match.value, "skip": list(BOOKKEEPING_LABELS)}
    found = await graph.ro_query(f"MATCH {_entity(match.label)}RETURN properties(n)", params, max_rows=1)
    if not found.rows:
        return ""
    around = await graph.ro_query(
        f"MATCH {_entity(match.label)}MATCH (n)-[r]-(m) WHERE NOT labels(m)[0] IN $skip "
        "WITH type(r) AS type, startNode(r) = n AS outgoing, labels(m)[0] AS label, m "
        f"RETURN type, outgoing, label, count(m), collect(properties(m))[0..{NEIGHBOUR_EXAMPLES}] "
        "ORDER BY type, outgoing DESC, label",
        params,
        max_rows=50,
    )
    neighbours = [
        Neighbours(type=str(t), outgoing=bool(out), label=str(lab), count=int(n), examples=list(ex))
        for t, out, lab, n, ex in around.rows
    ]
    return await off_loop("describing an entity", partial(_described_entity, match, found.rows[0][0], neighbours))


def _described_entity(match: EntityMatch, props: dict[str, Any], neighbours: list[Neighbours]) -> str:
    """The entity described with every stored value redacted before the description cuts it: a secret the graph
    stores reaches neither the planner's prompt nor the run's history, whole or in part."""
    shown = [replace(n, examples=sanitize(n.examples, include_raw_outputs=True)) for n in neighbours]
    return describe_entity(match.label, match.value, sanitize(props, include_raw_outputs=True), shown)


CONNECTION_HOPS = 4  # farther apart than this, two names are not described as connected
CONNECTION_PATHS = 3
CONNECTION_TIMEOUT_MS = 2000  # per length searched: on a large graph a slow search costs only this fact


async def shortest_connections(
    graph: GraphStore, first: EntityMatch, second: EntityMatch
) -> list[tuple[list[str], list[dict[str, object]], list[str]]] | None:
    """The shortest connections between two found entities, in either direction: each path's node labels, node
    properties and relationship types; [] when none of CONNECTION_HOPS or fewer joins them, None when a search
    fails or runs out of time. Searched one length at a time (1, 2, ... CONNECTION_HOPS), so the first length
    with a path is the fewest (FalkorDB's shortestPath is directed only, and algo.SPpaths without weights returns
    paths of any length)."""
    params = {"p1": first.property, "v1": first.value, "p2": second.property, "v2": second.value}
    ends = (
        f"MATCH {_labelled(first.label, 'a')} WHERE toString(a[$p1]) = $v1 WITH a LIMIT 1 "
        f"MATCH {_labelled(second.label, 'b')} WHERE toString(b[$p2]) = $v2 AND b <> a WITH a, b LIMIT 1 "
    )
    for hops in range(1, CONNECTION_HOPS + 1):
        query = (
            f"{ends}MATCH path = (a)-[*{hops}..{hops}]-(b) "
            "RETURN [n IN nodes(path) | labels(n)[0]], [n IN nodes(path) | properties(n)], "
            f"[r IN relationships(path) | type(r)] LIMIT {CONNECTION_PATHS}"
        )
        try:
            found = await graph.ro_query(query, params, max_rows=CONNECTION_PATHS, timeout_ms=CONNECTION_TIMEOUT_MS)
        except GraphQueryError as exc:
            log.info("connection_search_failed", hops=hops, error=str(exc)[:200])
            return None
        if found.rows:
            return [(list(labels), list(props), list(types)) for labels, props, types in found.rows]
    return []


async def connection_facts(graph: GraphStore, first: EntityMatch, second: EntityMatch) -> str:
    """How two found entities are connected, for the planner and the answer writer: a question that names two
    things often asks how they are connected, and a small model rarely writes that query right. Empty when the
    search fails or runs out of time."""
    paths = await shortest_connections(graph, first, second)
    if paths is None:
        return ""
    return await off_loop("describing a connection", partial(_described_connection, first, second, paths))


def _described_connection(
    first: EntityMatch, second: EntityMatch, paths: list[tuple[list[str], list[dict[str, object]], list[str]]]
) -> str:
    """The connections described with the path's stored values redacted first (as `_described_entity`)."""
    shown = [(labels, sanitize(props, include_raw_outputs=True), types) for labels, props, types in paths]
    return describe_connection(
        f"({first.label} '{first.value}')", f"({second.label} '{second.value}')", shown, CONNECTION_HOPS
    )


async def walks_shorter_than_connection(query: str, grounding: Grounding, graph: GraphStore) -> list[str]:
    """For a query that came back empty: two of the question's names its walk joins by fewer relationships than
    any connection between them in the graph (`(a {name: 'X'})-[:R]->(b {name: 'Y'})` for two things three
    relationships apart), so the walk could never match. Said only when every entity the two names may stand
    for (of the label the query gives it) is connected, and farther apart: two things the graph does not
    connect within CONNECTION_HOPS may be what an empty answer reports."""
    doubts = []
    for join in await off_loop("the query's joins of named things", partial(named_joins, query, grounding)):
        if join.hops >= CONNECTION_HOPS:
            continue  # no connection found within CONNECTION_HOPS can be longer
        firsts = _stood_for(grounding, join.first, join.first_label)
        seconds = _stood_for(grounding, join.second, join.second_label)
        apart = [await shortest_connections(graph, a, b) for a in firsts for b in seconds]
        if not apart or any(not paths for paths in apart):  # unknown, or some pair unconnected
            continue
        fewest = min(len(paths[0][2]) for paths in apart if paths)
        if fewest > join.hops:
            doubts.append(
                f"the query joins '{join.first}' and '{join.second}' by {join.hops} relationship"
                f"{'s' if join.hops != 1 else ''}, but they are {fewest} relationships apart at the fewest, "
                "so its walk matches nothing: walk all the relationships between them"
            )
    return doubts


def _stood_for(grounding: Grounding, value: str, label: str | None) -> list[EntityMatch]:
    """The found entities a name in a query may stand for: those of the label the query gives it, if it gives
    one (at most two, each a search of the graph)."""
    return [m for m in grounding.matches if m.same_name() and m.value == value and label in (None, m.label)][:2]


async def ground(question: str, graph: GraphStore, *, describe: bool = True) -> Grounding:
    """The question's names as the graph stores them; with `describe`, the entities found by their own
    name described for a query writer (two more queries each: skipped where no query is written)."""
    grounding = Grounding()
    words = await vocabulary(graph)
    mentioned = await _mentions(question, words)
    for mention in mentioned:
        found = await _titled(question, graph, mention) or await _find(graph, mention)
        if not any(m.how == "exact" for m in found):
            # "African" is Africa, not the "Central African Republic" that contains the word
            found = await _continued(question, graph, mention) or await _formed(graph, mention) or found
        if found:
            grounding.matches.extend(found)
        else:
            grounding.unmatched.append(mention)
    _add_said(question, grounding, await _said_names(question, graph, words))
    described = grounding.described_entities(DESCRIBED_ENTITIES if describe else 0)
    for match in described:
        facts = await entity_facts(graph, match)
        if facts:
            grounding.facts.append(facts)
    if len(described) == 2 and (described[0].label, described[0].value) != (described[1].label, described[1].value):
        connection = await connection_facts(graph, *described)
        if connection:
            grounding.facts.append(connection)
    return grounding


async def described_for_writer(question: str, grounding: Grounding, backends: Backends) -> str:
    """The grounding as a query writer reads it, with how the schema joins the names it found
    (questions.schema_routes)."""
    schema = backends.schema
    joins = [] if schema is None else await schema.connections(question, grounding)
    return "\n".join(part for part in (describe_grounding(grounding), *joins) if part)


async def holds_value(graph: GraphStore, label: str, prop: str, value: str) -> bool:
    """Does any node of `label` store exactly `value` in `prop`?"""
    held = await graph.ro_query(f"MATCH {_entity(label)}RETURN count(n)", {"prop": prop, "value": value})
    return bool(held.rows and held.rows[0][0])


async def compared_where_held(query: str, graph: GraphStore) -> str | None:
    """The query with each `v.prop = 'value'` whose label never stores that value in that property compared
    on the one other node of the query whose label does: "invoices that are still open" was written as
    `po.status = 'open'` when only invoices are 'open' (a count of 0, stated as the answer). None when nothing
    moves; a value no node of the query holds stays (its empty result is scored as such)."""
    bound, comparisons = await off_loop("the query's comparisons", partial(_comparisons, query))
    moves: list[tuple[str, str, str, str]] = []  # (variable, property, value, the variable it moves to)
    for variable, label, prop, value in comparisons:
        if await holds_value(graph, label, prop, value):
            continue
        homes = [
            other
            for other, other_label in bound.items()
            if other_label != label and await holds_value(graph, other_label, prop, value)
        ]
        if len(homes) == 1:
            moves.append((variable, prop, value, homes[0]))
    if not moves:
        return None
    fixed = await off_loop("moving comparisons", partial(_moved, query, moves))
    return fixed if fixed != query else None


def _comparisons(query: str) -> tuple[dict[str, str], list[tuple[str, str, str, str]]]:
    """The query's labelled variables, and its `v.prop = 'value'` comparisons."""
    return labelled_variables(blank_strings(query)), property_comparisons(query)


def _moved(query: str, moves: list[tuple[str, str, str, str]]) -> str:
    """The query with each comparison compared on the variable it moves to."""
    for variable, prop, value, home in moves:
        query = move_comparison(query, variable, prop, value, home)
    return query


DATE_SAMPLE = 20  # stored values looked at to decide that a property holds dates as text


async def dates_read_as_dates(query: str, graph: GraphStore) -> str | None:
    """The query with each property it compares with `date()` (or another temporal call) converted by that
    function where the property's label stores it as ISO date text (cypher.text_dates); None when
    nothing is converted. A property of another type, or of an unbound variable, is left as written."""
    bound, compared = await off_loop("the query's date comparisons", partial(_temporal_reads, query))
    text_dates = set()
    for variable, prop in compared:
        label = bound.get(variable)
        if label is None:
            continue
        sample = await graph.ro_query(
            f"MATCH {_labelled(label)} WHERE n[$prop] IS NOT NULL RETURN n[$prop] LIMIT {DATE_SAMPLE}", {"prop": prop}
        )
        if all_iso_dates([row[0] for row in sample.rows]):
            text_dates.add((variable, prop))
    if not text_dates:
        return None
    return await off_loop("converting reads to dates", partial(converted_reads, query, text_dates))


def _temporal_reads(query: str) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """The query's labelled variables, and the reads it compares with a temporal function."""
    return labelled_variables(blank_strings(query)), temporal_comparisons(query)


async def misplaced_names(query: str, grounding: Grounding, graph: GraphStore) -> list[str]:
    """What to say about a query that matches a name the question gave on a label or property that does
    not hold it, while grounding found it stored elsewhere ('Western Asia' looked up as a Region's name
    when only a Subregion has it): such a query can only come back empty."""
    if not grounding.matches:
        return []  # no name found anywhere can be misplaced: the query need not be read
    looked_up = await off_loop("the query's look-ups of names", partial(_misplaced_lookups, query, grounding))
    return [problem for label, prop, value, problem in looked_up if not await holds_value(graph, label, prop, value)]


def _misplaced_lookups(query: str, grounding: Grounding) -> list[tuple[str, str, str, str]]:
    """(label, property, value, what to say) for each name the query looks up where grounding did not find it."""
    return [
        (label, prop, value, problem)
        for label, prop, value in named_lookups(query)
        if (problem := misplaced_name(label, prop, value, grounding)) is not None
    ]
