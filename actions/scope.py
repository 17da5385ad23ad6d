"""What an action request states about its targets, against what the planned selection uses.

An action that reaches more entities than were asked for is the worst failure of an agent that changes
data: "pay the approved orders of Northwind Traders" planned as "every approved order" pays twelve times
what was asked. So the planner's intent is held against the request itself:

- every name the request gives that the graph holds (a supplier, a country, an order's id), every value
  of the targets' own properties it states as a word ("approved", "unpaid"), every number and date it
  states, must be used by the target selection;
- what the intent leaves out is added when the request can mean it one way only and nothing in the
  request reads as a negation (a named supplier becomes the related entity, a stated status a filter);
- what is still not used is listed as left out: the targets' confidence is then held far below approval,
  and the approval card says first what was left out. So are ids and related entities the plan selects
  by that the request never names.

Pure: the graph look-ups that find the request's names and the targets' stored values are
backends/action_scope.py's. Nothing here knows a domain: every name comes from the ontology or the graph.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from actions.ontology import Ontology
from contracts.action_path import ActionIntent, PropertyFilter, filters_text


@dataclass(frozen=True)
class HeldName:
    """A name the request gives, stored exactly (case aside) in one property of one class's entities."""

    mention: str  # as the request writes it
    class_name: str
    property: str
    value: str  # as stored
    entities: int  # how many entities of the class store it there
    key: str = ""  # the entity's key, when exactly one stores it


@dataclass
class RequestScope:
    """What the graph says about the request's words."""

    held: list[HeldName] = field(default_factory=list)
    unheld: list[str] = field(default_factory=list)  # names the graph does not store exactly
    # Per string property of the targets' class (a category, not free text): its stored values.
    categories: dict[str, list[str]] = field(default_factory=dict)
    # Entities of the plan's related class whose key or name is (or contains) the plan's related name;
    # None when the plan names none. 0: the "name" is something else ("France", a country).
    related_name_entities: int | None = None


@dataclass
class FittedIntent:
    intent: ActionIntent
    added: list[str] = field(default_factory=list)  # what was added to (or dropped from) the selection, and why
    left_out: list[str] = field(default_factory=list)  # what the request states and the selection ignores


# Words that turn a stated thing into its opposite ("all orders except Acme's"): with any of them in the
# request nothing is added to a selection, only reported.
_NEGATION = re.compile(r"\b(not|no|none|except|excluding|exclude|besides|other than|without|but|never|"
                       r"apart from|aside from|instead of)\b|n't\b", re.IGNORECASE)
_ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_NUMBER = re.compile(r"(?<![\w.\-/])\d{1,3}(?:[,_ ]\d{3})+(?:\.\d+)?(?![\w\-/])|(?<![\w.\-/])\d+(?:\.\d+)?(?![\w\-/])")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")


def words(text: Any) -> str:
    """Lower-case words separated by single spaces (`_`, `-` and punctuation are separators)."""
    return " ".join(re.findall(r"[a-z0-9]+(?:\.[0-9]+)?", str(text).lower().replace("_", " ")))


def says(text: str, phrase: str) -> bool:
    """Does `text` (already `words`) contain `phrase`'s words as whole words?"""
    wanted = words(phrase)
    return bool(wanted) and re.search(rf"(?<![a-z0-9]){re.escape(wanted)}(?![a-z0-9])", text) is not None


def _class_words(name: str) -> str:
    return words(_CAMEL.sub(" ", name))


def names_class(text: str, class_name: str) -> bool:
    """Does the request speak of the class ("suppliers", "purchase order", "warehouses", "categories")?"""
    wanted = _class_words(class_name)
    forms = {wanted, wanted + "s", wanted + "es"} | ({wanted[:-1] + "ies"} if wanted.endswith("y") else set())
    return any(says(text, form) for form in forms)


def stated_categories(request: str, scope: RequestScope, ontology: Ontology,
                      intent: ActionIntent) -> dict[str, list[str]]:
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


_GOAL = re.compile(r"\b(to be|to|as|into|become|becomes|set to|mark as|marked as)\s+$")


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
        name = _class_words(prop)
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


