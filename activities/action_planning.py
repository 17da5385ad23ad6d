"""The action path's LLM calls: the router's QUERY / ACTION / ANSWER intent, and
the action planner's structured intent, validated against the ontology (one repair round)."""

from __future__ import annotations

import json

import structlog
from temporalio import activity

from backends.llm import ChatModel
from confidence_core.ontology import Ontology, UnknownName
from contracts.action_path import ActionIntent, ActionPlanningOutput
from contracts.names import Activities
from contracts.routing import Intent, RouteInput, RouteOutput
from service.prompts import PromptTemplates

log = structlog.get_logger(__name__)


def intent_problems(ontology: Ontology, intent: ActionIntent) -> list[str]:
    """Why an action intent cannot be executed as it stands ([] when it can)."""
    try:
        ontology.require_action(intent.entity_type, intent.action_name)
    except UnknownName as exc:
        return [str(exc)]
    if intent.entity_ids:
        return []
    if not (intent.related_class and intent.related_name.strip()):
        return ["name the entities: entity_ids, or related_class and related_name"]
    if intent.related_class not in ontology.classes:
        return [f"unknown class {intent.related_class!r}"]
    if not any({r.from_, r.to} == {intent.entity_type, intent.related_class}
               for r in ontology.relationships_of(intent.entity_type)):
        return [f"{intent.entity_type} is not related to {intent.related_class}"]
    return []


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
        classes = sorted(ontology.actions)
        schema = {"type": "object", "properties": {
            "entity_type": {"enum": classes},
            "action_name": {"enum": sorted({a for acts in ontology.actions.values() for a in acts})},
            "entity_ids": {"type": "array", "items": {"type": "string"}},
            "related_class": {"enum": ["", *sorted(ontology.classes)]},
            "related_name": {"type": "string"},
        }, "required": ["entity_type", "action_name", "entity_ids", "related_class", "related_name"]}
        relationships = "; ".join(f"({r.from_})-[{r.type}]->({r.to})" for r in ontology.relationships)
        messages = [
            {"role": "system", "content": self.prompts.render(
                "action_planner_system", actions=self._actions_text(), relationships=relationships)},
            {"role": "user", "content": self.prompts.render("action_planner_user", question=request.question)},
        ]
        problems: list[str] = []
        for _ in (1, 2):
            completion = await self.llm.chat(messages, json_schema=schema, max_tokens=400)
            try:
                intent = ActionIntent.model_validate_json(completion.text)
                problems = intent_problems(ontology, intent)
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
