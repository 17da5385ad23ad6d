"""What an action request states about its targets, read from its words against the ontology and the graph's
findings: the category values and flags it selects by, the numbers and dates it gives, whether it states a
value, and what it excludes. Pure: nothing here knows a domain."""

from __future__ import annotations

import re
from typing import Any

from actions.ontology import Ontology
from actions.request_scope import RequestScope
from actions.scope_words import class_words, says, words
from contracts.action_path import ActionIntent

# Words that turn a stated thing into its opposite ("all orders except Acme's"): with any of them in the
# request nothing is added to a selection, only reported.
_NEGATION = re.compile(
    r"\b(not|no|none|except|excluding|exclude|besides|other than|without|but|never|"
    r"apart from|aside from|instead of)\b|n't\b",
    re.IGNORECASE,
)
ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_NUMBER = re.compile(r"(?<![\w.\-/])\d{1,3}(?:[,_ ]\d{3})+(?:\.\d+)?(?![\w\-/])|(?<![\w.\-/])\d+(?:\.\d+)?(?![\w\-/])")
_GOAL = re.compile(r"\b(to be|to|as|into|become|becomes|set to|mark as|marked as)\s+$")
_MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)


def stated_categories(
    request: str, scope: RequestScope, ontology: Ontology, intent: ActionIntent
) -> dict[str, list[str]]:
    """Per category property of the targets' class, the stored values the request states as words, leaving
    out the names and parameter values it gives (a supplier called "Approved Supplies", a reason) and what
    the action itself writes ("approve the submitted orders" sets status "approved": that is the effect,
    not the selection)."""
    action = ontology.require_action(intent.entity_type, intent.action_name)
    effects = {(e.set, words(e.value)) for e in action.effects if e.set and e.value is not None}
    written = {e.set for e in action.effects if e.param}  # a parameter's value ("reason: audit") is not a condition
    text = words(request)
    for value in intent.parameters.values():
        text = text.replace(words(value), " ")
    text = _without_names(text, scope)
    stated: dict[str, list[str]] = {}
    for prop, values in scope.categories.items():
        if prop in written:
            continue
        found = [v for v in values if says(text, v) and (prop, words(v)) not in effects and not _goal(text, v)]
        if found:
            stated[prop] = found
    return stated


def _goal(text: str, value: str) -> bool:
    """Is the value stated as where the entities should end up ("submit them to be approved", "mark them as
    paid") rather than which they are? Every place the request states it must read so."""
    spots = [m.start() for m in re.finditer(rf"(?<![a-z0-9]){re.escape(words(value))}(?![a-z0-9])", text)]
    return bool(spots) and all(_GOAL.search(text[:i]) for i in spots)


def stated_flags(request: str, ontology: Ontology, intent: ActionIntent) -> dict[str, bool]:
    """Per boolean property of the targets' class that the request states ("unpaid", "not paid", "paid"),
    the value it states; an action's own effect ("mark them as paid" setting paid) is not a condition."""
    action = ontology.require_action(intent.entity_type, intent.action_name)
    effects = {(e.set, e.value) for e in action.effects if e.set}
    text = words(request)
    flags: dict[str, bool] = {}
    for prop, kind in ontology.classes[intent.entity_type].properties.items():
        name = class_words(prop)
        if kind != "boolean" or not name:
            continue
        if _goal(text, name):
            continue
        if any(says(text, f"{prefix}{name}") for prefix in ("un", "non", "not ", "not yet ", "non ")):
            value = False
        elif says(text, name):
            value = True
        else:
            continue
        if (prop, value) not in effects:
            flags[prop] = value
    return flags


def stated_exclusion(request: str, ontology: Ontology, class_name: str) -> tuple[str, str]:
    """The first word of the request that negates ("except", "not") and the words from it on, which the
    exclusion applies to; ("", "") when there is none. A negated flag ("not paid") is a value, not one."""
    flagless = _flag_phrases(request, ontology, class_name)
    negation = _NEGATION.search(flagless)
    return (negation.group(0), flagless[negation.start() :]) if negation else ("", "")


def _flag_phrases(request: str, ontology: Ontology, class_name: str) -> str:
    """The request without its "not paid" phrases: a negated flag is a value, not a negation of the rest."""
    text = words(request)
    for prop, kind in ontology.classes[class_name].properties.items():
        if kind == "boolean":
            text = re.sub(rf"\bnot (yet )?{re.escape(class_words(prop))}\b", " ", text)
    return text


def _without_names(text: str, scope: RequestScope) -> str:
    """`text` (already `words`) without the names the request gives."""
    for name in [*(h.mention for h in scope.held), *scope.unheld]:
        text = text.replace(words(name), " ")
    return text


def stated_numbers(request: str, scope: RequestScope) -> list[str]:
    """The numbers and ISO dates the request states outside its names and ids ("over 5,000", "before
    2025-03-01"), thousands separators removed."""
    text = request
    for name in sorted([*(h.mention for h in scope.held), *scope.unheld], key=len, reverse=True):
        text = re.sub(re.escape(name), " ", text, flags=re.IGNORECASE)
    dates = ISO_DATE.findall(text)
    text = ISO_DATE.sub(" ", text)
    return [*dates, *(re.sub(r"[,_ ]", "", n) for n in _NUMBER.findall(text))]


def stated_value(request: str, value: Any) -> bool:
    """Does the request state this value (of a parameter or a condition)? Text: its words; a number: its
    digits (thousands separators aside); an ISO date: as written, or its year and month's name; a boolean
    is read from words, and counts as stated."""
    if isinstance(value, bool) or value is None:
        return True
    if isinstance(value, int | float):
        return _number_used_in(request, value)
    text = str(value)
    if ISO_DATE.fullmatch(text):
        year, month, _ = text.split("-")
        return text in request or (
            year in request and _MONTHS[int(month) - 1] in request.lower() if 1 <= int(month) <= 12 else False
        )
    return says(words(request), text)


def _number_used_in(request: str, value: int | float) -> bool:
    plain = re.sub(r"(?<=\d)[,_ ](?=\d{3})", "", request)
    number = str(int(value)) if float(value).is_integer() else str(value)
    return re.search(rf"(?<![\d.]){re.escape(number)}(?![\d])", plain) is not None
