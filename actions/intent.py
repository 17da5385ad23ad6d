"""The action planner's side of the ontology: what the model is offered (the JSON schema, and a catalogue
of each class's properties and each action's parameters with their types) and how its answer is checked
before anything runs. Every name offered comes from the ontology; nothing here knows a domain."""

from __future__ import annotations

import re
from typing import Any

from actions.ontology import Ontology, UnknownName
from actions.values import check_filters, check_parameters
from contracts.action_path import FILTER_OPS, ActionIntent, PropertyFilter

NO_SELECTION = "name the entities: entity_ids, or related_class and related_name, or filters"


def checked_intent(ontology: Ontology, intent: ActionIntent) -> tuple[ActionIntent, list[str]]:
    """The intent with its parameters and filter values coerced to their declared types, and why it
    cannot be executed as it stands ([] when it can). Runs before any dry run."""
    try:
        action = ontology.require_action(intent.entity_type, intent.action_name)
    except UnknownName as exc:
        elsewhere = [cls for cls, actions in ontology.actions.items() if intent.action_name in actions]
        hint = (
            (
                f"; {intent.action_name} is an action of {' and '.join(elsewhere)}: set entity_type to "
                f"{' or '.join(elsewhere)} and keep action_name {intent.action_name}"
            )
            if elsewhere
            else ""
        )
        return intent, [str(exc) + hint]
    parameters, problems = check_parameters(intent.action_name, action, intent.parameters)
    filters, filter_problems = check_filters(ontology, intent.entity_type, intent.filters)
    problems += filter_problems
    related_filters: list[PropertyFilter] = []
    if intent.related_class:
        if intent.related_class not in ontology.classes:
            problems.append(f"unknown class {intent.related_class!r}")
        elif not any(
            {r.from_, r.to} == {intent.entity_type, intent.related_class}
            for r in ontology.relationships_of(intent.entity_type)
        ):
            problems.append(f"{intent.entity_type} is not related to {intent.related_class}")
        else:
            related_filters, related_problems = check_filters(ontology, intent.related_class, intent.related_filters)
            problems += related_problems
            if not intent.entity_ids and not intent.related_name.strip() and not intent.related_filters:
                problems.append(f"related_class {intent.related_class} needs the related entity's related_name")
    elif intent.related_filters or intent.related_excluded:
        problems.append("related_filters and related_excluded need a related_class")
    if not intent.entity_ids and not intent.related_class and not intent.filters:
        # ids name the targets themselves; otherwise a related entity or filters do
        problems.append(NO_SELECTION)
    return intent.model_copy(
        update={"parameters": parameters, "filters": filters, "related_filters": related_filters}
    ), problems


# A date is text in JSON; "format" lets a grammar-constrained model write only YYYY-MM-DD.
JSON_TYPES: dict[str, dict[str, Any]] = {
    "string": {"type": "string"},
    "date": {"type": "string", "format": "date"},
    "integer": {"type": "integer"},
    "float": {"type": "number"},
    "boolean": {"type": "boolean"},
}


def planner_schema(ontology: Ontology) -> dict[str, Any]:
    """The action planner's JSON schema: every name offered is one the ontology declares."""
    kinds: dict[str, set[str]] = {}
    for actions in ontology.actions.values():
        for action in actions.values():
            for name, kind in action.parameters.items():
                kinds.setdefault(name, set()).add(kind)
    # A name two actions declare with different types is offered untyped; the check still types it.
    parameters = {name: JSON_TYPES[next(iter(k))] if len(k) == 1 else {} for name, k in sorted(kinds.items())}
    properties = sorted({p for cls in ontology.actions for p in ontology.classes[cls].properties})
    filter_item = {
        "type": "object",
        "properties": {
            "property": {"enum": properties},
            "op": {"enum": list(FILTER_OPS)},
            "value": {"type": ["string", "number", "boolean", "array"]},
        },
        "required": ["property", "op", "value"],
    }
    return {
        "type": "object",
        "properties": {
            "entity_type": {"enum": sorted(ontology.actions)},
            "action_name": {"enum": sorted({a for acts in ontology.actions.values() for a in acts})},
            "entity_ids": {"type": "array", "items": {"type": "string"}},
            "related_class": {"enum": ["", *sorted(ontology.classes)]},
            "related_name": {"type": "string"},
            "filters": {"type": "array", "items": filter_item},
            "parameters": {"type": "object", "properties": parameters, "additionalProperties": False},
        },
        "required": ["entity_type", "action_name", "entity_ids", "related_class", "related_name"],
    }


def actions_catalogue(ontology: Ontology) -> str:
    """Each class that has actions, with its properties and types (what filters may test), and each action
    with its parameters and types (what the request must supply)."""
    lines = []
    for cls, actions in ontology.actions.items():
        props = ", ".join(f"{p}: {t}" for p, t in ontology.classes[cls].properties.items())
        lines.append(f"- {cls} (properties: {props})")
        for name, a in actions.items():
            params = ", ".join(f"{p}: {t}" for p, t in a.parameters.items())
            about = f": {a.description}" if a.description else ""
            lines.append(f"  - {name}" + (f"({params})" if params else "") + about)
    return "\n".join(lines)


_WHEN = (
    r"\b(january|february|march|april|may|june|july|august|september|october|november|december|"
    r"today|yesterday|tomorrow|week|month|year|days?|ago|overdue)\b"
)
_SEPARATED = re.compile(r"(?<=\d)[,_ ](?=\d{3}\b)")  # 1,000 / 1_000 / 1 000
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")


def stated_in(ontology: Ontology, class_name: str, f: PropertyFilter, request: str) -> bool:
    """Whether the request states this (checked) filter. A small model adds conditions nobody asked for
    ("pay all orders" planned with status = delivered), which silently narrow the targets. Text values
    must appear in the request (case, _ and - aside), numbers as digits (thousands separators aside);
    a boolean or date condition is read from words ("unpaid", "due before March"), so the property's
    name must appear."""
    kind = ontology.classes[class_name].properties[f.property]
    values = f.value if isinstance(f.value, list) else [f.value]
    text = _words(request)
    if kind == "string":
        return all(_words(str(v)) in text for v in values)
    if kind in ("integer", "float"):
        digits = _SEPARATED.sub("", request)
        return all(re.search(rf"(?<![\d.]){_number_text(v)}(?!\d)", digits) for v in values)
    named = any(w in text for w in _words(_CAMEL.sub(" ", f.property)).split() if len(w) >= 3)
    if kind == "date":  # "ordered before March 2024": the property and when (a year, a month, a day's words)
        return named and (any(str(v)[:4] in request for v in values) or re.search(_WHEN, text) is not None)
    return named


def _words(text: str) -> str:
    return re.sub(r"[_\-\s]+", " ", text.lower())


def _number_text(value: Any) -> str:
    number = float(value)
    return re.escape(str(int(number)) if number.is_integer() else str(number))
