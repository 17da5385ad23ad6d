"""How the schema joins what a question names, told to the planner before it writes a query: the route
between each two labels the question's names were found under, from them to the kind of thing asked for,
and the relationship types the question's own words name. A small model writes multi-hop patterns far
better when it is shown the hops and their directions than when it must find them in the whole schema.
Pure functions; the schema and the grounding come from the backends."""

from __future__ import annotations

import re

from contracts.query_path import Grounding
from questions.asked_for import asked_label, route, schema_words
from questions.named_terms import singular

Rel = tuple[str, str, str]  # (source label, relationship type, target label)
MAX_ROUTES = 6  # lines of routes shown (each costs prompt tokens)


def named_relationships(question: str, rels: set[Rel]) -> list[Rel]:
    """The relationships whose type the question writes in its own words, every word of it, singular or
    plural ("which currencies does it use" does not name USES_CURRENCY; "uses currency" and "borders" do)."""
    said = set(re.findall(r"[a-z0-9]+", question.lower()))
    said |= {singular(w) for w in said}
    return sorted(rel for rel in rels if all(singular(w) in said for w in schema_words(rel[1]).split()))


def _pattern(rel: Rel) -> str:
    source, rel_type, target = rel
    return f"(:{source})-[:{rel_type}]->(:{target})"


def _entities(grounding: Grounding) -> list[tuple[str, str]]:
    """(label, stored value) of each name found as itself, one per label and value, in the question's order."""
    found = [(m.label, m.value) for m in grounding.matches if m.same_name()]
    return list(dict.fromkeys(found))


def _joins(a: str, b: str, rels: set[Rel]) -> str | None:
    """The schema's shortest route from label `a` to label `b`; for one label, its relationships to itself."""
    if a != b:
        return route([a], b, rels)
    own = sorted(rel for rel in rels if rel[0] == a and rel[2] == a)
    return ", ".join(_pattern(rel) for rel in own) or None


def connections(question: str, grounding: Grounding, labels: list[str], rels: set[Rel]) -> list[str]:
    """Lines for the planner: how the schema joins the question's names to each other and to the label
    asked for, and the relationships the question's words name. Empty when there is nothing to say."""
    entities = _entities(grounding)
    lines: list[str] = []
    for i, (label_a, value_a) in enumerate(entities):
        for label_b, value_b in entities[i + 1 :]:
            joined = _joins(label_a, label_b, rels)
            if joined:
                lines.append(f"- {label_a} '{value_a}' and {label_b} '{value_b}': {joined}")
    asked = asked_label(question, labels)
    if asked is not None:
        for label, value in entities:
            joined = _joins(label, asked, rels)
            if joined:
                lines.append(f"- {label} '{value}' to the {asked} asked for: {joined}")
    lines = list(dict.fromkeys(lines))[:MAX_ROUTES]
    named = named_relationships(question, rels)
    if named:
        lines.append("- relationships the question names: " + ", ".join(_pattern(rel) for rel in named))
    if not lines:
        return []
    return [
        "How the schema joins them (each relationship only in the direction shown; a route is the "
        "shortest, and the question may ask for a longer one through the relationships it names):",
        *lines,
    ]
