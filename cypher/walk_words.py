"""Each candidate walk (cypher/walk_space.py) in plain words, built from the schema's own names, for a small
model to choose from by number: `from the Country "Sweden", follow BORDERS to a Country, then IN_REGION to a
Region`. A hop against the relationship's arrow says "backwards" and names both ends, so its direction cannot
be misread. Pure functions."""

from __future__ import annotations

import json
from collections.abc import Sequence

from cypher.intent import Anchor, Condition, CountTest, Hop, Lack, QueryIntent
from cypher.walk_space import LabelSet, Walk


def _a(label: str) -> str:
    return f"an {label}" if label[:1].lower() in "aeiou" else f"a {label}"


def _kinds(labels: LabelSet) -> str:
    """The labels a node can have: "Town", or "Town or Village"."""
    return " or ".join(sorted(labels))


def _some(labels: LabelSet) -> str:
    return " or ".join(_a(label) for label in sorted(labels))


def _value(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _thing(anchor: Anchor) -> str:
    """A named thing ("the Country "Sweden"") or every node of a label ("every Country")."""
    return f"the {anchor.label} {_value(anchor.value)}" if anchor.value else f"every {anchor.label}"


def _hop(hop: Hop, here: LabelSet, there: LabelSet) -> str:
    if hop.direction == "outgoing":
        return f"{hop.relationship} to {_some(there)}"
    return f"{hop.relationship} backwards (from {_kinds(here)} to {_kinds(there)})"


def _chain(hops: tuple[Hop, ...], labels: tuple[LabelSet, ...]) -> str:
    """ "follow R to a B, then S backwards (from B to C)"."""
    steps = [_hop(hop, labels[i], labels[i + 1]) for i, hop in enumerate(hops)]
    return "follow " + ", then ".join(steps)


def describe_walk(walk: Walk) -> str:
    """The walk in one line."""
    intent = walk.intent
    start = _thing(intent.start)
    if walk.kind == "distance" and intent.other is not None:
        return f"how many relationships lie between {start} and {_thing(intent.other)}"
    if walk.kind == "contrast" and intent.other is not None and not intent.hops:
        return f"{start} against {_thing(intent.other)}, by their {intent.answer_key or 'properties'}"
    if not intent.hops:
        return f"{start} itself" if intent.start.value else start
    chain = _chain(intent.hops, walk.labels)
    reached = _kinds(walk.labels[-1])
    other = intent.other
    match walk.kind:
        case "shared" if other is not None:
            return f"the {reached} nodes reached both from {start} and from {_thing(other)}: from each, {chain}"
        case "excluded" if other is not None:
            return f"the {reached} nodes reached from {start} but NOT from {_thing(other)}: from each, {chain}"
        case "met" | "unmet" if other is not None:
            theirs = _chain(intent.other_hops, walk.other_labels)
            but = "also" if walk.kind == "met" else "NOT"
            return f"the {reached} nodes reached from {start} ({chain}) and {but} from {_thing(other)} ({theirs})"
        case "connection" if other is not None:
            # its names: every node passed, when there are several (cypher/intent.py _passed_through)
            every = intent.answer == "names" and len(intent.hops) > 2
            passed = walk.labels[1:-1] if every else walk.labels[1:2]
            middle = " and ".join(_kinds(labels) for labels in passed)
            return f"the {middle} nodes between {start} and {_thing(other)}: from the first, {chain}"
        case "contrast" if other is not None:
            return f"{start} against {_thing(other)}, by how many {reached} nodes each reaches: from each, {chain}"
        case _:
            return f"from {start}, {chain}"


_OPERATORS = {"=": "is", "<>": "is not", "<": "is below", ">": "is above", "<=": "is at most", ">=": "is at least"}


def _test(condition: Condition, last: str = "") -> str:
    said = "contains" if condition.operator == "contains" else _OPERATORS.get(condition.operator, condition.operator)
    whose = f"{last} {condition.key}" if condition.on_relationship else condition.key
    return f"only those whose {whose} {said} {_value(condition.value)}"


def _lacking(lack: Lack) -> str:
    """ "only those with no SUPPLIES backwards (from a Supplier)", "... to the Discoverer "Davy""."""
    far = _thing(lack.other) if lack.other is not None else _a(lack.label) if lack.label else "anything"
    way = "to" if lack.hop.direction == "outgoing" else "backwards from"
    return f"only those with no {lack.hop.relationship} {way} {far}"


_HOW_MANY = {"=": "exactly", "<>": "other than", "<": "fewer than", ">": "more than", "<=": "at most", ">=": "at least"}


def _counted(test: CountTest, walk: Walk) -> str:
    """ "only the Country nodes that reach at least 4 of them" """
    group = _kinds(walk.labels[test.group])
    return f"only the {group} nodes that reach {_HOW_MANY.get(test.operator, test.operator)} {test.value} of them"


def describe_answer(intent: QueryIntent, reached: str, ranked: str = "") -> str:
    """What the program returns, in words: "how many", "the total population", "the Town with the highest
    population"; a key of the last relationship said with it ("the total SUPPLIES lead_time_days"); `ranked`:
    the kind of the nodes a ranking by what they reach ranks (the start's label when not given)."""
    key = intent.answer_key
    ranked = ranked or intent.start.label
    if intent.relationship_key and intent.hops:
        key = f"{intent.hops[-1].relationship} {key}"
    match intent.answer:
        case "count":
            return "how many there are"
        case "value":
            return f"their {key}"
        case "sum":
            return f"the total {key}"
        case "average":
            return f"the average {key}"
        case "max" | "min":
            return f"the {'largest' if intent.answer == 'max' else 'smallest'} {key}"
        case "highest" | "lowest":
            if intent.top:
                return f"the {intent.top} {reached} nodes with the {intent.answer} {key}, ties included"
            return f"the {reached} with the {intent.answer} {key}"
        case "most_connected" | "least_connected":
            most = "most" if intent.answer == "most_connected" else "fewest"
            if intent.top:
                return f"the {intent.top} {ranked} nodes that reach the {most}, ties included, and how many"
            return f"the {ranked} that reaches the {most}, and how many"
        case "most_total" | "least_total":
            most = "highest" if intent.answer == "most_total" else "lowest"
            if intent.top:
                return f"the {intent.top} {ranked} nodes with the {most} total {key} of them, ties included"
            return f"the {ranked} with the {most} total {key} of them, and that total"
        case "path_length":
            return "the number"
        case "most_common" | "least_common":
            most = "most" if intent.answer == "most_common" else "fewest"
            many = f"the {intent.top} values" if intent.top else "the value"
            return f"{many} of {key} the {most} of them hold, ties included, and how many"
        case "average_reached":
            return f"how many each {intent.start.label} reaches, on average"
        case "whether":
            return "yes or no, with what it finds"
        case _:
            return "their names"


def describe_program(walk: Walk, intent: QueryIntent) -> str:
    """A whole program in one line: the walk, any test on what it reaches, and what it returns."""
    last = intent.hops[-1].relationship if intent.hops else ""
    tested = f"; {_test(intent.condition, last)}" if intent.condition is not None else ""
    tested += f"; {_lacking(intent.lacks)}" if intent.lacks is not None else ""
    reached = _kinds(walk.labels[1] if walk.kind == "connection" else walk.labels[-1])
    if intent.answer == "whether" and walk.kind == "connection" and intent.other is not None:
        chain = _chain(intent.hops, walk.labels)
        joined = f"whether {_thing(intent.start)} reaches {_thing(intent.other)}: {chain}"
        return f"{joined}{tested}; answer: yes or no, with what it passes through"
    if intent.contrast is not None:
        side = "higher" if intent.contrast.higher else "lower"
        if intent.contrast.whether:
            wins = f"whether the first's is {side} (yes or no), with both figures"
        else:
            wins = f"the one whose is {side} (both on a tie), with its figure"
        return f"{describe_walk(Walk(walk.kind, intent, walk.labels))}{tested}; answer: {wins}"
    if intent.count_test is not None:
        group = _kinds(walk.labels[intent.count_test.group])
        counted = _counted(intent.count_test, walk)
        return f"{describe_walk(walk)}{tested}; {counted}; answer: those {group} nodes and how many each reaches"
    ranked = _kinds(walk.labels[intent.ranked_group]) if intent.ranked_group < len(walk.labels) else ""
    return f"{describe_walk(walk)}{tested}; answer: {describe_answer(intent, reached, ranked)}"


def numbered(walks: Sequence[Walk]) -> str:
    """The walks, one a line, numbered from 1 as the model chooses them."""
    return "\n".join(f"{n}. {describe_walk(walk)}" for n, walk in enumerate(walks, start=1))
