"""The values an action intent carries, checked against the ontology's declared types before any dry run:
the action's parameters (a reason, a date, an amount) and the property filters that select its targets.

Each check returns the values coerced to their declared type (an integer 1000 for a float property is
1000.0; a date is its ISO text, the way the graph stores dates) and the problems in plain words, which go
back to the planner once. Names never reach Cypher from here: only declared ones pass.
"""

from __future__ import annotations

import math
import re
from datetime import date
from typing import Any

from actions.ontology import ActionDefinition, Ontology, PropertyType
from contracts.action_path import FILTER_OPS, PropertyFilter

MAX_TEXT = 1000  # a parameter is a value, not a document; records stay small
MAX_IN = 1000  # values of one `in` filter
_ORDERED = {"lt", "le", "gt", "ge"}
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def coerce(value: Any, kind: PropertyType) -> Any:
    """`value` as a `kind`, or ValueError saying what was expected."""
    if value is None:
        raise ValueError(f"no value (expected {_expected(kind)})")
    if kind == "boolean":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
    elif kind in ("integer", "float"):
        number = _number(value)
        if number is not None and math.isfinite(number):
            if kind == "float":
                return float(number)
            if float(number).is_integer():
                return int(number)
    elif kind == "date":
        if isinstance(value, str) and _ISO_DATE.match(value.strip()):
            try:
                return date.fromisoformat(value.strip()).isoformat()
            except ValueError:
                pass
    elif isinstance(value, str):  # kind "string"
        if len(value) <= MAX_TEXT:
            return value
        raise ValueError(f"longer than {MAX_TEXT} characters")
    elif isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)  # an id or code the model wrote as a number
    raise ValueError(f"{value!r} is not {_expected(kind)}")


def _number(value: Any) -> int | float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    if isinstance(value, str) and _NUMBER.match(value.strip()):
        text = value.strip()
        return float(text) if any(c in text for c in ".eE") else int(text)
    return None


def _expected(kind: PropertyType) -> str:
    return {
        "date": "a date (YYYY-MM-DD)",
        "integer": "an integer",
        "float": "a number",
        "boolean": "true or false",
        "string": "text",
    }[kind]


def check_parameters(
    action_name: str, action: ActionDefinition, given: dict[str, Any]
) -> tuple[dict[str, Any], list[str]]:
    """The action's parameters coerced to their declared types, and what is wrong with `given`: names the
    action does not declare, declared ones missing (every declared parameter is required), wrong types."""
    declared = ", ".join(f"{n} ({t})" for n, t in action.parameters.items()) or "none"
    problems = [
        f"{action_name} has no parameter {name!r}; its parameters: {declared}"
        for name in given
        if name not in action.parameters
    ]
    values: dict[str, Any] = {}
    for name, kind in action.parameters.items():
        if name not in given or given[name] is None or given[name] == "":
            problems.append(
                f"{action_name} needs the parameter {name} ({_expected(kind)}), which the request must give"
            )
            continue
        try:
            values[name] = coerce(given[name], kind)
        except ValueError as exc:
            problems.append(f"parameter {name} of {action_name}: {exc}")
    return values, problems


def check_filters(
    ontology: Ontology, class_name: str, filters: list[PropertyFilter]
) -> tuple[list[PropertyFilter], list[str]]:
    """The filters with values coerced to their properties' types, and what is wrong with them: properties
    the class does not declare, unknown operators, values of the wrong type."""
    properties = ontology.require_class(class_name).properties
    checked: list[PropertyFilter] = []
    problems: list[str] = []
    for f in filters:
        kind = properties.get(f.property)
        if kind is None:
            problems.append(f"{class_name} has no property {f.property!r} to filter on; it has {', '.join(properties)}")
            continue
        if f.op not in FILTER_OPS:
            problems.append(f"filter on {f.property}: unknown op {f.op!r}; use one of {', '.join(FILTER_OPS)}")
            continue
        if f.op in _ORDERED and kind == "boolean":
            problems.append(f"filter on {f.property}: a boolean is compared with eq or ne, not {f.op}")
            continue
        try:
            value = _filter_value(f, kind)
        except ValueError as exc:
            problems.append(f"filter on {f.property} ({kind}): {exc}")
            continue
        checked.append(PropertyFilter(property=f.property, op=f.op, value=value))
    return checked, problems


def _filter_value(f: PropertyFilter, kind: PropertyType) -> Any:
    if f.op != "in":
        if isinstance(f.value, list):
            raise ValueError(f"a list needs the op 'in', not {f.op!r}")
        return coerce(f.value, kind)
    values = f.value if isinstance(f.value, list) else [f.value]
    if not values or len(values) > MAX_IN:
        raise ValueError(f"'in' needs 1 to {MAX_IN} values")
    return [coerce(v, kind) for v in values]
