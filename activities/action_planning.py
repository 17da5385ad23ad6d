"""The action path's LLM calls: the router's QUERY / ACTION / ANSWER intent, and
the action planner's structured intent (the action, its parameters' values, its targets by id, related
entity or property filters), validated against the ontology's names and types (one repair round)."""

from __future__ import annotations

import json
from typing import Any

import structlog
from temporalio import activity

from backends.llm import ChatModel
from confidence_core.action_values import check_filters, check_parameters
from confidence_core.ontology import Ontology, UnknownName
from contracts.action_path import FILTER_OPS, ActionIntent, ActionPlanningOutput
from contracts.names import Activities
from contracts.routing import Intent, RouteInput, RouteOutput
from service.prompts import PromptTemplates

log = structlog.get_logger(__name__)


def checked_intent(ontology: Ontology, intent: ActionIntent) -> tuple[ActionIntent, list[str]]:
    """The intent with its parameters and filter values coerced to their declared types, and why it
    cannot be executed as it stands ([] when it can). Runs before any dry run."""
    try:
        action = ontology.require_action(intent.entity_type, intent.action_name)
    except UnknownName as exc:
        return intent, [str(exc)]
    parameters, problems = check_parameters(intent.action_name, action, intent.parameters)
    filters, filter_problems = check_filters(ontology, intent.entity_type, intent.filters)
    problems += filter_problems
    if not intent.entity_ids:  # ids name the targets themselves; otherwise a related entity or filters do
        if intent.related_class:
            if intent.related_class not in ontology.classes:
                problems.append(f"unknown class {intent.related_class!r}")
            elif not any({r.from_, r.to} == {intent.entity_type, intent.related_class}
                         for r in ontology.relationships_of(intent.entity_type)):
                problems.append(f"{intent.entity_type} is not related to {intent.related_class}")
            elif not intent.related_name.strip():
                problems.append(f"related_class {intent.related_class} needs the related entity's related_name")
        elif not intent.filters:
            problems.append("name the entities: entity_ids, or related_class and related_name, or filters")
    return intent.model_copy(update={"parameters": parameters, "filters": filters}), problems


def intent_problems(ontology: Ontology, intent: ActionIntent) -> list[str]:
    """Why an action intent cannot be executed as it stands ([] when it can)."""
    return checked_intent(ontology, intent)[1]


JSON_TYPES = {"string": "string", "date": "string", "integer": "integer", "float": "number", "boolean": "boolean"}


def planner_schema(ontology: Ontology) -> dict[str, Any]:
    """The action planner's JSON schema: every name offered is one the ontology declares."""
    kinds: dict[str, set[str]] = {}
    for actions in ontology.actions.values():
        for action in actions.values():
            for name, kind in action.parameters.items():
                kinds.setdefault(name, set()).add(kind)
    parameters = {name: {"type": JSON_TYPES[next(iter(k))]} if len(k) == 1 else {} for name, k in sorted(kinds.items())}
    properties = sorted({p for cls in ontology.actions for p in ontology.classes[cls].properties})
    filter_item = {"type": "object", "properties": {
        "property": {"enum": properties}, "op": {"enum": list(FILTER_OPS)},
        "value": {"type": ["string", "number", "boolean", "array"]}}, "required": ["property", "op", "value"]}
    return {"type": "object", "properties": {
        "entity_type": {"enum": sorted(ontology.actions)},
        "action_name": {"enum": sorted({a for acts in ontology.actions.values() for a in acts})},
        "entity_ids": {"type": "array", "items": {"type": "string"}},
        "related_class": {"enum": ["", *sorted(ontology.classes)]},
        "related_name": {"type": "string"},
        "filters": {"type": "array", "items": filter_item},
        "parameters": {"type": "object", "properties": parameters, "additionalProperties": False},
    }, "required": ["entity_type", "action_name", "entity_ids", "related_class", "related_name", "filters",
                    "parameters"]}


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


class ActionPlanningActivities:
    def __init__(self, llm: ChatModel, ontology: Ontology | None, prompts: PromptTemplates) -> None:
        self.llm = llm
        self.ontology = ontology
        self.prompts = prompts

    def _actions_text(self) -> str:
        assert self.ontology is not None
        return "\n".join(f"- {cls}: " + "; ".join(f"{name} ({a.description})" for name, a in actions.items())
                         for cls, actions in self.ontology.actions.items())

    @activity.defn(name=Activities.ROUTE)
    async def route(self, request: RouteInput) -> RouteOutput:
        """QUERY, ACTION or ANSWER. Without actions on this worker there is nothing to route: QUERY."""
        if self.ontology is None or not self.ontology.actions:
            return RouteOutput(intent=Intent.QUERY, reasoning="no actions are configured")
        schema = {"type": "object", "properties": {"intent": {"enum": [i.value for i in Intent]}},
                  "required": ["intent"]}
        completion = await self.llm.chat([
            {"role": "system", "content": self.prompts.render("router_system", actions=self._actions_text())},
            {"role": "user", "content": self.prompts.render("router_user", question=request.question)},
        ], json_schema=schema, max_tokens=20)
        try:
            return RouteOutput(intent=Intent(json.loads(completion.text)["intent"].strip().upper()),
                               reasoning="classified by the router")
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError, ValueError):
            # Read-only is the safe reading of an unclear answer: a mutation needs a clear ACTION.
            log.warning("route_unusable", text=completion.text[:200])
            return RouteOutput(intent=Intent.QUERY, reasoning="the router's answer was unusable; read-only")

    @activity.defn(name=Activities.PLAN_ACTION)
    async def plan_action(self, request: RouteInput) -> ActionPlanningOutput:
        if self.ontology is None or not self.ontology.actions:
            return ActionPlanningOutput(error="No actions are configured on this service.")
        ontology = self.ontology
        schema = planner_schema(ontology)
        relationships = "; ".join(f"({r.from_})-[{r.type}]->({r.to})" for r in ontology.relationships)
        messages = [
            {"role": "system", "content": self.prompts.render(
                "action_planner_system", actions=actions_catalogue(ontology), relationships=relationships)},
            {"role": "user", "content": self.prompts.render("action_planner_user", question=request.question)},
        ]
        problems: list[str] = []
        for _ in (1, 2):
            completion = await self.llm.chat(messages, json_schema=schema, max_tokens=600)
            try:
                intent, problems = checked_intent(ontology, ActionIntent.model_validate_json(completion.text))
            except ValueError as exc:
                problems = [f"not the JSON asked for ({str(exc).splitlines()[0]})"]
            if not problems:
                definition = ontology.require_action(intent.entity_type, intent.action_name)
                return ActionPlanningOutput(intent=intent, irreversible=definition.irreversible)
            log.warning("action_plan_rejected", problems=problems)
            messages += [{"role": "assistant", "content": completion.text},
                         {"role": "user", "content": self.prompts.render(
                             "action_planner_repair", problems="; ".join(problems))}]
        return ActionPlanningOutput(error="Could not tell what to change: " + "; ".join(problems))
