"""The planned selection while the scope check fits it to its request: the intent as changed so far, what was
added to it and what is left out, and what it uses (a name, a number, a filter's value). The fitting steps
(actions/scope_plan_checks.py, scope_names.py, scope_conditions.py) each take it and change it in turn."""

from __future__ import annotations

import re
from typing import Any

from actions.ontology import Ontology
from actions.request_scope import HeldName, RequestScope
from actions.scope_stated import stated_exclusion
from actions.scope_words import words
from contracts.action_path import ActionIntent, PropertyFilter


class Selection:
    """The intent being fitted to `request`, with what the graph found about the request's words."""

    def __init__(self, ontology: Ontology, intent: ActionIntent, request: str, scope: RequestScope) -> None:
        self.ontology = ontology
        self.intent = intent
        self.request = request
        self.scope = scope
        self.text = words(request)
        self.negation, self.excluded = stated_exclusion(request, ontology, intent.entity_type)
        self.negated = bool(self.negation)
        self.dropped_name: tuple[str, str] | None = None
        self.added: list[str] = []  # what was added to (or dropped from) the selection, and why
        self.left_out: list[str] = []  # what the request states and the selection ignores

    def related(self, class_name: str) -> bool:
        return (
            any(
                {r.from_, r.to} == {self.intent.entity_type, class_name}
                for r in self.ontology.relationships_of(self.intent.entity_type)
            )
            and class_name != self.intent.entity_type
        )

    def is_name(self, place: HeldName) -> bool:
        """Stored as an entity's key or display name (not as one of its other properties)?"""
        cls = self.ontology.classes[place.class_name]
        return place.property in (cls.key, cls.display)

    def update(self, **changes: Any) -> None:
        self.intent = self.intent.model_copy(update=changes)

    def uses(self, place: HeldName) -> bool:
        """Does the selection use this name (as a target's id or filter, the related entity or its filter, or
        the action's own account)?"""
        intent = self.intent
        cls = self.ontology.classes[place.class_name]
        own = {words(place.mention), words(place.value), words(place.key)} - {""}
        if place.class_name == intent.entity_type:
            if place.property in (cls.key, cls.display) and any(words(i) in own for i in intent.entity_ids):
                return True
            return filter_holds(intent.filters, place.property, place.value)
        if place.class_name == intent.related_class:
            name = words(intent.related_name)  # excluded or not: the name is used either way
            if place.property in (cls.key, cls.display) and name and (name in own or any(name in o for o in own)):
                return True
            return filter_holds(intent.related_filters, place.property, place.value)
        action = self.ontology.require_action(intent.entity_type, intent.action_name)
        if action.account and place.class_name == action.account.class_ and place.key == action.account.id:
            return True  # the action's own account ("pay them from the operating account")
        return False

    def in_parameters(self, mention: str) -> bool:
        return any(words(mention) in words(v) for v in self.intent.parameters.values())


def value_texts(intent: ActionIntent) -> list[str]:
    """Every value the intent selects or writes with, as text (numbers also without a trailing .0)."""
    values: list[Any] = [*intent.parameters.values(), intent.related_name, *intent.entity_ids]
    for f in [*intent.filters, *intent.related_filters]:
        values += f.value if isinstance(f.value, list) else [f.value]
    texts = []
    for v in values:
        texts.append(str(v))
        if isinstance(v, float) and v.is_integer():
            texts.append(str(int(v)))
    return texts


def number_used(number: str, intent: ActionIntent) -> bool:
    """Does some value of the intent hold the number (5000 in a filter's 5000.0, 2025 in a date)?"""
    for text in value_texts(intent):
        plain = re.sub(r"(?<=\d)[,_](?=\d{3})", "", text)
        if re.search(rf"(?<![\d.]){re.escape(number)}(?!\d)", plain):
            return True
    return False


def filter_holds(filters: list[PropertyFilter], prop: str, value: Any) -> bool:
    """Is there a filter on `prop` that names `value` (eq, ne or in: the value is used, in whichever sense)?"""
    for f in filters:
        values = f.value if isinstance(f.value, list) else [f.value]
        if f.property == prop and any(words(v) == words(value) for v in values):
            return True
    return False
