"""The scope check's steps over what the plan chose and the request does not support: ids and related names
the request never gives, values to write it never states, conditions that restate the action's effect or
belong to a related class, and a selection that selects by what the request excludes. Each step takes the
`Selection` and corrects it where the request allows one reading only, or notes what is left out."""

from __future__ import annotations

import json

from actions.scope_selection import Selection
from actions.scope_stated import stated_value
from actions.scope_words import says, words
from contracts.action_path import filters_text


def check_invented(s: Selection) -> None:
    """Ids and a related name the plan selects by that the request never gives are listed as left out."""
    made_up = [i for i in s.intent.entity_ids if not says(s.text, i)]
    if made_up:
        s.left_out.append(f"the plan targets {', '.join(made_up[:10])}, which the request does not name")
    name = s.intent.related_name.strip()
    if name and not says(s.text, name):
        s.left_out.append(
            f"the plan selects through {s.intent.related_class} {name!r}, which the request does not name"
        )


def drop_non_names(s: Selection) -> None:
    """A related "name" no related entity has is a value of some other property ("orders of suppliers
    in France" planned with the supplier named "France"): it selects nothing, so it goes, and the
    request's names are then fitted into the selection as they are stored."""
    name = s.intent.related_name.strip()
    if name and s.scope.related_name_entities == 0:
        s.dropped_name = (s.intent.related_class, name)
        s.update(related_name="")


def restore_unreplaced_name(s: Selection) -> None:
    """A dropped related name that nothing replaced stays: resolution then says no such entity exists."""
    if s.dropped_name is None:
        return
    cls, name = s.dropped_name
    if s.intent.related_class == cls and not s.intent.related_name and not s.intent.related_filters:
        s.update(related_name=name)
    else:
        s.added.insert(0, f"Dropped the {cls} name {name!r}: no {cls} is named so.")


def fit_parameters(s: Selection) -> None:
    """A value to write that the plan put in a condition ("reschedule ..., due date: 2031-03-31" planned
    with due_date = 2031-03-31 as a filter and another date as the parameter) is moved to the parameter;
    a parameter value the request does not state is left out (it would write something nobody asked)."""
    action = s.ontology.require_action(s.intent.entity_type, s.intent.action_name)
    for effect in action.effects:
        value = s.intent.parameters.get(effect.param) if effect.param else None
        if value is None or stated_value(s.request, value):
            continue
        misplaced = [
            f
            for f in s.intent.filters
            if f.property == effect.set and f.op == "eq" and stated_value(s.request, f.value)
        ]
        if len(misplaced) == 1:
            s.update(
                parameters={**s.intent.parameters, effect.param: misplaced[0].value},
                filters=[f for f in s.intent.filters if f is not misplaced[0]],
            )
            s.added.append(
                f"Took {effect.param} = {json.dumps(misplaced[0].value, default=str)} as the value "
                "to write: the request states it, and the plan had it as a condition."
            )
    for name, value in s.intent.parameters.items():
        if not stated_value(s.request, value):
            s.left_out.append(f"the value {name} = {json.dumps(value, default=str)}, which the request does not state")


def drop_written_values(s: Selection) -> None:
    """A condition that restates a parameter's value on the property the action writes it to ("reschedule
    INV-1, due date: 2031-01-15" planned with due_date = 2031-01-15) is the effect, not the targets."""
    action = s.ontology.require_action(s.intent.entity_type, s.intent.action_name)
    written = {(e.set, words(s.intent.parameters.get(e.param))) for e in action.effects if e.param}
    kept = [f for f in s.intent.filters if (f.property, words(f.value)) not in written]
    for f in s.intent.filters:
        if f not in kept:
            s.added.append(
                f"Dropped the condition {filters_text([f])}: it is what {s.intent.action_name} "
                "writes, not which entities it changes."
            )
    s.update(filters=kept)


def drop_misplaced_values(s: Selection) -> None:
    """A condition on a category of the targets with a value that category never holds, which a related
    class's category the request speaks of does ("invoices of purchase orders whose status is approved"
    planned with the invoice's status = approved): it selects nothing here, and goes where it belongs."""
    related_values = {words(p.value) for p in s.scope.held if s.related(p.class_name) and not s.is_name(p)}
    kept = []
    for f in s.intent.filters:
        stored = {words(v) for v in s.scope.categories.get(f.property, [])}
        values = f.value if isinstance(f.value, list) else [f.value]
        if (
            stored
            and f.op in ("eq", "in")
            and all(words(v) not in stored and words(v) in related_values for v in values)
        ):
            s.added.append(
                f"Dropped the condition {filters_text([f])}: no {s.intent.entity_type} has "
                f"that {f.property}; a related entity does."
            )
        else:
            kept.append(f)
    s.update(filters=kept)


def check_negation(s: Selection) -> None:
    """A selection excludes only through a "ne" filter: "every order except Acme's" planned as Acme's
    orders, or as all of them, is the opposite of, or more than, what was asked. What the request
    excludes must not be what the selection selects by."""
    if not s.negated:
        return
    if _exclude_related(s):
        return
    if not any(f.op == "ne" for f in [*s.intent.filters, *s.intent.related_filters]):
        s.left_out.append(f"the exclusion the request states ({s.negation!r}): the selection excludes nothing")
    excluded = words(s.excluded)
    inverted = {p.mention for p in s.scope.held if says(excluded, p.mention) and s.uses(p)}
    inverted |= {
        str(v)
        for f in s.intent.filters
        if f.op in ("eq", "in")
        for v in (f.value if isinstance(f.value, list) else [f.value])
        if isinstance(v, str) and says(excluded, v)
    }
    s.left_out += [f"{m!r}: the request excludes it and the selection selects by it" for m in sorted(inverted)]


def _exclude_related(s: Selection) -> bool:
    """ "Every approved order except those of Acme": one related entity named after the exclusion, which
    the selection can leave out (the targets related to none of it), when the plan chose by nothing
    else than filters (or by that very entity, the wrong way round)."""
    excluded = words(s.excluded)
    named = {
        (p.class_name, p.value)
        for p in s.scope.held
        if says(excluded, p.mention) and s.related(p.class_name) and s.is_name(p)
    }
    intent = s.intent
    if len(named) != 1 or intent.entity_ids or intent.related_filters or intent.related_excluded:
        return False
    cls, value = next(iter(named))
    if intent.related_class not in ("", cls) or (
        intent.related_name and words(intent.related_name) not in (words(value),)
    ):
        return False
    if any(
        says(excluded, str(v))
        for f in intent.filters
        if f.op in ("eq", "in")
        for v in (f.value if isinstance(f.value, list) else [f.value])
    ):
        return False  # a condition the request excludes is selected by: not this plan's to fix
    s.update(related_class=cls, related_name=value, related_excluded=True)
    s.added.append(f"Excluded the {intent.entity_type} entities of {cls} {value!r}: the request says {s.negation!r}.")
    return True