def _flag_phrases(request: str, ontology: Ontology, class_name: str) -> str:
    """The request without its "not paid" phrases: a negated flag is a value, not a negation of the rest."""
    text = words(request)
    for prop, kind in ontology.classes[class_name].properties.items():
        if kind == "boolean":
            text = re.sub(rf"\bnot (yet )?{re.escape(_class_words(prop))}\b", " ", text)
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
    dates = _ISO_DATE.findall(text)
    text = _ISO_DATE.sub(" ", text)
    return [*dates, *(re.sub(r"[,_ ]", "", n) for n in _NUMBER.findall(text))]


def _value_texts(intent: ActionIntent) -> list[str]:
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


_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")


def stated_value(request: str, value: Any) -> bool:
    """Does the request state this value (of a parameter or a condition)? Text: its words; a number: its
    digits (thousands separators aside); an ISO date: as written, or its year and month's name; a boolean
    is read from words, and counts as stated."""
    if isinstance(value, bool) or value is None:
        return True
    if isinstance(value, int | float):
        return _number_used_in(request, value)
    text = str(value)
    if _ISO_DATE.fullmatch(text):
        year, month, _ = text.split("-")
        return text in request or (year in request and _MONTHS[int(month) - 1] in request.lower()
                                   if 1 <= int(month) <= 12 else False)
    return says(words(request), text)


def _number_used_in(request: str, value: int | float) -> bool:
    plain = re.sub(r"(?<=\d)[,_ ](?=\d{3})", "", request)
    number = str(int(value)) if float(value).is_integer() else str(value)
    return re.search(rf"(?<![\d.]){re.escape(number)}(?![\d])", plain) is not None


def _number_used(number: str, intent: ActionIntent) -> bool:
    """Does some value of the intent hold the number (5000 in a filter's 5000.0, 2025 in a date)?"""
    for text in _value_texts(intent):
        plain = re.sub(r"(?<=\d)[,_](?=\d{3})", "", text)
        if re.search(rf"(?<![\d.]){re.escape(number)}(?!\d)", plain):
            return True
    return False


def _filter_holds(filters: list[PropertyFilter], prop: str, value: Any) -> bool:
    """Is there a filter on `prop` that names `value` (eq, ne or in: the value is used, in whichever sense)?"""
    for f in filters:
        values = f.value if isinstance(f.value, list) else [f.value]
        if f.property == prop and any(words(v) == words(value) for v in values):
            return True
    return False


