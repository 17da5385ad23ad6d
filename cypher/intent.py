"""A question's query as a filled-in form instead of free Cypher: where the walk starts (a label, and a named
node or every node of it), the relationships it follows in order, an optional second named node whose
walk must also reach (or must not reach) the same end, a condition on the end, and what to return. The
form's labels, relationship types and property keys are enums read from the live schema, so a model
filling it under a JSON-schema grammar cannot invent them; the Cypher is compiled here, with every
direction the schema leaves no choice about taken from the schema. A small model fills a form far more
reliably than it writes a two-hop or set pattern (bench/query_writers.py measures both).

Pure functions: the schema comes from backends/schema_check.py, the model's reply from tools/intent_writer.py.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from cypher.schema_repair import display_property

Nodes = dict[str, list[str]]  # label -> its property keys
Rel = tuple[str, str, str]  # (source label, relationship type, target label)

MAX_HOPS = 3
ROWS_RANKED = 5  # rows a ranking returns: the first answers, the next show how close it was
ROWS_LISTED = 50
ANSWERS = {
    "names": "the names of the nodes the walk reaches",
    "count": "how many distinct nodes the walk reaches",
    "value": "the answer_key property of the nodes reached (of the start itself when there are no steps)",
    "sum": "the total of answer_key over the nodes reached",
    "average": "the average of answer_key over the nodes reached",
    "min": "the smallest answer_key among the nodes reached",
    "max": "the largest answer_key among the nodes reached",
    "highest": "the node reached with the highest answer_key",
    "lowest": "the node reached with the lowest answer_key",
    "most_connected": "the start nodes (start.value empty) that reach the most nodes through the steps",
    "least_connected": "the start nodes (start.value empty) that reach the fewest nodes through the steps",
    "path_length": "the fewest relationships, of any type and either way, between start and other (both named)",
}
KEYED = {"value", "sum", "average", "min", "max", "highest", "lowest"}
# Not offered to a model filling the form: the values of answer_key the nodes reached hold, ranked by how many
# hold each ("which country are most suppliers based in": the suppliers' countries).
COMMON = {"most_common", "least_common"}
CONNECTED = {"most_connected", "least_connected"}
PATH_HOPS = 3  # path_length searches this far: farther, two things are no more connected than any two are
COMBINE = ("none", "also_reached_from_other", "not_reached_from_other")
# Not offered to a model filling the form: the walk joins start to other, and the answer is the first node it
# passes through on the way ("which country connects A and B"). Enumerated connections use it.
THROUGH = "through_to_other"
# Not offered either: whether the walk joins the two named things (a connection) or reaches something from both
# (shared), answered yes or no with what it passes through or both reach ("does Bolivia border Chile").
WHETHER = "whether"
RELATIONSHIP = "r"  # the variable of the last relationship, when a key of it is read or tested
# Not offered either: how many distinct nodes the walk reaches from each start node, on average over every start
# node of the label, those reaching none counted as 0 ("on average, how many counties does a state have").
AVERAGE_REACHED = "average_reached"
# Not offered either: the start nodes (start.value empty) ranked by the total of answer_key over the nodes (or the
# last relationships) each reaches ("which customer spent the most": the invoices' totals summed per customer).
TOTALS = {"most_total", "least_total"}
OPERATORS = ("=", "<>", "<", ">", "<=", ">=", "contains")
DIRECTIONS = ("outgoing", "incoming")
_NUMBER = re.compile(r"^-?[0-9]+(\.[0-9]+)?\Z")  # ASCII digits: `\d` takes "١٢", which Cypher reads as no number
# A key that reads as an identifier: "id", "code", "number", "key", alone or after a word ("po_number").
_IDENTIFIER = re.compile(r"(?:^|_)(?:id|ID|code|number|no|key|ref)$|[a-z](?:Id|ID|Number|Code|No)$")


class IntentError(ValueError):
    """The form cannot be compiled against this schema; the message says why, for the run's notes."""


@dataclass(frozen=True)
class Anchor:
    label: str
    key: str = ""
    value: str = ""  # "" with no key: every node of the label


@dataclass(frozen=True)
class Hop:
    relationship: str
    direction: str = "outgoing"


@dataclass(frozen=True)
class Condition:
    key: str
    operator: str
    value: str
    # The key is the last relationship's, not the node's: "speak it, more than half of them" tests the
    # population_percent of SPEAKS, "seen with Valjean more than 10 times" the times of APPEARS_WITH.
    on_relationship: bool = False


@dataclass(frozen=True)
class CountTest:
    """A test on how many distinct nodes the walk reaches from each node at `group` (0: the start, i: the
    node after the i-th step): "countries with at least 4 languages" groups by the start, tests ">=", "4"."""

    group: int
    operator: str
    value: str


@dataclass(frozen=True)
class Lack:
    """A relationship the nodes reached must not have: "products no supplier supplies" lacks an incoming
    SUPPLIES from a Supplier; `other`: the one named thing it must not reach ("not discovered by X")."""

    hop: Hop
    label: str | None = None
    other: Anchor | None = None


