"""The domain ontology: classes with typed properties and relationships, from YAML.

Identifiers in Cypher (labels, relationship types, property keys) cannot be query parameters, so the
knowledge-graph tools accept a name only if the ontology declares it; every value is a parameter.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, Field, model_validator

PropertyType = Literal["string", "integer", "float", "boolean", "date"]
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")


class OntologyClass(BaseModel):
    description: str = ""
    key: str
    display: str
    properties: dict[str, PropertyType]

    @model_validator(mode="after")
    def _key_and_display_are_properties(self) -> OntologyClass:
        for name in (self.key, self.display):
            if name not in self.properties:
                raise ValueError(f"{name!r} is not one of the class's properties")
        return self


class OntologyRelationship(BaseModel):
    type: str
    from_: str = Field(alias="from")
    to: str
    description: str = ""


class Precondition(BaseModel):
    """Either a property comparison (property, op, value) or a funds check (funds: the entity's amount
    property that the action's account balance must cover)."""

    property: str = ""
    op: Literal["eq", "ne", "in", "lt", "le", "gt", "ge"] = "eq"
    value: Any = None
    funds: str = ""
    message: str


class Effect(BaseModel):
    """Set a property to a fixed value or to one of the action's parameters (`param`), or debit the
    action's account by the entity's amount property."""

    set: str = ""
    value: Any = None
    param: str = ""
    debit: str = ""


class AccountRef(BaseModel):
    class_: str = Field(alias="class")
    id: str


class ActionDefinition(BaseModel):
    description: str = ""
    # Values the request supplies (a reason, a date, an amount), every one required: an effect writes it
    # into the graph, and a missing value would silently remove the property it sets.
    parameters: dict[str, PropertyType] = Field(default_factory=dict)
    preconditions: list[Precondition] = Field(default_factory=list)
    effects: list[Effect]
    inverse: str | None = None
    irreversible: bool = False
    account: AccountRef | None = None

    @property
    def cannot_be_undone(self) -> bool:
        """Declared irreversible, or declaring no inverse: either way nothing can take it back, so a person
        approves it first (an omitted inverse must not make an action look safe)."""
        return self.irreversible or not self.inverse


class Ontology(BaseModel):
    name: str
    classes: dict[str, OntologyClass]
    relationships: list[OntologyRelationship] = Field(default_factory=list)
    actions: dict[str, dict[str, ActionDefinition]] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _names_are_safe_and_consistent(self) -> Ontology:
        names = [
            *self.classes,
            *(r.type for r in self.relationships),
            *(p for c in self.classes.values() for p in c.properties),
        ]
        bad = [n for n in names if not IDENTIFIER.match(n)]
        if bad:
            raise ValueError(f"not usable as Cypher identifiers: {', '.join(bad)}")
        for r in self.relationships:
            for end in (r.from_, r.to):
                if end not in self.classes:
                    raise ValueError(f"relationship {r.type} refers to unknown class {end}")
        for class_name, actions in self.actions.items():
            for action_name, action in actions.items():
                where = f"action {class_name}.{action_name}"
                if class_name not in self.classes or not IDENTIFIER.match(action_name):
                    raise ValueError(f"{where}: unknown class or unusable name")
                props = [
                    *(p.property or p.funds for p in action.preconditions),
                    *(e.set or e.debit for e in action.effects),
                ]
                bad = [p for p in [*props, *action.parameters] if not IDENTIFIER.match(p)]
                if bad:
                    raise ValueError(f"{where}: unusable property or parameter names {bad}")
                for effect in action.effects:
                    _check_effect(where, effect, action, self.classes[class_name])
                needs_account = any(p.funds for p in action.preconditions) or any(e.debit for e in action.effects)
                if needs_account and (action.account is None or action.account.class_ not in self.classes):
                    raise ValueError(f"{where}: funds checks and debits need an account of a known class")
                if action.inverse and action.inverse not in actions:
                    raise ValueError(f"{where}: inverse {action.inverse} is not an action of {class_name}")
        return self

    @classmethod
    def load(cls, path: Path) -> Ontology:
        return cls.model_validate(yaml.safe_load(path.read_text()))

    def require_class(self, name: str) -> OntologyClass:
        if name not in self.classes:
            raise UnknownName(f"unknown class {name!r}; known classes: {', '.join(self.classes)}")
        return self.classes[name]

    def require_property(self, class_name: str, prop: str) -> str:
        if prop not in self.require_class(class_name).properties:
            raise UnknownName(
                f"class {class_name} has no property {prop!r}; it has {', '.join(self.classes[class_name].properties)}"
            )
        return prop

    def require_action(self, class_name: str, action_name: str) -> ActionDefinition:
        self.require_class(class_name)
        actions = self.actions.get(class_name, {})
        if action_name not in actions:
            raise UnknownName(
                f"{class_name} has no action {action_name!r}; its actions: {', '.join(actions) or 'none'}"
            )
        return actions[action_name]

    def relationships_of(self, class_name: str) -> list[OntologyRelationship]:
        return [r for r in self.relationships if class_name in (r.from_, r.to)]


def _check_effect(where: str, effect: Effect, action: ActionDefinition, cls: OntologyClass) -> None:
    if bool(effect.set) == bool(effect.debit):
        raise ValueError(f"{where}: an effect either sets a property or debits the account")
    if not effect.param:
        return
    if effect.debit or effect.value is not None:
        raise ValueError(f"{where}: an effect sets {effect.set} from a parameter or to a value, not both")
    if effect.param not in action.parameters:
        raise ValueError(f"{where}: effect on {effect.set} uses undeclared parameter {effect.param!r}")
    declared, given = cls.properties.get(effect.set), action.parameters[effect.param]
    if declared and declared != given and (declared, given) != ("float", "integer"):
        raise ValueError(f"{where}: parameter {effect.param} is {given}, property {effect.set} is {declared}")


class UnknownName(ValueError):
    """A class or property name the ontology does not declare (never interpolated into Cypher)."""