class _Fitter:
    def __init__(self, ontology: Ontology, intent: ActionIntent, request: str, scope: RequestScope) -> None:
        self.ontology = ontology
        self.intent = intent
        self.request = request
        self.scope = scope
        self.text = words(request)
        flagless = _flag_phrases(request, ontology, intent.entity_type)
        negation = _NEGATION.search(flagless)
        self.negation = negation.group(0) if negation else ""
        self.negated = bool(negation)
        self.excluded = flagless[negation.start():] if negation else ""  # what the exclusion applies to
        self.dropped_name: tuple[str, str] | None = None
        self.added: list[str] = []
        self.left_out: list[str] = []

    def related(self, class_name: str) -> bool:
        return any({r.from_, r.to} == {self.intent.entity_type, class_name}
                   for r in self.ontology.relationships_of(self.intent.entity_type)) and class_name != \
            self.intent.entity_type

    def is_name(self, place: HeldName) -> bool:
        """Stored as an entity's key or display name (not as one of its other properties)?"""
        cls = self.ontology.classes[place.class_name]
        return place.property in (cls.key, cls.display)

    def update(self, **changes: Any) -> None:
        self.intent = self.intent.model_copy(update=changes)

    # --- what the plan names that the request does not -------------------------------------------------
    def check_invented(self) -> None:
        made_up = [i for i in self.intent.entity_ids if not says(self.text, i)]
        if made_up:
            self.left_out.append(f"the plan targets {', '.join(made_up[:10])}, which the request does not name")
        name = self.intent.related_name.strip()
        if name and not says(self.text, name):
            self.left_out.append(f"the plan selects through {self.intent.related_class} {name!r}, which the "
                                 "request does not name")

    def drop_non_names(self) -> None:
        """A related "name" no related entity has is a value of some other property ("orders of suppliers
        in France" planned with the supplier named "France"): it selects nothing, so it goes, and the
        request's names are then fitted into the selection as they are stored."""
        name = self.intent.related_name.strip()
        if name and self.scope.related_name_entities == 0:
            self.dropped_name = (self.intent.related_class, name)
            self.update(related_name="")

    def restore_unreplaced_name(self) -> None:
        """A dropped related name that nothing replaced stays: resolution then says no such entity exists."""
        if self.dropped_name is None:
            return
        cls, name = self.dropped_name
        if self.intent.related_class == cls and not self.intent.related_name and not self.intent.related_filters:
            self.update(related_name=name)
        else:
            self.added.insert(0, f"Dropped the {cls} name {name!r}: no {cls} is named so.")

    def fit_parameters(self) -> None:
        """A value to write that the plan put in a condition ("reschedule ..., due date: 2031-03-31" planned
        with due_date = 2031-03-31 as a filter and another date as the parameter) is moved to the parameter;
        a parameter value the request does not state is left out (it would write something nobody asked)."""
        action = self.ontology.require_action(self.intent.entity_type, self.intent.action_name)
        for effect in action.effects:
            value = self.intent.parameters.get(effect.param) if effect.param else None
            if value is None or stated_value(self.request, value):
                continue
            misplaced = [f for f in self.intent.filters if f.property == effect.set and f.op == "eq"
                         and stated_value(self.request, f.value)]
            if len(misplaced) == 1:
                self.update(parameters={**self.intent.parameters, effect.param: misplaced[0].value},
                            filters=[f for f in self.intent.filters if f is not misplaced[0]])
                self.added.append(f"Took {effect.param} = {json.dumps(misplaced[0].value, default=str)} as the value "
                                  "to write: the request states it, and the plan had it as a condition.")
        for name, value in self.intent.parameters.items():
            if not stated_value(self.request, value):
                self.left_out.append(f"the value {name} = {json.dumps(value, default=str)}, which the request "
                                     "does not state")

    def drop_written_values(self) -> None:
        """A condition that restates a parameter's value on the property the action writes it to ("reschedule
        INV-1, due date: 2031-01-15" planned with due_date = 2031-01-15) is the effect, not the targets."""
        action = self.ontology.require_action(self.intent.entity_type, self.intent.action_name)
        written = {(e.set, words(self.intent.parameters.get(e.param))) for e in action.effects if e.param}
        kept = [f for f in self.intent.filters if (f.property, words(f.value)) not in written]
        for f in self.intent.filters:
            if f not in kept:
                self.added.append(f"Dropped the condition {filters_text([f])}: it is what {self.intent.action_name} "
                                  "writes, not which entities it changes.")
        self.update(filters=kept)

    def check_negation(self) -> None:
        """A selection excludes only through a "ne" filter: "every order except Acme's" planned as Acme's
        orders, or as all of them, is the opposite of, or more than, what was asked. What the request
        excludes must not be what the selection selects by."""
        if not self.negated:
            return
        if self.exclude_related():
            return
        if not any(f.op == "ne" for f in [*self.intent.filters, *self.intent.related_filters]):
            self.left_out.append(f"the exclusion the request states ({self.negation!r}): the selection excludes "
                                 "nothing")
        excluded = words(self.excluded)
        inverted = {p.mention for p in self.scope.held if says(excluded, p.mention) and self.uses(p)}
        inverted |= {str(v) for f in self.intent.filters if f.op in ("eq", "in")
                     for v in (f.value if isinstance(f.value, list) else [f.value])
                     if isinstance(v, str) and says(excluded, v)}
        self.left_out += [f"{m!r}: the request excludes it and the selection selects by it" for m in sorted(inverted)]

    def exclude_related(self) -> bool:
        """"Every approved order except those of Acme": one related entity named after the exclusion, which
        the selection can leave out (the targets related to none of it), when the plan chose by nothing
        else than filters (or by that very entity, the wrong way round)."""
        excluded = words(self.excluded)
        named = {(p.class_name, p.value) for p in self.scope.held
                 if says(excluded, p.mention) and self.related(p.class_name) and self.is_name(p)}
        intent = self.intent
        if len(named) != 1 or intent.entity_ids or intent.related_filters or intent.related_excluded:
            return False
        cls, value = next(iter(named))
        if intent.related_class not in ("", cls) or (intent.related_name and words(intent.related_name) not in (
                words(value),)):
            return False
        if any(says(excluded, str(v)) for f in intent.filters if f.op in ("eq", "in")
               for v in (f.value if isinstance(f.value, list) else [f.value])):
            return False  # a condition the request excludes is selected by: not this plan's to fix
        self.update(related_class=cls, related_name=value, related_excluded=True)
        self.added.append(f"Excluded the {intent.entity_type} entities of {cls} {value!r}: the request says "
                          f"{self.negation!r}.")
        return True

    def drop_misplaced_values(self) -> None:
        """A condition on a category of the targets with a value that category never holds, which a related
        class's category the request speaks of does ("invoices of purchase orders whose status is approved"
        planned with the invoice's status = approved): it selects nothing here, and goes where it belongs."""
        related_values = {words(p.value) for p in self.scope.held if self.related(p.class_name) and not self.is_name(p)}
        kept = []
        for f in self.intent.filters:
            stored = {words(v) for v in self.scope.categories.get(f.property, [])}
            values = f.value if isinstance(f.value, list) else [f.value]
            if stored and f.op in ("eq", "in") and all(words(v) not in stored and words(v) in related_values
                                                       for v in values):
                self.added.append(f"Dropped the condition {filters_text([f])}: no {self.intent.entity_type} has "
                                  f"that {f.property}; a related entity does.")
            else:
                kept.append(f)
        self.update(filters=kept)

    # --- the names the request gives -------------------------------------------------------------------
    def uses(self, place: HeldName) -> bool:
        intent = self.intent
        cls = self.ontology.classes[place.class_name]
        own = {words(place.mention), words(place.value), words(place.key)} - {""}
        if place.class_name == intent.entity_type:
            if place.property in (cls.key, cls.display) and any(words(i) in own for i in intent.entity_ids):
                return True
            return _filter_holds(intent.filters, place.property, place.value)
        if place.class_name == intent.related_class:
            name = words(intent.related_name)  # excluded or not: the name is used either way
            if place.property in (cls.key, cls.display) and name and (name in own or any(name in o for o in own)):
                return True
            return _filter_holds(intent.related_filters, place.property, place.value)
        action = self.ontology.require_action(intent.entity_type, intent.action_name)
        if action.account and place.class_name == action.account.class_ and place.key == action.account.id:
            return True  # the action's own account ("pay them from the operating account")
        return False

    def in_parameters(self, mention: str) -> bool:
        return any(words(mention) in words(v) for v in self.intent.parameters.values())

    def ways(self, places: list[HeldName]) -> list[HeldName]:
        """The places a name could narrow the selection through: the targets' own class or a related one.
        Several: those of a class the request speaks of ("suppliers in Y" when Y is also a warehouse's)."""
        usable = [p for p in places if p.class_name == self.intent.entity_type or self.related(p.class_name)]
        if len({(p.class_name, p.property) for p in usable}) > 1:
            spoken = [p for p in usable if names_class(self.text, p.class_name)]
            usable = spoken or usable
        return usable

    def add_name(self, place: HeldName) -> bool:
        """Use the name in the selection, if the intent has room for it without dropping anything."""
        intent = self.intent
        cls = self.ontology.classes[place.class_name]
        is_name = place.property in (cls.key, cls.display)
        if place.class_name == intent.entity_type:
            if is_name and place.key and (intent.entity_ids or not (intent.related_class or intent.filters)):
                self.update(entity_ids=[*intent.entity_ids, place.key])
            elif not is_name and not any(f.property == place.property for f in intent.filters):
                self.update(filters=[*intent.filters, PropertyFilter(property=place.property, value=place.value)])
            else:
                return False
        elif intent.entity_ids or (intent.related_class not in ("", place.class_name) and not self.class_is_free()):
            return False
        elif is_name and not intent.related_name.strip():
            self.update(related_class=place.class_name, related_name=place.value)
        elif not is_name and not any(f.property == place.property for f in intent.related_filters):
            self.update(related_class=place.class_name, related_filters=[
                *intent.related_filters, PropertyFilter(property=place.property, value=place.value)])
        else:
            return False
        self.added.append(f"Added {_place_text(self.ontology, place)} to the selection: the request names it and "
                          "the plan had left it out.")
        return True

    def class_is_free(self) -> bool:
        """The plan's related class chose nothing but a name no entity of it has (dropped): another class's
        entity of that name may take its place."""
        return self.dropped_name is not None and not self.intent.related_name and not self.intent.related_filters

    def fit_names(self) -> None:
        by_mention: dict[str, list[HeldName]] = {}
        for place in self.scope.held:
            by_mention.setdefault(place.mention, []).append(place)
        for mention, places in by_mention.items():
            if any(self.uses(p) for p in places) or self.in_parameters(mention):
                continue
            ways = self.ways(places)
            distinct = {(p.class_name, p.property) for p in ways}
            if len(distinct) == 1 and not self.negated and self.add_name(ways[0]):
                continue
            if not ways:
                where = " or ".join(sorted({f"{p.class_name}" for p in places}))
                self.left_out.append(f"{mention!r} ({where}, not related to {self.intent.entity_type})")
            elif len(distinct) > 1:
                self.left_out.append(f"{mention!r} (could be " + " or ".join(
                    sorted({f"{p.class_name}.{p.property}" for p in ways})) + ")")
            else:
                self.left_out.append(_place_text(self.ontology, ways[0]))
        held = [words(h.mention) for h in self.scope.held]
        for mention in self.scope.unheld:
            if any(says(words(mention), h) for h in held):
                continue  # "Hold PO-1": a capitalised verb before a name found on its own
            used = [words(mention) in words(t) for t in _value_texts(self.intent)]
            if not any(used) and not self.in_parameters(mention):
                self.left_out.append(f"{mention!r}, which the graph does not hold as written")

    # --- the values of the targets' own properties the request states ----------------------------------
    def by_stated_ids(self) -> bool:
        """Targets named by ids the request states: the words around them describe them (or say what they
        should become); they choose nothing the ids do not."""
        return bool(self.intent.entity_ids) and all(says(self.text, i) for i in self.intent.entity_ids)

    def fit_categories(self) -> None:
        if self.by_stated_ids():
            return
        excluded = words(self.excluded)
        for prop, values in stated_categories(self.request, self.scope, self.ontology, self.intent).items():
            selected = [v for v in values if not says(excluded, v)]
            inverted = [v for v in selected if any(f.op == "ne" and f.property == prop and words(f.value) == words(v)
                                                   for f in self.intent.filters)]
            self.left_out += [f"{prop} {v!r}: the request selects it and the plan excludes it" for v in inverted]
            if any(f.property == prop for f in self.intent.filters) or self.negated:
                missing = [v for v in values if not _filter_holds(self.intent.filters, prop, v)]
                self.left_out += [f"{prop} {v!r}" for v in missing]
                continue
            wanted = PropertyFilter(property=prop, op="in", value=values) if len(values) > 1 else \
                PropertyFilter(property=prop, value=values[0])
            self.update(filters=[*self.intent.filters, wanted])
            self.added.append(f"Added the condition {filters_text([wanted])}: the request states it and the plan "
                              "had left it out.")

    def fit_flags(self) -> None:
        if self.by_stated_ids():
            return
        for prop, value in stated_flags(self.request, self.ontology, self.intent).items():
            if any(f.property == prop for f in self.intent.filters):
                continue  # "unpaid" planned as paid = false or paid != true: either says it
            wanted = PropertyFilter(property=prop, value=value)
            self.update(filters=[*self.intent.filters, wanted])
            self.added.append(f"Added the condition {filters_text([wanted])}: the request states it and the plan "
                              "had left it out.")

    def check_numbers(self) -> None:
        for number in stated_numbers(self.request, self.scope):
            if not _number_used(number, self.intent):
                self.left_out.append(f"the {'date' if _ISO_DATE.fullmatch(number) else 'number'} {number}")


def _place_text(ontology: Ontology, place: HeldName) -> str:
    cls = ontology.classes[place.class_name]
    return f"{place.class_name} {place.value!r}" if place.property in (cls.key, cls.display) else \
        f"{place.class_name} with {place.property} {place.value!r}"


def fit_intent(ontology: Ontology, intent: ActionIntent, request: str, scope: RequestScope) -> FittedIntent:
    """The intent with what the request states one way only added, and what it still leaves out."""
    fitter = _Fitter(ontology, intent, request, scope)
    fitter.check_invented()
    fitter.drop_non_names()
    fitter.fit_parameters()
    fitter.drop_written_values()
    fitter.drop_misplaced_values()
    fitter.check_negation()
    fitter.fit_names()
    fitter.restore_unreplaced_name()
    fitter.fit_categories()
    fitter.fit_flags()
    fitter.check_numbers()
    return FittedIntent(intent=fitter.intent, added=fitter.added, left_out=fitter.left_out)