@dataclass(frozen=True)
class Contrast:
    """Two named things (start and other, of one label) set against each other by a measure: a property
    (answer "value", answer_key) or how many distinct nodes the hops reach from each (answer "count").
    `whether`: the question asks yes or no ("is A bigger than B"), else which of the two wins ("which has
    more people, A or B"); `higher`: the larger measure wins; `aged`: said as older or younger, which on a
    year or a date means the earlier or the later."""

    whether: bool
    higher: bool
    aged: bool = False


# The comparatives that can count things ("more airports"); any other ("bigger", "denser") compares a property.
COUNTING_COMPARATIVES = frozenset({"more", "fewer", "less"})


# A key that holds a point in time: on it "older" is the smaller value ("founded_year", "since", "born").
_TIME_POINT = re.compile(r"year|date|since|founded|born|introduced|adopted|established|discovered|_at$|_on$", re.I)


def is_time_point(key: str) -> bool:
    """Whether the key reads as a point in time ("discovery_year", "founded", "created_at")."""
    return bool(_TIME_POINT.search(key))


@dataclass(frozen=True)
class QueryIntent:
    start: Anchor
    hops: tuple[Hop, ...] = ()
    combine: str = "none"
    other: Anchor | None = None
    condition: Condition | None = None
    answer: str = "names"
    answer_key: str = ""
    # Not offered to a model filling the form; enumerated programs use them (cypher/programs.py).
    count_test: CountTest | None = None
    lacks: Lack | None = None
    contrast: Contrast | None = None
    # answer_key is the last relationship's, not the node reached's ("how often are A and B seen together": the
    # times of the APPEARS_WITH between them; "the total lead time": each SUPPLIES's lead_time_days).
    relationship_key: bool = False
    # How many a ranking returns (highest, lowest, most_connected, least_connected): the first `top`, and any
    # tied with the last of them ("the 3 highest"); 0: ROWS_RANKED, the first answers and how close it was.
    top: int = 0
    # The node a most_connected or least_connected ranking ranks: 0 the start, i the node after the i-th step
    # ("which city in Ohio has the most airports": the cities the walk from Ohio passes, by the airports beyond).
    ranked_group: int = 0
    # The other named thing's own walk to the node reached (combine also_reached_from_other or
    # not_reached_from_other); empty: the same hops. "Vietnamese cities on Bangkok's time zone": the cities reached
    # from Vietnam by IN_COUNTRY backwards, and from Bangkok by IN_TIMEZONE and IN_TIMEZONE backwards.
    other_hops: tuple[Hop, ...] = ()

    @property
    def names_relationship(self) -> bool:
        """Whether the query reads a property of the last relationship (its answer or its condition)."""
        return self.relationship_key or (self.condition is not None and self.condition.on_relationship)


def intent_json_schema(nodes: Nodes, rels: set[Rel]) -> dict[str, Any]:
    """The form as a JSON schema whose labels, relationship types and keys are the live schema's enums."""
    labels = sorted(nodes)
    keys = sorted({k for props in nodes.values() for k in props}) or [""]
    rel_types = sorted({r[1] for r in rels}) or [""]
    anchor = {
        "type": "object",
        "properties": {"label": {"enum": labels}, "key": {"enum": ["", *keys]}, "value": {"type": "string"}},
        "required": ["label", "key", "value"],
    }
    return {
        "type": "object",
        "properties": {
            "start": anchor,
            "steps": {
                "type": "array",
                "maxItems": MAX_HOPS,
                "items": {
                    "type": "object",
                    "properties": {"relationship": {"enum": rel_types}, "direction": {"enum": list(DIRECTIONS)}},
                    "required": ["relationship", "direction"],
                },
            },
            "condition": {
                "type": "object",
                "properties": {
                    "key": {"enum": ["", *keys]},
                    "operator": {"enum": list(OPERATORS)},
                    "value": {"type": "string"},
                },
                "required": ["key", "operator", "value"],
            },
            "combine": {"enum": list(COMBINE)},
            "other": anchor,
            "answer": {"enum": list(ANSWERS)},
            "answer_key": {"enum": ["", *keys]},
        },
        "required": ["start", "steps", "condition", "combine", "other", "answer", "answer_key"],
    }


def describe_form() -> str:
    """The form's fields in words, for the prompt."""
    answers = "\n".join(f"  - {name}: {meaning}" for name, meaning in ANSWERS.items())
    return (
        "- start: where the walk begins: a label, and the key and value of the node the question names "
        "(key and value empty: every node of the label).\n"
        "- steps: the relationships followed from the start, in order, one step each time the question "
        "follows one (none to read the start itself). direction: outgoing follows the arrow as the schema "
        "shows it, incoming goes against it.\n"
        '- condition: a test on the nodes reached (key, operator, value: "population", ">", "1000"); key '
        "empty for none. The start's value holds only a name the question gives, never a test.\n"
        "- combine: none; also_reached_from_other when the answer must be reached from a second named node "
        'too ("shared by A and B", "connected to both"); not_reached_from_other when it must not be '
        '("A has but B does not"). other: that second node (label, key, value); empty when combine is none.\n'
        f"- answer: one of\n{answers}\n"
        "- answer_key: the property for value, sum, average, min, max, highest and lowest; empty otherwise."
    )


