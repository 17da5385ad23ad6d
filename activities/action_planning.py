"""The action path's LLM calls: the router's QUERY / ACTION / ANSWER intent, and
the action planner's structured intent (the action, its parameters' values, its targets by id, related
entity or property filters), validated against the ontology's names and types (one repair round)."""

from __future__ import annotations

import json

import structlog
from temporalio import activity
from temporalio.exceptions import ApplicationError

from actions.catalogue import about_actions, asks_for_change, catalogue_answer, is_question
from actions.intent import (
    NO_SELECTION,
    actions_catalogue,
    checked_intent,
    planner_schema,
    stated_in,
)
from actions.ontology import Ontology
from actions.scope import FittedIntent, fit_intent
from backends.action_scope import request_scope
from backends.graph_store import GraphQueryError, GraphStore
from backends.grounding import held_exactly
from backends.llm import ChatModel
from contracts.action_path import ActionIntent, ActionPlanningOutput, filters_text
from contracts.names import Activities
from contracts.routing import Intent, RouteInput, RouteOutput
from service.prompts import PromptTemplates

log = structlog.get_logger(__name__)


class ActionPlanningActivities:
    def __init__(
        self, llm: ChatModel, ontology: Ontology | None, prompts: PromptTemplates, graph: GraphStore | None = None
    ) -> None:
        self.llm = llm
        self.graph = graph
        self.ontology = ontology
        self.prompts = prompts

    def _actions_text(self) -> str:
        assert self.ontology is not None
        return "\n".join(
            f"- {cls}: " + "; ".join(f"{name} ({a.description})" for name, a in actions.items())
            for cls, actions in self.ontology.actions.items()
        )

    def _stated_filters_only(self, intent: ActionIntent, request: str) -> tuple[ActionIntent, list[str]]:
        """The intent without the filters the request never states, and a note naming each one dropped.
        Dropped rather than sent back: the local model keeps an invented condition when asked again, and
        a condition the request does not state would narrow the targets unseen; what is left is exactly
        what was asked, and goes through the dry run and the approval rules like any plan."""
        assert self.ontology is not None
        stated = [f for f in intent.filters if stated_in(self.ontology, intent.entity_type, f, request)]
        related = [
            f
            for f in intent.related_filters
            if intent.related_class and stated_in(self.ontology, intent.related_class, f, request)
        ]
        dropped = [f for f in [*intent.filters, *intent.related_filters] if f not in stated and f not in related]
        if dropped:
            log.warning("action_filters_dropped", filters=filters_text(dropped))
        notes = [f"Left out the condition {filters_text([f])}: the request does not state it." for f in dropped]
        return intent.model_copy(update={"filters": stated, "related_filters": related}), notes

    async def _fitted(self, intent: ActionIntent, request: str) -> FittedIntent:
        """The intent with what the request states one way only added to its selection, and what the
        selection still leaves out (actions/scope.py). Unchecked is not checked: a graph that
        cannot be read leaves the plan as it was, reported as left out, so a human sees the targets."""
        assert self.ontology is not None
        if self.graph is None:
            return FittedIntent(intent=intent, left_out=["the request's names could not be checked (no graph)"])
        try:
            scope = await request_scope(request, self.graph, self.ontology, intent)
        except (GraphQueryError, ApplicationError) as exc:
            log.warning("action_scope_unchecked", error=str(exc))
            return FittedIntent(
                intent=intent,
                left_out=[f"the request's names could not be checked against the graph ({str(exc)[:200]})"],
            )
        fitted = fit_intent(self.ontology, intent, request, scope)
        checked, problems = checked_intent(self.ontology, fitted.intent)
        if problems and fitted.added:  # what was added does not fit the ontology: keep the plan, say what it lacks
            log.warning("action_scope_not_added", problems=problems, added=fitted.added)
            return FittedIntent(
                intent=intent,
                left_out=[
                    *fitted.left_out,
                    *(f"{note} It could not be: {'; '.join(problems)}" for note in fitted.added),
                ],
            )
        if fitted.added or fitted.left_out:
            log.info("action_scope", added=fitted.added, left_out=fitted.left_out)
        return FittedIntent(intent=checked, added=fitted.added, left_out=fitted.left_out)

    def router_system_prompt(self) -> str:
        return self.prompts.render("router_system", actions=self._actions_text())

    @activity.defn(name=Activities.ROUTE)
    async def route(self, request: RouteInput) -> RouteOutput:
        """QUERY, ACTION or ANSWER. Without actions on this worker there is nothing to route: QUERY."""
        if self.ontology is None or not self.ontology.actions:
            return RouteOutput(intent=Intent.QUERY, reasoning="no actions are configured")
        verb = asks_for_change(self.ontology, request.question)
        if verb:  # no model call: the request opens with one of the actions' own verbs
            return RouteOutput(intent=Intent.ACTION, reasoning=f"the request opens with the action verb {verb!r}")
        if about_actions(self.ontology, request.question) and not await self._names_held(request.question):
            return RouteOutput(
                intent=Intent.ANSWER,
                reasoning="a question about the actions themselves: answered from their definitions",
            )
        schema = {
            "type": "object",
            "properties": {"intent": {"enum": [i.value for i in Intent]}},
            "required": ["intent"],
        }
        completion = await self.llm.chat(
            [
                {"role": "system", "content": self.router_system_prompt()},
                {"role": "user", "content": self.prompts.render("router_user", question=request.question)},
            ],
            json_schema=schema,
            max_tokens=20,
        )
        try:
            intent = Intent(json.loads(completion.text)["intent"].strip().upper())
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError, ValueError):
            # Read-only is the safe reading of an unclear answer: a mutation needs a clear ACTION.
            log.warning("route_unusable", text=completion.text[:200])
            return RouteOutput(intent=Intent.QUERY, reasoning="the router's answer was unusable; read-only")
        if intent is Intent.ANSWER:
            held = await self._names_held(request.question)
            if held:
                log.info("route_answer_overruled", names=held)
                return RouteOutput(
                    intent=Intent.QUERY,
                    reasoning=(
                        f"the question names {', '.join(repr(n) for n in held)}, which the graph holds: "
                        "answered from the graph, not from general knowledge"
                    ),
                )
        return RouteOutput(intent=intent, reasoning="classified by the router")

    async def _names_held(self, question: str) -> list[str]:
        """The names the question gives that the graph stores exactly as some node's value (an id, a name).
        A question about one of them needs the data, whatever the router said: a direct answer about it would
        be an invention ("by what method was payment PAY-00481 paid?"). A graph that cannot be read leaves the
        router's answer as it was."""
        if self.graph is None:
            return []
        try:
            return sorted(set(await held_exactly(question, self.graph)))
        except (GraphQueryError, ApplicationError) as exc:  # unreachable graph: ApplicationError
            log.warning("route_names_unchecked", error=str(exc))
            return []

    @activity.defn(name=Activities.PLAN_ACTION)
    async def plan_action(self, request: RouteInput) -> ActionPlanningOutput:
        if self.ontology is None or not self.ontology.actions:
            return ActionPlanningOutput(error="No actions are configured on this service.")
        ontology = self.ontology
        schema = planner_schema(ontology)
        relationships = "; ".join(f"({r.from_})-[{r.type}]->({r.to})" for r in ontology.relationships)
        messages = [
            {
                "role": "system",
                "content": self.prompts.render(
                    "action_planner_system", actions=actions_catalogue(ontology), relationships=relationships
                ),
            },
            {"role": "user", "content": self.prompts.render("action_planner_user", question=request.question)},
        ]
        problems: list[str] = []
        for _ in (1, 2):
            completion = await self.llm.chat(messages, json_schema=schema, max_tokens=600)
            try:
                intent, problems = checked_intent(ontology, ActionIntent.model_validate_json(completion.text))
            except ValueError as exc:
                problems = [f"not the JSON asked for ({str(exc).splitlines()[0]})"]
            if problems in ([], [NO_SELECTION]):  # what the request states may complete the selection
                intent, notes = self._stated_filters_only(intent, request.question)
                fitted = await self._fitted(intent, request.question)
                intent, problems = checked_intent(ontology, fitted.intent)  # dropping filters may leave no targets
                problems = [*notes, *problems] if problems else []
            if not problems:
                definition = ontology.require_action(intent.entity_type, intent.action_name)
                return ActionPlanningOutput(
                    intent=intent,
                    irreversible=definition.cannot_be_undone,
                    notes=[*notes, *fitted.added],
                    left_out=fitted.left_out,
                )
            log.warning("action_plan_rejected", problems=problems)
            messages += [
                {"role": "assistant", "content": completion.text},
                {"role": "user", "content": self.prompts.render("action_planner_repair", problems="; ".join(problems))},
            ]
        if is_question(request.question):
            # A question the planner could not turn into a change asks what can be done: the definitions answer.
            log.info("action_question_answered_from_catalogue", problems=problems)
            return ActionPlanningOutput(answer=catalogue_answer(ontology, request.question))
        return ActionPlanningOutput(error="Could not tell what to change: " + "; ".join(problems))
