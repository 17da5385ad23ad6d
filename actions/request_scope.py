"""What the graph says about an action request's words: which names it stores and where, and the stored values
of the targets' categories. backends/action_scope.py looks them up; actions/scope.py holds the plan against
them."""

from __future__ import annotations

from dataclasses import dataclass, field


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