def with_spelled_steps(intent: QueryIntent, spelled: list[str]) -> QueryIntent:
    """The form with its steps completed from the relationships the question spells out in its own words,
    in order (questions/walks.spelled_walk), when it walks fewer of them than the question names and none
    the question does not: a small model asked to "follow R, then R" fills in one step. A step the form had
    keeps its direction; an added one goes the schema's way (compile_intent turns it where it must)."""
    if len(spelled) <= len(intent.hops) or any(h.relationship not in spelled for h in intent.hops):
        return intent
    directions: dict[str, list[str]] = {}
    for hop in intent.hops:
        directions.setdefault(hop.relationship, []).append(hop.direction)
    steps = tuple(Hop(rel, (directions.get(rel) or ["outgoing"]).pop(0)) for rel in spelled[:MAX_HOPS])
    return QueryIntent(
        intent.start, steps, intent.combine, intent.other, intent.condition, intent.answer, intent.answer_key
    )


def parse_intent(text: str) -> QueryIntent:
    """The model's reply as a form; IntentError when it is not one."""
    try:
        raw = json.loads(text)
        start = _anchor(raw["start"])
        hops = tuple(Hop(str(h["relationship"]), str(h.get("direction") or "outgoing")) for h in raw.get("steps") or [])
        other_raw = raw.get("other") or {}
        other = _anchor(other_raw) if other_raw.get("label") and other_raw.get("value") else None
        cond_raw = raw.get("condition") or {}
        condition = (
            Condition(str(cond_raw["key"]), str(cond_raw.get("operator") or "="), str(cond_raw.get("value", "")))
            if cond_raw.get("key")
            else None
        )
        return QueryIntent(
            start=start,
            hops=hops,
            combine=str(raw.get("combine") or "none"),
            other=other,
            condition=condition,
            answer=str(raw.get("answer") or "names"),
            answer_key=str(raw.get("answer_key") or ""),
        )
    except (json.JSONDecodeError, KeyError, TypeError, AttributeError):
        raise IntentError("the model's reply was not a filled-in query form") from None


def _anchor(raw: dict[str, Any]) -> Anchor:
    return Anchor(str(raw["label"]), str(raw.get("key") or ""), str(raw.get("value") or "").strip())


