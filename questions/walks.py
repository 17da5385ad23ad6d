"""Whether a plan's queries walk the relationships the question spells out, as often as it spells them, and
return what they reach rather than the thing the question starts from. A small model asked to "follow married
into, then married into" writes one hop; asked which families a named family reaches, it returns the named
family's own name. Both are doubts said to the planner once (activities/planning.py) and evidence for the
calibrator. Pure functions over the question's words, the schema's relationship types and the query text:
nothing here knows a graph or a domain.

The question and the queries come from outside (a caller, the model), and these checks run on a worker's event
loop: every pattern takes time linear in its text. A quantifier whose characters the next part of the pattern
cannot match is possessive (`*+`, `++`), so the engine never tries the ways to split a run between them
(tests/attacks/test_linear_time_checks.py measures each).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from contracts.query_path import Grounding
from cypher.clause_order import AGGREGATE, ranked_by
from cypher.text import NODE_LABEL, blank_strings, unescaped
from questions.asked_for import schema_words
from questions.named_terms import singular

MIN_SINGLE_WORD = 4  # a one-word type shorter than this ("IN", "HAS") is too common a word to count by
UNBOUNDED_HOPS = 99  # `[:R*]` or `[:R*2..]`: as many hops as any question names

# A relationship pattern's inside: `[r:A|B*1..3]`, `[:A]`, `[*2]`. Each type name is taken whole (`\w++`): with
# `\w+` and every separator optional, `[:SUPPLIES|SUPPLIES|SUPPLIES /* */]` was tried in every split of every
# name before failing (seconds for three names, a hundred times more for each further one).
_REL_PATTERN = re.compile(
    r"\[\s*+\w*+\s*+(?::\s*+((?:`?\w++`?\s*+\|?\s*+:?\s*+)++))?"
    r"(\*\s*+(\d*+)\s*+(?:\.\.\s*+(\d*+))?)?\s*+(?:\{[^{}]*+\})?\s*+\]"
)
_WORD = re.compile(r"[a-z0-9]+")
_RETURN = re.compile(r"\bRETURN\b", re.IGNORECASE)
_TAIL = re.compile(r"\b(?:ORDER\s+BY|SKIP|LIMIT|UNION)\b", re.IGNORECASE)
_IDENTIFIER = re.compile(r"(?<![\w.$])([A-Za-z_]\w*)\b(?!\s*\()")
# A node pattern, anonymous ones too: `(a:Label {k: v})`, `(:Label)`, `()` (its variable, its properties)
_NODE = re.compile(r"\(\s*+(\w*+)\s*+(?::\s*+`?\w++`?\s*+)*+(\{[^{}]*+\})?\s*+\)")
_WHERE_EQUALS = re.compile(r"\b(\w++)\s*+\.\s*+`?\w++`?\s*+=\s*+('(?:[^'\\]++|\\.)*+'|\"(?:[^\"\\]++|\\.)*+\")")
# `v.p = 'X'`, as the adjusted rung broadens it too (`toLower(v.p) CONTAINS toLower('X')`, cypher.text.broaden_cypher)
_WHERE_NAMES = re.compile(
    r"\b(\w++)\s*+\.\s*+`?\w++`?\s*+\)?+\s*+(?:=|CONTAINS|STARTS\s++WITH)\s*+"
    r"(?:toLower\s*+\(\s*+)?+('(?:[^'\\]++|\\.)*+'|\"(?:[^\"\\]++|\\.)*+\")",
    re.IGNORECASE,
)
_STRING = re.compile(r"'((?:[^'\\]++|\\.)*+)'|\"((?:[^\"\\]++|\\.)*+)\"")
# What joins two node patterns into one path: `-[:R]->`, `<-[r:R*2]-`, `--`, `-->`
_CONNECTOR = re.compile(r"\s*<?-(?:\[[^\]]*\])?->?\s*")
# What an UNWIND lists, up to its AS: never past the next UNWIND, so that a query of UNWINDs without an AS is
# read once, not once from each of them.
_UNWIND = re.compile(r"\bUNWIND\b((?:(?!\bUNWIND\b).)+?)\bAS\s++(\w+)", re.IGNORECASE)
_CLAUSE = re.compile(
    r"\b(WHERE|WITH|UNWIND|RETURN|ORDER\s+BY|MATCH|OPTIONAL\s+MATCH|CALL|UNION|SKIP|LIMIT)\b", re.IGNORECASE
)
_CONDITION = re.compile(r"\b(?:AND|OR|XOR)\b", re.IGNORECASE)
# What makes rows of separate walks no simple pairing: a WITH or CALL between them, a UNION of them, an aggregate
_NOT_PAIRED = re.compile(r"\b(?:WITH|CALL|UNION)\b", re.IGNORECASE)
_UNION = re.compile(r"\bUNION(?:\s+ALL)?\b", re.IGNORECASE)
_NEGATED_OR_EITHER = re.compile(r"\b(?:NOT|OR|XOR)\b", re.IGNORECASE)


def _words(text: str) -> list[str]:
    return [singular(w) for w in _WORD.findall(text.lower())]


def _spelled_at(said: list[str], name: str) -> list[int]:
    """Where the words `said` spell a schema name out ("married into"), not overlapping; nowhere for a
    one-word name too common to count by."""
    phrase = _words(schema_words(name))
    if not phrase or (len(phrase) == 1 and len(phrase[0]) < MIN_SINGLE_WORD):
        return []
    at, i = [], 0
    while i + len(phrase) <= len(said):
        if said[i : i + len(phrase)] == phrase:
            at.append(i)
            i += len(phrase)
        else:
            i += 1
    return at


def _times_spelled(said: list[str], name: str) -> int:
    return len(_spelled_at(said, name))


def named_times(question: str, rel_types: set[str]) -> dict[str, int]:
    """How many times the question spells each relationship type out in its own words ("follow married into,
    then married into": MARRIED_INTO twice), for the types it spells out at least once."""
    said = _words(question)
    return {rel_type: times for rel_type in rel_types if (times := _times_spelled(said, rel_type))}


def spelled_walk(question: str, rel_types: set[str]) -> list[str]:
    """The relationship types the question spells out, each time it spells one, in the order it does ("follow
    married into, then appears with": [MARRIED_INTO, APPEARS_WITH]). The question should come without the
    names it gives (`without_names`)."""
    said = _words(question)
    found = sorted((i, rel_type) for rel_type in rel_types for i in _spelled_at(said, rel_type))
    return [rel_type for _, rel_type in found]


def walked_times(query: str) -> dict[str, int]:
    """How many hops of each relationship type the query's patterns walk: `[:R]` one, `[:R*2]` two, `[:R*1..3]`
    three (at most), `[:R*]` as many as any question names."""
    counts: dict[str, int] = {}
    for types, star, low, high in _REL_PATTERN.findall(blank_strings(query)):
        if not types:
            continue
        if not star:
            hops = 1
        elif high:
            hops = int(high)
        elif "." in star:
            hops = UNBOUNDED_HOPS  # `*2..`: no upper bound
        else:
            hops = int(low) if low else UNBOUNDED_HOPS
        for rel_type in {t.strip(" `:") for t in types.split("|")} - {""}:
            counts[rel_type] = counts.get(rel_type, 0) + hops
    return counts


def unmatched_labels(question: str, matched: set[str], labels: list[str]) -> list[str]:
    """The labels the question names in its own words ("unpaid invoices": Invoice) that no query matches or
    reaches (`matched`: the labels of the queries' nodes and at either end of their relationships). The
    question should come without the names it gives (`without_names`)."""
    said = _words(question)
    return [label for label in labels if label not in matched and _times_spelled(said, label)]


def without_names(question: str, grounding: Grounding) -> str:
    """The question without the names it gives ("Globex Supply" does not spell out SUPPLIES)."""
    names = {m.mention for m in grounding.matches} | {m.value for m in grounding.matches} | set(grounding.unmatched)
    for name in sorted(names, key=len, reverse=True):
        # As whole words: the code "CH" is not taken out of "which", nor "US" out of "bus".
        pattern = rf"(?<!\w){re.escape(name)}(?!\w)"
        question = re.sub(pattern, " ", question, flags=re.IGNORECASE) if name.strip() else question
    return question


def short_walks(question: str, queries: list[str], rel_types: set[str]) -> list[str]:
    """Doubts for the planner: each relationship type the question spells out more times than the plan's
    queries walk it (a type spelled once and never walked included), with what to write instead. The
    question should come without the names it gives (`without_names`)."""
    said = named_times(question, rel_types)
    walked: dict[str, int] = {}
    for query in queries:
        for rel_type, hops in walked_times(query).items():
            walked[rel_type] = walked.get(rel_type, 0) + hops
    doubts = []
    for rel_type, times in sorted(said.items()):
        hops = walked.get(rel_type, 0)
        if hops >= times:
            continue
        if hops == 0:
            doubts.append(f"the question names {rel_type} ('{schema_words(rel_type)}'), which no query walks")
        else:
            chain = "".join(["(a)"] + [f"-[:{rel_type}]->(n{i})" for i in range(1, times + 1)])
            doubts.append(
                f"the question follows {rel_type} {times} times, one after the other, but the query "
                f"walks it {hops} time{'s' if hops > 1 else ''}: write one hop per time it is named, "
                f"as in {chain} (each arrow the way the question goes), and return the last node"
            )
    return doubts


def _named_variables(blanked: str, query: str, names: set[str]) -> set[str]:
    """The variables the query binds to one of the question's names: `(f:Family {name: 'Medici'})` or
    `WHERE f.name = 'Medici'`."""
    found = set()
    for node in _NODE.finditer(blanked):
        if node.group(1) and node.group(2):
            literal = query[node.start(2) : node.end(2)]
            if any(_unquoted(m) in names for m in _STRING.finditer(literal)):
                found.add(node.group(1))
    for equals in _WHERE_EQUALS.finditer(blanked):
        literal = query[equals.start(2) : equals.end(2)]
        if _unquoted(_STRING.match(literal)) in names:
            found.add(equals.group(1))
    return found


class NamedJoin(NamedTuple):
    """Two of the question's names one path of a query joins, and by how many relationships."""

    first: str
    first_label: str | None  # the label the query's node pattern gives the name, if it gives one
    second: str
    second_label: str | None
    hops: int


def _where_names(blanked: str, query: str, names: set[str]) -> dict[str, str]:
    """The variables a WHERE binds to one of the question's names (`a.name = 'X'`, or as the adjusted rung
    broadens it). A WHERE with NOT, OR or XOR binds none: its name may be one excluded or one of alternatives."""
    bound: dict[str, str] = {}
    clauses = list(_CLAUSE.finditer(blanked))
    for n, clause in enumerate(clauses):
        end = clauses[n + 1].start() if n + 1 < len(clauses) else len(blanked)
        if clause.group(1).upper() != "WHERE" or _NEGATED_OR_EITHER.search(blanked[clause.end() : end]):
            continue
        for equals in _WHERE_NAMES.finditer(blanked, clause.end(), end):
            value = _unquoted(_STRING.match(query[equals.start(2) : equals.end(2)]))
            if value in names:
                bound.setdefault(equals.group(1), value)
    return bound


def _name_of_node(node: re.Match[str], query: str, names: set[str], where: dict[str, str]) -> str | None:
    """The question's name a node pattern is bound to, inline (`(a {name: 'X'})`) or by `WHERE a.name = 'X'`."""
    if node.group(2):
        literal = query[node.start(2) : node.end(2)]
        inline = next((value for m in _STRING.finditer(literal) if (value := _unquoted(m)) in names), None)
        if inline is not None:
            return inline
    return where.get(node.group(1)) if node.group(1) else None


def _label_of_node(node: re.Match[str], blanked: str) -> str | None:
    label = NODE_LABEL.match(blanked, node.start())
    return label.group(1) if label and label.end() <= node.end() else None


def _joins_in(blanked: str, query: str, names: set[str]) -> list[NamedJoin]:
    """named_joins for one query of a UNION: each named node joined to the nearest named node before it on its
    path that has another name, unless a connector of open length lies between. One pass keeps that nearest
    named node and the nearest before it named otherwise (looking back from every node cost the path's
    length squared when one name was given all along it)."""
    where = _where_names(blanked, query, names)
    nodes = list(_NODE.finditer(blanked))
    joins: dict[NamedJoin, None] = {}
    last: tuple[int, str] | None = None  # the nearest named node on the path (index, name)
    other: tuple[int, str] | None = None  # the nearest before it with another name
    for i, node in enumerate(nodes):
        if i > 0:
            between = blanked[nodes[i - 1].end() : node.start()]
            if not _CONNECTOR.fullmatch(between) or "*" in between:
                last = other = None  # another path, or a length left open: nothing before reaches on
        second = _name_of_node(node, query, names, where)
        if second is None:
            continue
        partner = last if last is not None and last[1] != second else other
        if partner is not None:
            j, first = partner
            joins.setdefault(
                NamedJoin(first, _label_of_node(nodes[j], blanked), second, _label_of_node(node, blanked), i - j)
            )
        if last is None or last[1] != second:
            other = last
        last = (i, second)
    return list(joins)


def named_joins(query: str, grounding: Grounding) -> list[NamedJoin]:
    """Two of the question's names one path of the query joins by a fixed number of relationships:
    `(a:A {name: 'X'})-[:R]->(b {name: 'Y'})` is ('X', 'A', 'Y', None, 1). A variable-length relationship
    between them (`[*]`, `[:R*2]`) leaves the pair out: its length is open. Each query of a UNION on its own."""
    names = {m.value for m in grounding.matches if m.same_name()}
    if len(names) < 2:
        return []
    blanked = blank_strings(query)
    joins: dict[NamedJoin, None] = {}
    cut = 0
    for union in [*_UNION.finditer(blanked), None]:
        end = union.start() if union else len(blanked)
        joins.update(dict.fromkeys(_joins_in(blanked[cut:end], query[cut:end], names)))
        cut = union.end() if union else end
    return list(joins)


def _unquoted(match: re.Match[str] | None) -> str:
    if match is None:
        return ""
    return unescaped(match.group(1) if match.group(1) is not None else match.group(2) or "")


def returns_only_named(query: str, grounding: Grounding) -> list[str]:
    """The variables a query returns when it walks relationships from the question's named things but returns
    only those things themselves (`MATCH (f {name: 'Medici'})-[:R]->(g) RETURN f.name`): the answer would be
    the name the question gave. Empty when the query returns anything it reached, or walks nothing."""
    names = {m.value for m in grounding.matches if m.same_name()}
    blanked = blank_strings(query)
    if not names or not walked_times(query):
        return []
    returns = list(_RETURN.finditer(blanked))
    if not returns:
        return []
    tail = blanked[returns[-1].end() :]
    cut = _TAIL.search(tail)
    returned = tail[: cut.start()] if cut else tail
    # `f.name AS family`: the alias after AS names a column, not a variable
    used = {
        v
        for v in _IDENTIFIER.findall(re.sub(r"\bAS\s+\w+", " ", returned, flags=re.IGNORECASE))
        if v.upper() not in {"DISTINCT", "AS", "TRUE", "FALSE", "NULL", "AND", "OR", "NOT"}
    }
    named = _named_variables(blanked, query, names)
    return sorted(used) if used and used <= named else []


def _variables(expression: str) -> set[str]:
    return {
        v
        for v in _IDENTIFIER.findall(expression)
        if v.upper() not in {"DISTINCT", "ASC", "DESC", "ASCENDING", "DESCENDING", "TRUE", "FALSE", "NULL"}
    }


def orders_by_named(query: str, grounding: Grounding) -> list[str]:
    """The variables a query ranks its rows by when they are only the question's named things, which are
    the same on every row (`MATCH (c {name: 'Albania'})-[:R]->(n) RETURN n.name, c.area AS area ORDER BY
    area`): the ranking orders nothing. Read through a RETURN alias."""
    names = {m.value for m in grounding.matches if m.same_name()}
    ranking = ranked_by(query)
    if not names or ranking is None or not walked_times(query):
        return []
    blanked = blank_strings(query)
    used = _variables(ranking[0])
    named = _named_variables(blanked, query, names)
    return sorted(used) if used and used <= named else []


def _joined_parts(blanked: str) -> tuple[dict[str, str], set[str]]:
    """Each variable of the query mapped to the part of the query it belongs to (a representative variable):
    variables on one path are one part, as are those one WHERE condition compares (`n = m`, `m IN ns`) or an
    UNWIND reads, and a variable named twice joins its paths. Also the parts that walk a relationship."""
    parent: dict[str, str] = {}

    def find(v: str) -> str:
        while parent.setdefault(v, v) != v:
            v = parent[v]
        return v

    def join(variables: list[str]) -> None:
        for other in variables[1:]:
            parent[find(other)] = find(variables[0])

    nodes = list(_NODE.finditer(blanked))
    names = [n.group(1) or f"#{i}" for i, n in enumerate(nodes)]  # an anonymous node is a part of a path too
    for name in names:
        find(name)
    walking = []
    for i in range(1, len(nodes)):
        if _CONNECTOR.fullmatch(blanked[nodes[i - 1].end() : nodes[i].start()]):
            join([names[i - 1], names[i]])
            walking.append(names[i])
    clauses = list(_CLAUSE.finditer(blanked))
    for n, clause in enumerate(clauses):
        if clause.group(1).upper() != "WHERE":
            continue
        body = blanked[clause.end() : clauses[n + 1].start() if n + 1 < len(clauses) else len(blanked)]
        for condition in _CONDITION.split(body):  # `a.name = 'X' AND b.name = 'Y'` joins nothing
            join([v for v in _variables(condition) if v in parent])
    for listed, alias in _UNWIND.findall(blanked):
        join([alias, *(v for v in _variables(listed) if v in parent)])
    return {v: find(v) for v in list(parent)}, {find(v) for v in walking}


def unjoined_named(query: str, grounding: Grounding) -> list[str]:
    """The variables bound to the question's names when they walk apart and nothing joins them: `MATCH (a
    {name: 'X'})-[:R]->(b) MATCH (c {name: 'Y'})-[:R]->(d) RETURN ...` pairs every row of one walk with every
    row of the other, so what the two share is never asked. Empty when the named things lie on one joined part,
    one of them walks nowhere, or the rows are no simple pairing: a WITH, CALL or UNION between the walks, or an
    aggregate over them (a count of each, compared, is a fair query)."""
    names = {m.value for m in grounding.matches if m.same_name()}
    if len(names) < 2:
        return []
    blanked = blank_strings(query)
    if _NOT_PAIRED.search(blanked) or AGGREGATE.search(blanked):
        return []
    named = sorted(_named_variables(blanked, query, names))
    parts, walking = _joined_parts(blanked)
    named_parts = {parts.get(v, v) for v in named}
    # Two named things side by side without walks (`MATCH (a {..}), (b {..}) RETURN a.x, b.x`) compare them.
    return named if len(named_parts) > 1 and named_parts <= walking else []


_NAMED_START = (
    (
        returns_only_named,
        "the query returns only {}, the thing the question names itself: return the nodes the "
        "question asks for, the ones the walk reaches",
    ),
    (
        orders_by_named,
        "the query ranks its rows by {}, the thing the question names, which is the same on every "
        "row: rank by the property of the nodes the walk reaches",
    ),
    (
        unjoined_named,
        "the query matches {}, the things the question names, in patterns that nothing joins, so "
        "every row pairs one with the other: walk from each to the same node, as in "
        "(a {{name: 'X'}})-[:R]->(n)<-[:R]-(b {{name: 'Y'}}), and return n",
    ),
)


def named_start_doubts(queries: list[str], grounding: Grounding) -> list[str]:
    """Doubts for the planner: a query that returns, or ranks by, only the things the question names (the first
    query found for each)."""
    doubts = []
    for find, say in _NAMED_START:
        found = next((variables for query in queries if (variables := find(query, grounding))), None)
        if found:
            doubts.append(say.format(", ".join(found)))
    return doubts
