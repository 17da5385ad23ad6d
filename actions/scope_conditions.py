"""The scope check's steps over the values of the targets' own properties the request states. A flag
("unpaid") the plan has no condition on becomes one; so does a category value ("approved"), unless the plan
conditions that category already or the request negates: then the values it misses are listed as left out.
Targets named by ids the request states stay as they are. A number or date the selection does not use is
listed as left out."""

from __future__ import annotations

from actions.scope_selection import Selection, filter_holds, number_used
from actions.scope_stated import ISO_DATE, stated_categories, stated_flags, stated_numbers
from actions.scope_words import says, words
from contracts.action_path import PropertyFilter, filters_text


def fit_categories(s: Selection) -> None:
    if _by_stated_ids(s):
        return
    excluded = words(s.excluded)
    for prop, values in stated_categories(s.request, s.scope, s.ontology, s.intent).items():
        selected = [v for v in values if not says(excluded, v)]
        inverted = [
            v
            for v in selected
            if any(f.op == "ne" and f.property == prop and words(f.value) == words(v) for f in s.intent.filters)
        ]
        s.left_out += [f"{prop} {v!r}: the request selects it and the plan excludes it" for v in inverted]
        if any(f.property == prop for f in s.intent.filters) or s.negated:
            missing = [v for v in values if not filter_holds(s.intent.filters, prop, v)]
            s.left_out += [f"{prop} {v!r}" for v in missing]
            continue
        wanted = (
            PropertyFilter(property=prop, op="in", value=values)
            if len(values) > 1
            else PropertyFilter(property=prop, value=values[0])
        )
        s.update(filters=[*s.intent.filters, wanted])
        s.added.append(
            f"Added the condition {filters_text([wanted])}: the request states it and the plan had left it out."
        )


def fit_flags(s: Selection) -> None:
    if _by_stated_ids(s):
        return
    for prop, value in stated_flags(s.request, s.ontology, s.intent).items():
        if any(f.property == prop for f in s.intent.filters):
            continue  # "unpaid" planned as paid = false or paid != true: either says it
        wanted = PropertyFilter(property=prop, value=value)
        s.update(filters=[*s.intent.filters, wanted])
        s.added.append(
            f"Added the condition {filters_text([wanted])}: the request states it and the plan had left it out."
        )


def check_numbers(s: Selection) -> None:
    for number in stated_numbers(s.request, s.scope):
        if not number_used(number, s.intent):
            s.left_out.append(f"the {'date' if ISO_DATE.fullmatch(number) else 'number'} {number}")


def _by_stated_ids(s: Selection) -> bool:
    """Targets named by ids the request states: the words around them describe them (or say what they
    should become); they choose nothing the ids do not."""
    return bool(s.intent.entity_ids) and all(says(s.text, i) for i in s.intent.entity_ids)