def _quoted(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _literal(value: str) -> str:
    """A condition's value: a number as a number, anything else as text."""
    return value.strip() if _NUMBER.match(value.strip()) else _quoted(value)


def _name(label: str) -> str:
    return "`" + label.replace("`", "``") + "`"


def _ends(label: str | None, hop: Hop, rels: set[Rel]) -> tuple[str, set[str]]:
    """The direction the schema lets `hop` go from a node of `label` (the form's own when the schema allows
    both), and the labels it can reach. IntentError when the relationship never touches the label."""
    outgoing = {r[2] for r in rels if r[1] == hop.relationship and (label is None or r[0] == label)}
    incoming = {r[0] for r in rels if r[1] == hop.relationship and (label is None or r[2] == label)}
    if outgoing and incoming:
        direction = hop.direction if hop.direction in DIRECTIONS else "outgoing"
    elif outgoing or incoming:
        direction = "outgoing" if outgoing else "incoming"
    else:
        raise IntentError(f"{hop.relationship} does not connect {label or 'that node'} to anything")
    return direction, outgoing if direction == "outgoing" else incoming


def _walk(
    first: str,
    label: str | None,
    hops: tuple[Hop, ...],
    rels: set[Rel],
    prefix: str,
    end: str = "b",
    last: str = "",
    either_way: bool = False,
) -> tuple[str, str | None]:
    """The pattern from the node pattern `first` (a node of `label`) along `hops`, the last node named `end`,
    those between `prefix` and their place (unnamed when empty: FalkorDB resolves no new name in a pattern
    tested in WHERE), and the last relationship `last` (unnamed when empty), followed `either_way`. Returns the
    pattern and the label of the last node (None when the schema allows several)."""
    pattern, current = first, label
    for i, hop in enumerate(hops, start=1):
        direction, reached = _ends(current, hop, rels)
        current = reached.pop() if len(reached) == 1 else None
        variable = end if i == len(hops) else f"{prefix}{i}" if prefix else ""
        node = f"({variable}:{_name(current)})" if current else f"({variable})"
        rel = f"[{last if i == len(hops) else ''}:{_name(hop.relationship)}]"
        if either_way and i == len(hops):
            arrow = f"-{rel}-"
        else:
            arrow = f"-{rel}->" if direction == "outgoing" else f"<-{rel}-"
        pattern += arrow + node
    return pattern, current


def _match_anchor(variable: str, anchor: Anchor, nodes: Nodes) -> tuple[str, str | None]:
    """The anchor's node pattern, and the condition that picks it when its value looks like a number (stored
    as a number or as text: compared as text, so either matches)."""
    if anchor.label not in nodes:
        raise IntentError(f"there is no label {anchor.label}")
    if not anchor.value:
        return f"({variable}:{_name(anchor.label)})", None
    if anchor.value[0] in "<>=!":
        raise IntentError(f"a test ('{anchor.value}') where a name belongs: tests go in the condition")
    key = anchor.key if anchor.key in nodes[anchor.label] else display_property(nodes[anchor.label], "name")
    if not key:
        raise IntentError(f"{anchor.label} has no property to hold '{anchor.value}'")
    text = _quoted(anchor.value)
    if _NUMBER.match(anchor.value):
        return f"({variable}:{_name(anchor.label)})", f"toString({variable}.{_name(key)}) = {text}"
    return f"({variable}:{_name(anchor.label)} {{{_name(key)}: {text}}})", None


def identifying_key(keys: list[str]) -> str | None:
    """The key that names a node of a label holding `keys`: its name-like property, else the first that reads
    as an identifier (`po_number`, `invoice_id`, `code`), which a label without names is listed by."""
    named = display_property(keys, "name")
    if named:
        return named
    return next((key for key in keys if _IDENTIFIER.search(key)), None)


def _display(variable: str, label: str | None, nodes: Nodes) -> str:
    """The expression that names a node: its label's identifying key, else the first of name/title/code."""
    prop = identifying_key(nodes.get(label, [])) if label else None
    return f"{variable}.{_name(prop)}" if prop else f"coalesce({variable}.name, {variable}.title, {variable}.code)"


def _condition(variable: str, condition: Condition) -> str:
    prop = f"{RELATIONSHIP if condition.on_relationship else variable}.{_name(condition.key)}"
    if condition.operator == "contains":
        return f"toLower(toString({prop})) CONTAINS toLower({_literal(condition.value)})"
    if condition.operator not in OPERATORS:
        raise IntentError(f"unknown operator {condition.operator}")
    literal = _literal(condition.value)
    if condition.operator in ("=", "<>") and not literal[0].isdigit() and literal[0] != "-":
        return f"toLower(toString({prop})) {condition.operator} toLower({literal})"
    if condition.operator == "=" and _NUMBER.match(condition.value):
        # A figure may be stored as a number or as text ("06037"): either equals it; a leading zero is text's.
        text = _quoted(condition.value)
        if re.match(r"-?0\d", condition.value):
            return f"toString({prop}) = {text}"
        return f"({prop} = {literal} OR toString({prop}) = {text})"
    return f"{prop} {condition.operator} {literal}"


def compile_intent(intent: QueryIntent, nodes: Nodes, rels: set[Rel]) -> str:
    """The read-only Cypher the form describes; IntentError when it does not fit the schema."""
    if intent.answer == WHETHER:
        return _whether(intent, nodes, rels)
    if intent.answer == AVERAGE_REACHED:
        return _average_reached(intent, nodes, rels)
    if intent.answer not in ANSWERS and intent.answer not in COMMON | TOTALS:
        raise IntentError(f"unknown answer {intent.answer}")
    if intent.answer in KEYED | COMMON | TOTALS and not intent.answer_key:
        raise IntentError(f"answer {intent.answer} needs an answer_key")
    if intent.answer in CONNECTED | TOTALS and not intent.hops:
        raise IntentError(f"answer {intent.answer} needs steps to count along")
    if intent.answer in TOTALS and (intent.start.value or intent.combine != "none"):
        raise IntentError("a ranking by totals ranks every node of the start's label, none named")
    if intent.answer == "path_length":
        return _path_length(intent, nodes)
    if intent.combine == THROUGH:
        return _through(intent, nodes, rels)
    if intent.names_relationship and (
        not intent.hops or intent.contrast is not None or intent.count_test is not None or intent.combine != "none"
    ):
        raise IntentError("a relationship's property is read along the walk's own steps, from one start")
    if intent.contrast is not None:
        return _contrasted(intent, intent.contrast, nodes, rels)
    if intent.ranked_group:
        return _group_ranked(intent, nodes, rels)
    start, picked = _match_anchor("a", intent.start, nodes)
    last = RELATIONSHIP if intent.names_relationship else ""
    walk, end_label = _walk(start, intent.start.label, intent.hops, rels, "x", last=last)
    end = "b" if intent.hops else "a"
    matches, where = [walk], [picked] if picked else []
    if intent.hops and intent.start.value:
        where.append("b <> a")
    if intent.combine != "none" and intent.hops:
        if intent.other is None:
            raise IntentError(f"combine {intent.combine} needs the other node")
        other_node, other_picked = _match_anchor("o", intent.other, nodes)
        where += [other_picked] if other_picked else []
        theirs = intent.other_hops or intent.hops
        if intent.combine == "also_reached_from_other":
            matches.append(_walk(other_node, intent.other.label, theirs, rels, "y")[0])
        elif intent.combine == "not_reached_from_other":
            matches.append(other_node)
            where.append("NOT " + _walk("(o)", intent.other.label, theirs, rels, "")[0])
        else:
            raise IntentError(f"unknown combine {intent.combine}")
        where.append("b <> o")
    if intent.condition is not None:
        where.append(_condition(end, intent.condition))
    shown_label = end_label if intent.hops else intent.start.label
    if intent.lacks is not None:
        where.append(_lacking(end, shown_label, intent.lacks, nodes, rels))
    if intent.count_test is not None:
        return _count_tested(intent, nodes, rels, matches, where, end, shown_label)
    return _returned(intent, nodes, matches, where, end, shown_label)


def _lacking(end: str, label: str | None, lack: Lack, nodes: Nodes, rels: set[Rel]) -> str:
    """The test that the node `end` (of `label`) has no such relationship (to the one named thing)."""
    direction, reached = _ends(label, lack.hop, rels)
    target = lack.label if lack.label in reached else (reached.pop() if len(reached) == 1 else None)
    if lack.other is not None:
        node, picked = _match_anchor("z", lack.other, nodes)
        if picked:
            raise IntentError("a thing named by a figure cannot be tested for absence")
        node = node.replace("(z:", "(:", 1)
    else:
        node = f"(:{_name(target)})" if target else "()"
    rel = _name(lack.hop.relationship)
    arrow = f"-[:{rel}]->" if direction == "outgoing" else f"<-[:{rel}]-"
    return f"NOT ({end}){arrow}{node}"


def _count_tested(
    intent: QueryIntent,
    nodes: Nodes,
    rels: set[Rel],
    matches: list[str],
    where: list[str],
    end: str,
    end_label: str | None,
) -> str:
    """The nodes at the test's place whose number of distinct nodes reached passes it, with that number,
    most first."""
    test = intent.count_test
    if test is None or not intent.hops or not 0 <= test.group < len(intent.hops):
        raise IntentError("a count test needs steps after the nodes it groups")
    if intent.start.value and test.group == 0:
        raise IntentError("a count test groups many nodes, not the one named")
    if test.operator not in ("=", "<>", "<", ">", "<=", ">=") or not _NUMBER.match(test.value):
        raise IntentError(f"a count test compares a number: {test.operator} {test.value}")
    group = "a" if test.group == 0 else f"x{test.group}"
    _, group_label = _walk("", intent.start.label, intent.hops[: test.group], rels, "x")
    group_column = _name(group_label or "name")
    head = "MATCH " + ", ".join(matches) + (" WHERE " + " AND ".join(where) if where else "")
    shown = _display(group, group_label, nodes)
    counted = _name(f"{end_label or 'node'}_count")
    tested = f"{head} WITH {group}, count(DISTINCT {end}) AS reached WHERE reached {test.operator} {test.value}"
    if intent.answer == "count":  # "how many countries have at least 100 cities": the groups that pass
        groups = _name(f"{group_label or 'node'}_count")
        return f"{tested} RETURN count({group}) AS {groups}"
    return (
        f"{tested} "
        f"RETURN {shown} AS {group_column}, reached AS {counted} "
        f"ORDER BY reached DESC, {group_column} LIMIT {ROWS_LISTED}"
    )


def _group_ranked(intent: QueryIntent, nodes: Nodes, rels: set[Rel]) -> str:
    """The nodes at the ranking's place, ranked by how many distinct nodes each reaches at the walk's end; one
    that reaches none counts 0 ("the town with the fewest people" may have none)."""
    group_at = intent.ranked_group
    if intent.answer not in CONNECTED or not 0 < group_at < len(intent.hops):
        raise IntentError("a ranking of the nodes a walk passes needs steps after them")
    tested = (intent.condition, intent.lacks, intent.count_test) != (None, None, None)
    if intent.names_relationship or intent.combine != "none" or tested:
        raise IntentError("a ranking of the nodes a walk passes counts along one walk, untested")
    group = f"x{group_at}"
    start, picked = _match_anchor("a", intent.start, nodes)
    to_group, group_label = _walk(start, intent.start.label, intent.hops[:group_at], rels, "x", end=group)
    beyond, end_label = _walk(f"({group})", group_label, intent.hops[group_at:], rels, "y")
    where = [picked] if picked else []
    head = f"MATCH {to_group}" + (" WHERE " + " AND ".join(where) if where else "")
    head += f" OPTIONAL MATCH {beyond}" + (" WHERE b <> a" if intent.start.value else "")
    order = "DESC" if intent.answer == "most_connected" else "ASC"
    shown = _display(group, group_label, nodes)
    ranked = f"{head} WITH {group}, count(DISTINCT b) AS measure WITH {shown} AS shown, measure"
    reached = _name(f"{end_label or 'nodes'}_reached")
    return _ranked_rows(ranked, intent.top, order, _name(group_label or "name"), reached)


def _measured(
    variable: str, anchor: Anchor, intent: QueryIntent, nodes: Nodes, rels: set[Rel], prefix: str, end: str
) -> tuple[str, str]:
    """The clauses that find one named thing of a contrast and its measure, and the measure's expression."""
    node, picked = _match_anchor(variable, anchor, nodes)
    head = f"MATCH {node}" + (f" WHERE {picked}" if picked else "")
    if intent.answer == "value":
        return head, f"{variable}.{_name(intent.answer_key)}"
    pattern, _ = _walk(f"({variable})", anchor.label, intent.hops, rels, prefix, end)
    tests = [f"{end} <> {variable}"] + ([_condition(end, intent.condition)] if intent.condition else [])
    return f"{head} OPTIONAL MATCH {pattern} WHERE {' AND '.join(tests)}", f"count(DISTINCT {end})"


def _contrasted(intent: QueryIntent, contrast: Contrast, nodes: Nodes, rels: set[Rel]) -> str:
    """Two named things of one label, each with its measure (a property, or how many nodes the hops reach
    from it): the one whose measure wins (both on a tie), or whether the first's beats the second's, with both
    measures. A thing without the property answers nothing: no side is taken on a value not there."""
    first, second = intent.start, intent.other
    if second is None or second.label != first.label or not first.value or not second.value or first == second:
        raise IntentError("a contrast sets two named things of one label against each other")
    if intent.answer == "value":
        if intent.hops or intent.answer_key not in nodes.get(first.label, []):
            raise IntentError(f"{first.label} has no property {intent.answer_key!r} to compare")
    elif intent.answer != "count" or not intent.hops:
        raise IntentError("a contrast compares a property (value) or how many nodes the steps reach (count)")
    higher = contrast.higher
    if contrast.aged and intent.answer == "value" and is_time_point(intent.answer_key):
        higher = not higher  # the older of two founding years is the smaller
    first_clauses, first_measure = _measured("a", first, intent, nodes, rels, "x", "b")
    second_clauses, second_measure = _measured("o", second, intent, nodes, rels, "y", "c")
    label_column = _name(first.label)
    measure = intent.answer_key if intent.answer == "value" else f"{_ends_label(intent, rels) or 'node'}_count"
    measure_column = _name(measure)
    head = (
        f"{first_clauses} WITH a, {first_measure} AS first_measure "
        f"{second_clauses} WITH a, first_measure, o, {second_measure} AS second_measure "
        "WHERE first_measure IS NOT NULL AND second_measure IS NOT NULL"
    )
    beats = ">" if higher else "<"
    if contrast.whether:
        compared = _name(f"{measure}_compared_with")
        return (
            f"{head} RETURN CASE WHEN first_measure {beats} second_measure THEN 'yes' ELSE 'no' END AS answer, "
            f"{_display('a', first.label, nodes)} AS {label_column}, first_measure AS {measure_column}, "
            f"{_display('o', first.label, nodes)} AS {_name(first.label + '_compared_with')}, "
            f"second_measure AS {compared}"
        )
    best = f"CASE WHEN first_measure {beats}= second_measure THEN first_measure ELSE second_measure END"
    return (
        f"{head} WITH [[{_display('a', first.label, nodes)}, first_measure], "
        f"[{_display('o', first.label, nodes)}, second_measure]] AS pairs, {best} AS best "
        f"UNWIND pairs AS pair WITH pair, best WHERE pair[1] = best "
        f"RETURN pair[0] AS {label_column}, pair[1] AS {measure_column}"
    )


def _ends_label(intent: QueryIntent, rels: set[Rel]) -> str | None:
    """The label the hops from the start reach, when the schema allows only one."""
    return _walk("", intent.start.label, intent.hops, rels, "z")[1]


def _whether(intent: QueryIntent, nodes: Nodes, rels: set[Rel]) -> str:
    """Yes when the walk from the start arrives at the other named thing (THROUGH) or reaches a node the other
    also reaches the same way (also_reached_from_other), else no; with the nodes it passes through or both
    reach, up to ROWS_RANKED, as the evidence."""
    other = intent.other
    if other is None or not intent.start.value or not other.value or not intent.hops:
        raise IntentError("a yes or no about two named things needs both named and the steps between them")
    start, picked = _match_anchor("a", intent.start, nodes)
    other_node, other_picked = _match_anchor("o", other, nodes)
    head = f"MATCH {start}, {other_node}" + (
        " WHERE " + " AND ".join(p for p in (picked, other_picked) if p) if picked or other_picked else ""
    )
    walk, end_label = _walk("(a)", intent.start.label, intent.hops, rels, "x")
    if intent.combine == THROUGH:
        # What it passes through first, or the other itself when one relationship joins them.
        shown, shown_label = (
            ("x1", _walk("", intent.start.label, intent.hops[:1], rels, "x")[1])
            if len(intent.hops) > 1
            else ("b", end_label)
        )
        found = f"OPTIONAL MATCH {walk} WHERE b = o AND a <> o"
    elif intent.combine == "also_reached_from_other":
        theirs, _ = _walk("(o)", other.label, intent.other_hops or intent.hops, rels, "y")
        shown, shown_label = "b", end_label
        found = f"OPTIONAL MATCH {walk}, {theirs} WHERE b <> a AND b <> o"
    else:
        raise IntentError(f"a yes or no about two named things joins them or shares: not {intent.combine}")
    if intent.condition is not None:
        found += f" AND {_condition(shown, intent.condition)}"
    column = _name(f"{shown_label or 'node'}_found")
    return (
        f"{head} {found} WITH a, o, collect(DISTINCT {_display(shown, shown_label, nodes)}) AS found "
        f"RETURN CASE WHEN size(found) > 0 THEN 'yes' ELSE 'no' END AS answer, "
        f"found[..{ROWS_RANKED}] AS {column}"
    )


def _through(intent: QueryIntent, nodes: Nodes, rels: set[Rel]) -> str:
    """A walk from start that arrives at other, answered about the first node it passes through."""
    if intent.other is not None and len(intent.hops) == 1 and intent.names_relationship:
        return _between(intent, intent.other, nodes, rels)
    if intent.other is None or len(intent.hops) < 2:
        raise IntentError(f"combine {THROUGH} needs the other node and two steps or more")
    if intent.names_relationship:
        raise IntentError("a relationship's property between two named things is read on the one joining them")
    start, picked = _match_anchor("a", intent.start, nodes)
    walk, _ = _walk(start, intent.start.label, intent.hops, rels, "x")
    _, middle_label = _walk("", intent.start.label, intent.hops[:1], rels, "x")
    other_node, other_picked = _match_anchor("o", intent.other, nodes)
    where = [p for p in (picked, other_picked) if p] + ["b = o", "x1 <> a", "x1 <> o"]
    if intent.condition is not None:
        where.append(_condition("x1", intent.condition))
    if intent.answer == "names" and len(intent.hops) > 2:
        return _passed_through(intent, nodes, rels, f"MATCH {walk}, {other_node} WHERE " + " AND ".join(where))
    return _returned(intent, nodes, [walk, other_node], where, "x1", middle_label)


def _passed_through(intent: QueryIntent, nodes: Nodes, rels: set[Rel], head: str) -> str:
    """Every node a connection of three steps or more passes through, in order, one row per way: "how is the
    payment connected to the supplier" is answered by the invoice and the order between them."""
    columns = []
    for i in range(1, len(intent.hops)):
        _, label = _walk("", intent.start.label, intent.hops[:i], rels, "x")
        column = _name(f"{label or 'node'}_{i}")
        columns.append(f"{_display(f'x{i}', label, nodes)} AS {column}")
    distinct = " AND ".join(f"x{i} <> x{j}" for i in range(1, len(intent.hops)) for j in range(i + 1, len(intent.hops)))
    passed = " AND ".join(f"x{i} <> a AND x{i} <> o" for i in range(2, len(intent.hops)))
    where = " AND ".join(w for w in (passed, distinct) if w)
    return f"{head}{' AND ' + where if where else ''} RETURN DISTINCT {', '.join(columns)} LIMIT {ROWS_LISTED}"


def _between(intent: QueryIntent, other: Anchor, nodes: Nodes, rels: set[Rel]) -> str:
    """The relationship that joins two named things, read by its property: either way when it joins two
    things of one label (who appears with whom is stored one way), else the way the schema has it."""
    start, picked = _match_anchor("a", intent.start, nodes)
    other_node, other_picked = _match_anchor("o", other, nodes)
    same = {r[0] for r in rels if r[1] == intent.hops[0].relationship} == {
        r[2] for r in rels if r[1] == intent.hops[0].relationship
    }
    walk, end_label = _walk(start, intent.start.label, intent.hops, rels, "x", last=RELATIONSHIP, either_way=same)
    where = [p for p in (picked, other_picked) if p] + ["b = o", "a <> o"]
    if intent.condition is not None:
        where.append(_condition("b", intent.condition))
    return _returned(intent, nodes, [walk, other_node], where, "b", end_label)


def _returned(
    intent: QueryIntent, nodes: Nodes, matches: list[str], where: list[str], end: str, shown_label: str | None
) -> str:
    """The query's MATCH and its RETURN for the answer asked, about the node `end` (of `shown_label`); a key of
    the last relationship is read on it, each relationship once."""
    owner = RELATIONSHIP if intent.relationship_key else end
    key = f"{owner}.{_name(intent.answer_key)}" if intent.answer_key else ""
    distinct = f"{end}, {RELATIONSHIP}" if intent.relationship_key else end
    if intent.answer in ("highest", "lowest", "min", "max", "sum", "average", *TOTALS):
        where = [*where, f"{key} IS NOT NULL"]
    head = "MATCH " + ", ".join(matches) + (" WHERE " + " AND ".join(where) if where else "")
    shown = _display(end, shown_label, nodes)
    # Columns named after what they hold ("Family", "Family_count"): the answer is written from them.
    name_column = _name(shown_label or "name")
    key_column = _name(intent.answer_key) if intent.answer_key else ""
    match intent.answer:
        case "names":
            return f"{head} RETURN DISTINCT {shown} AS {name_column} LIMIT {ROWS_LISTED}"
        case "count":
            return f"{head} RETURN count(DISTINCT {end}) AS {_name((shown_label or 'node') + '_count')}"
        case "value":
            return f"{head} RETURN DISTINCT {shown} AS {name_column}, {key} AS {key_column} LIMIT {ROWS_LISTED}"
        case "sum" | "average" | "min" | "max":
            function = {"sum": "sum", "average": "avg", "min": "min", "max": "max"}[intent.answer]
            column = _name(f"{intent.answer}_{intent.answer_key}")
            return f"{head} WITH DISTINCT {distinct} RETURN {function}({key}) AS {column}"
        case "highest" | "lowest":
            order = "DESC" if intent.answer == "highest" else "ASC"
            ranked = f"{head} WITH DISTINCT {distinct} WITH {shown} AS shown, {key} AS measure"
            return _ranked_rows(ranked, intent.top, order, name_column, key_column)
        case "most_common" | "least_common":  # the values of a key the nodes hold, by how many hold each
            order = "DESC" if intent.answer == "most_common" else "ASC"
            counted = _name(f"{shown_label or 'node'}_count")
            ranked = f"{head} AND {key} IS NOT NULL" if where else f"{head} WHERE {key} IS NOT NULL"
            ranked += f" WITH {key} AS shown, count(DISTINCT {end}) AS measure"
            return _ranked_rows(ranked, intent.top, order, key_column, counted)
        case "most_total" | "least_total":  # rank the start nodes by the total of the key over what they reach
            order = "DESC" if intent.answer == "most_total" else "ASC"
            start_name = _display("a", intent.start.label, nodes)
            ranked = (
                f"{head} WITH DISTINCT a, {distinct} WITH a, sum({key}) AS measure WITH {start_name} AS shown, measure"
            )
            return _ranked_rows(
                ranked, intent.top, order, _name(intent.start.label), _name(f"total_{intent.answer_key}")
            )
        case _:  # most_connected, least_connected: rank the start nodes by what they reach
            order = "DESC" if intent.answer == "most_connected" else "ASC"
            start_name = _display("a", intent.start.label, nodes)
            reached = _name(f"{shown_label or 'nodes'}_reached")
            ranked = f"{head} WITH a, count(DISTINCT {end}) AS measure WITH {start_name} AS shown, measure"
            return _ranked_rows(ranked, intent.top, order, _name(intent.start.label), reached)


def _average_reached(intent: QueryIntent, nodes: Nodes, rels: set[Rel]) -> str:
    """How many distinct nodes the walk reaches from each node of the start's label, on average: each start node
    counted, one that reaches none as 0, and the nodes reached tested by the condition."""
    if intent.start.value or not intent.hops or intent.combine != "none" or intent.names_relationship:
        raise IntentError("an average per node counts what the steps reach from every node of one label")
    start, _ = _match_anchor("a", intent.start, nodes)
    walk, end_label = _walk("(a)", intent.start.label, intent.hops, rels, "x")
    test = f" WHERE {_condition('b', intent.condition)}" if intent.condition is not None else ""
    column = _name(f"average_{end_label or 'node'}_per_{intent.start.label}")
    return (
        f"MATCH {start} OPTIONAL MATCH {walk}{test} WITH a, count(DISTINCT b) AS reached "
        f"RETURN avg(reached) AS {column}"
    )


def _ranked_rows(ranked: str, top: int, order: str, name_column: str, measure_column: str) -> str:
    """The first `top` of `ranked` (rows of `shown` and `measure`) in `order` and every row tied with the last
    of them ("the 3 highest" of 4, 3, 3, 3, 1 are four); with no `top`, the first and every row tied with it,
    and at least ROWS_RANKED rows, which show how close the rest came."""
    beyond = ">=" if order == "DESC" else "<="
    first = top or 1
    shown_too = "" if top else f" OR i < {ROWS_RANKED}"
    return (
        f"{ranked} ORDER BY measure {order} WITH collect([shown, measure]) AS ranked "
        f"WITH ranked, ranked[CASE WHEN size(ranked) < {first} THEN size(ranked) ELSE {first} END - 1][1] AS cut "
        f"UNWIND range(0, size(ranked) - 1) AS i WITH ranked[i] AS row, i, cut WHERE row[1] {beyond} cut{shown_too} "
        f"RETURN row[0] AS {name_column}, row[1] AS {measure_column} ORDER BY row[1] {order}, row[0] "
        f"LIMIT {ROWS_LISTED}"
    )


def _path_length(intent: QueryIntent, nodes: Nodes) -> str:
    """The fewest relationships between two named things, any type either way, up to PATH_HOPS: the steps a
    walk would follow do not matter, only how far apart the two are."""
    if intent.other is None or not intent.start.value or not intent.other.value:
        raise IntentError("answer path_length needs two named things: start and other")
    start, picked = _match_anchor("a", intent.start, nodes)
    other, other_picked = _match_anchor("o", intent.other, nodes)
    where = " AND ".join(["a <> o", *(p for p in (picked, other_picked) if p)])
    return (
        f"MATCH {start}, {other} WHERE {where} WITH a, o LIMIT 1 "
        f"MATCH p = (a)-[*1..{PATH_HOPS}]-(o) RETURN min(length(p)) AS `relationships_between`"
    )
