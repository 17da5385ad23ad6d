"""The scope check's step over the names the request gives: each one the graph holds that the selection does
not use is added to it when it can narrow the selection one way only (the targets' own class, or one related
class), and listed as left out otherwise; a name the graph does not hold as written is listed too."""

from __future__ import annotations

from actions.ontology import Ontology
from actions.request_scope import HeldName
from actions.scope_selection import Selection, value_texts
from actions.scope_words import names_class, says, words
from contracts.action_path import PropertyFilter


def fit_names(s: Selection) -> None:
    by_mention: dict[str, list[HeldName]] = {}
    for place in s.scope.held:
        by_mention.setdefault(place.mention, []).append(place)
    for mention, places in by_mention.items():
        if any(s.uses(p) for p in places) or s.in_parameters(mention):
            continue
        ways = _ways(s, places)
        distinct = {(p.class_name, p.property) for p in ways}
        if len(distinct) == 1 and not s.negated and _add_name(s, ways[0]):
            continue
        if not ways:
            where = " or ".join(sorted({f"{p.class_name}" for p in places}))
            s.left_out.append(f"{mention!r} ({where}, not related to {s.intent.entity_type})")
        elif len(distinct) > 1:
            s.left_out.append(
                f"{mention!r} (could be " + " or ".join(sorted({f"{p.class_name}.{p.property}" for p in ways})) + ")"
            )
        else:
            s.left_out.append(_place_text(s.ontology, ways[0]))
    held = [words(h.mention) for h in s.scope.held]
    for mention in s.scope.unheld:
        if any(says(words(mention), h) for h in held):
            continue  # "Hold PO-1": a capitalised verb before a name found on its own
        used = [words(mention) in words(t) for t in value_texts(s.intent)]
        if not any(used) and not s.in_parameters(mention):
            s.left_out.append(f"{mention!r}, which the graph does not hold as written")


def _ways(s: Selection, places: list[HeldName]) -> list[HeldName]:
    """The places a name could narrow the selection through: the targets' own class or a related one.
    Several: those of a class the request speaks of ("suppliers in Y" when Y is also a warehouse's)."""
    usable = [p for p in places if p.class_name == s.intent.entity_type or s.related(p.class_name)]
    if len({(p.class_name, p.property) for p in usable}) > 1:
        spoken = [p for p in usable if names_class(s.text, p.class_name)]
        usable = spoken or usable
    return usable


def _add_name(s: Selection, place: HeldName) -> bool:
    """Use the name in the selection, if the intent has room for it without dropping anything."""
    intent = s.intent
    cls = s.ontology.classes[place.class_name]
    is_name = place.property in (cls.key, cls.display)
    if place.class_name == intent.entity_type:
        if is_name and place.key and (intent.entity_ids or not (intent.related_class or intent.filters)):
            s.update(entity_ids=[*intent.entity_ids, place.key])
        elif not is_name and not any(f.property == place.property for f in intent.filters):
            s.update(filters=[*intent.filters, PropertyFilter(property=place.property, value=place.value)])
        else:
            return False
    elif intent.entity_ids or (intent.related_class not in ("", place.class_name) and not _class_is_free(s)):
        return False
    elif is_name and not intent.related_name.strip():
        s.update(related_class=place.class_name, related_name=place.value)
    elif not is_name and not any(f.property == place.property for f in intent.related_filters):
        s.update(
            related_class=place.class_name,
            related_filters=[*intent.related_filters, PropertyFilter(property=place.property, value=place.value)],
        )
    else:
        return False
    s.added.append(
        f"Added {_place_text(s.ontology, place)} to the selection: the request names it and the plan had left it out."
    )
    return True


def _class_is_free(s: Selection) -> bool:
    """The plan's related class chose nothing but a name no entity of it has (dropped): another class's
    entity of that name may take its place."""
    return s.dropped_name is not None and not s.intent.related_name and not s.intent.related_filters


def _place_text(ontology: Ontology, place: HeldName) -> str:
    cls = ontology.classes[place.class_name]
    return (
        f"{place.class_name} {place.value!r}"
        if place.property in (cls.key, cls.display)
        else f"{place.class_name} with {place.property} {place.value!r}"
    )
