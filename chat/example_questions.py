"""Example questions for whatever graph is loaded, written from its live schema alone: its labels, relationship
types and property keys as words (`PurchaseOrder` -> "purchase order", `ISSUED_TO` -> "issued to"), and a few
names and figures read from its nodes. Nothing here knows a graph or a domain: the chat page offers these to a
person facing an empty box. Pure functions; chat/routes/examples.py reads the graph."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from questions.asked_for import schema_words

MAX_EXAMPLES = 6
NAME_KEYS = ("name", "title")
MAX_NAME_CHARS = 60  # a longer text is a description, not a name a question states
# Identifiers and codes hold numbers that are no figures to rank by ("the highest supplier id").
_IDENTIFIER = re.compile(r"(?i:(^|_)(id|key|code|number|no|uuid|ref)$)|[a-z0-9](Id|Key|Code|Number|No|Uuid|Ref)$")
# A relationship named by a participle and "to" or "by" ("ISSUED_TO", "OWNED_BY") reads as "is issued to"; before
# another preposition the -ed word is as often an active verb ("ACTED_IN"), which reads right as it is.
_PASSIVE_PREPOSITIONS = {"to", "by"}


@dataclass(frozen=True)
class Example:
    question: str
    kind: str  # count | lookup | one-hop | most | highest | action


@dataclass
class GraphSample:
    """What the examples are written from: each label's property keys, the (from, type, to) relationships, one
    node's properties per label, and per relationship one node at its far end (so a one-hop question has an
    answer). `actions`: (class, action name) pairs an ontology declares, if any, the ones to prefer first."""

    labels: dict[str, list[str]]
    rels: set[tuple[str, str, str]]
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    linked: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)
    actions: list[tuple[str, str]] = field(default_factory=list)


def plural(phrase: str) -> str:
    head, _, last = phrase.rpartition(" ")
    if last.endswith("y") and len(last) > 1 and last[-2] not in "aeiou":
        last = last[:-1] + "ies"
    elif last.endswith(("s", "x", "z", "ch", "sh")):
        last += "es"
    else:
        last += "s"
    return f"{head} {last}".strip()


def name_of(properties: dict[str, Any]) -> str | None:
    """The value a question would name this node by: a `name` or `title`, else a key ending in one, else an
    identifier with a letter ("PO-2024-001"): a short text under another key (a status, a currency) is what many
    nodes share, no name. None when the node has none of these."""
    key = _name_key(properties)
    return properties[key].strip() if key is not None else None


def _name_key(properties: dict[str, Any]) -> str | None:
    texts = [
        k
        for k, v in properties.items()
        if isinstance(v, str) and 3 <= len(v.strip()) <= MAX_NAME_CHARS and any(c.isalpha() for c in v)
    ]
    named = [k for k in texts if k.lower().endswith(NAME_KEYS) or _IDENTIFIER.search(k)]
    return min(named, key=lambda k: (k.lower() not in NAME_KEYS, not k.lower().endswith(NAME_KEYS), k), default=None)


def _by_words(properties: dict[str, Any]) -> bool:
    """Whether the node is named by words (a name, a title) rather than by an identifier."""
    key = _name_key(properties)
    return key is not None and key.lower().endswith(NAME_KEYS)


def figures_of(properties: dict[str, Any]) -> list[str]:
    """Numeric properties that are no identifiers: what a question ranks or asks the value of."""
    return sorted(
        k
        for k, v in properties.items()
        if isinstance(v, (int, float)) and not isinstance(v, bool) and not _IDENTIFIER.search(k)
    )


def quoted(value: str) -> str:
    return f'"{value}"' if "'" in value else f"'{value}'"


def relation_phrase(rel_type: str) -> str:
    """`SUPPLIES` -> "supplies"; `ISSUED_TO` -> "is issued to"; `ACTED_IN` -> "acted in"."""
    words = schema_words(rel_type)
    first, *rest = words.split() or [""]
    return f"is {words}" if first.endswith("ed") and rest and rest[-1] in _PASSIVE_PREPOSITIONS else words


def example_questions(sample: GraphSample) -> list[Example]:
    """Up to MAX_EXAMPLES questions of different kinds, the same ones for the same graph."""
    degree = Counter(label for a, _, b in sample.rels for label in (a, b))
    central = sorted(sample.labels, key=lambda label: (-degree[label], label))
    rels = sorted(sample.rels, key=lambda r: (r[0] == r[2], -degree[r[0]], r))  # between two labels first
    found: list[Example] = []
    if central:
        found.append(Example(f"How many {plural(schema_words(central[0]))} are there?", "count"))
    named = [(rel, name) for rel in rels if (name := name_of(sample.linked.get(rel, {}))) is not None]
    named.sort(key=lambda found: not _by_words(sample.linked[found[0]]))  # "The Matrix" reads better than "WB-1"
    if named:
        (source, rel_type, target), name = named[0]
        found.append(
            Example(
                f"Which {schema_words(source)} {relation_phrase(rel_type)} the {schema_words(target)} {quoted(name)}?",
                "one-hop",
            )
        )
    counted = next((rel for rel in rels if rel[0] != rel[2] and rel not in {r for r, _ in named[:1]}), None)
    counted = counted or (rels[0] if rels else None)
    if counted is not None:
        source, _, target = counted
        found.append(Example(f"Which {schema_words(target)} has the most {plural(schema_words(source))}?", "most"))
    looked_up = _lookup(sample, central)
    if looked_up is not None:
        found.append(looked_up)
    ranked = next(
        (
            (label, figures_of(sample.nodes.get(label, {}))[0])
            for label in central
            if figures_of(sample.nodes.get(label, {}))
        ),
        None,
    )
    if ranked is not None:
        label, figure = ranked
        found.append(Example(f"Which {schema_words(label)} has the highest {schema_words(figure)}?", "highest"))
    acted = _action(sample, named)
    if acted is not None:
        found.append(acted)
    return list({e.question: e for e in found}.values())[:MAX_EXAMPLES]


def _lookup(sample: GraphSample, labels: list[str]) -> Example | None:
    """ "What is the <figure or text> of the <label> '<name>'?" for the first label whose sample node has both."""
    for label in labels:
        properties = sample.nodes.get(label, {})
        name = name_of(properties)
        if name is None:
            continue
        others = figures_of(properties) + sorted(
            k for k, v in properties.items() if isinstance(v, str) and v.strip() != name and not _IDENTIFIER.search(k)
        )
        if others:
            return Example(
                f"What is the {schema_words(others[0])} of the {schema_words(label)} {quoted(name)}?", "lookup"
            )
    return None


def _action(sample: GraphSample, named: list[tuple[tuple[str, str, str], str]]) -> Example | None:
    """An action the ontology declares, on the targets of a named related entity ("Submit the purchase orders of
    the supplier 'Northwind Traders'"): the action path plans it and asks before it changes anything."""
    for class_name, action_name in sample.actions:
        for (source, _, target), name in named:
            if source == class_name != target:  # the name is the target's: the action's class links to it
                return Example(
                    f"{schema_words(action_name).capitalize()} the {plural(schema_words(class_name))} "
                    f"of the {schema_words(target)} {quoted(name)}",
                    "action",
                )
    return None
