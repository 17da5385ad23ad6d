"""Planning activities: question + tool catalogue + live graph schema -> a validated ExecutionPlan (one
repair round); and the LLM's new arguments for a weak step (the retry ladder's adjusted and simplified
rungs)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import partial

import structlog
from temporalio import activity

from backends import Backends
from backends.graph_store import GraphStore
from backends.grounding import described_for_writer, existence_query, ground, holds_value, misplaced_names
from backends.llm import Completion
from backends.query_checker import SchemaFacts
from backends.schema_check import unasked_in, walk_doubts_in
from backends.trustgraph_agent_prompts import PLAN_CREATE, agent_prompts
from confidence.evidence import program_evidence
from confidence.token_evidence import plan_evidence
from contracts.names import Activities
from contracts.plan import ExecutionPlan
from contracts.query_path import AdjustInput, AdjustOutput, Grounding, PlanningInput, PlanningOutput
from contracts.tool_spec import ToolAccess, ToolScope, ToolSpec
from cypher.intent import IntentError
from planning.plan_parser import PlanParseError, parse_plan, plan_json_schema
from questions.figures import unused_figures
from questions.named_terms import ignored_names, misplaced_name, named_lookups, relabel
from questions.unused_links import unplaced_words, unused_words
from questions.walks import without_names
from service.off_loop import off_loop
from tools import registry
from tools.base import Tool
from tools.intent_writer import intent_query
from tools.program_chooser import ranked_programs
from tools.program_rivals import RANKED, rivals_disagree

log = structlog.get_logger(__name__)
PLAN_ATTEMPTS = 3  # the first plan and two repairs
# Repairs are sampled: at temperature 0 the local model was seen answering the repair request with the
# very plan it had just been told was unusable, three times over.
REPAIR_TEMPERATURE = 0.5
TRUSTGRAPH_SCHEMA = (
    "(the knowledge graph is TrustGraph's: ask KnowledgeQuery questions in plain language, "
    "naming the entities they are about)"
)


def describe_tools(tools: dict[str, ToolSpec]) -> str:
    lines = []
    for tool in tools.values():
        args = ", ".join(f'"{a.name}": {a.description}' for a in tool.arguments)
        lines.append(f"- {tool.name}: {tool.description} Arguments: {{{args}}}")
    return "\n".join(lines)


async def relabelled_query(
    query: str, grounding: Grounding, graph: GraphStore, tool: Tool, backends: Backends
) -> str | None:
    """`query` with a misplaced name's node relabelled (questions.named_terms.relabel) and the tool's
    certain fixes applied, when the result has no problem left; None otherwise."""
    if not grounding.matches:
        return None  # no name found anywhere can be misplaced: the query need not be read
    for label, prop, value, candidate in await off_loop(
        "relabelling misplaced names", partial(_relabellings, query, grounding)
    ):
        if await holds_value(graph, label, prop, value):
            continue
        arguments = await tool.fix({"query": candidate}, backends) or {"query": candidate}
        fixed = arguments["query"]
        if not await tool.check(arguments, backends) and not await misplaced_names(fixed, grounding, graph):
            return fixed
    return None


def _relabellings(query: str, grounding: Grounding) -> list[tuple[str, str, str, str]]:
    """(label, property, value, the query relabelled) for each name the query looks up where grounding did not
    find it, and found it under one other label, on the same property."""
    found = []
    for label, prop, value in named_lookups(query):
        if misplaced_name(label, prop, value, grounding) is None:
            continue
        homes = {m.label for m in grounding.matches if m.value.lower() == value.lower() and m.property == prop}
        candidate = relabel(query, label, prop, value, homes.pop()) if len(homes) == 1 else None
        if candidate is not None:
            found.append((label, prop, value, candidate))
    return found


def _plan_doubts(schema: SchemaFacts, question: str, queries: list[str], grounding: Grounding) -> list[str]:
    """PlanningActivities._doubts over a schema already read: every check of the question and the queries."""
    doubt = unasked_in(schema, question, queries)
    figures = unused_figures(without_names(question, grounding), " ".join(queries))
    said = (
        [
            f"the question gives the figure{'s' if len(figures) > 1 else ''} {', '.join(figures)}, which no query "
            "uses: add the condition it sets on the property it is about"
        ]
        if figures
        else []
    )
    return ([doubt] if doubt else []) + said + walk_doubts_in(schema, question, queries, grounding)


# TrustGraph's tool types whose entries set the groups and states of this service's tool of that name.
CONFIGURED_TOOLS = {
    "knowledge-query": "KnowledgeQuery",
    "text-completion": "TextCompletion",
    "tool-service": "ToolService",
}


class PlanningActivities:
    def __init__(
        self,
        backends: Backends,
        tool_names: Iterable[str] | None = None,
        tool_access: dict[str, ToolAccess] | None = None,
    ) -> None:
        """`tool_names`: the deployment's `tools` setting (None: the tools offered by default); `tool_access`:
        its `tool_groups` (which request groups a built-in tool is offered to; default: "default")."""
        self.backends = backends
        self.tool_names = list(tool_names) if tool_names is not None else None
        self.tool_access = tool_access or {}

    async def catalogue(self, scope: ToolScope | None = None) -> dict[str, ToolSpec]:
        return await registry.catalogue(self.backends, self.tool_names, scope, self._access())

    def _access(self) -> dict[str, ToolAccess]:
        """Built-in tools' groups: TrustGraph's config, where `tool` entries of its knowledge-query,
        text-completion or tool-service type put KnowledgeQuery, TextCompletion or ToolService in their groups,
        else `tool_groups`."""
        access = dict(self.tool_access)
        config = self.backends.trustgraph_config
        if config is not None:
            for kind, name in CONFIGURED_TOOLS.items():
                entries = list(config.current.of_kind(kind).values())
                if entries:
                    access[name] = ToolAccess(
                        groups=sorted({g for t in entries for g in t.access.groups}),
                        states=sorted({s for t in entries for s in t.access.states}),
                    )
        return access

    def framing(self, request: PlanningInput) -> str:
        """What the planner is asked to bear in mind, as TrustGraph's agent adds it to its prompt: the `agent`
        config's additional context, then the request's framing."""
        config = self.backends.trustgraph_config
        context = config.current.additional_context if config is not None else ""
        return "\n".join(part for part in (context, self.request_framing(request)) if part)

    def request_framing(self, request: PlanningInput) -> str:
        """The request's framing or, without one, its task type's: TrustGraph's `framing` variable."""
        scope = request.scope
        config = self.backends.trustgraph_config
        return scope.framing or (config.current.task_framing.get(scope.task_type, "") if config else "")

    async def outline(self, request: PlanningInput, tools: dict[str, ToolSpec]) -> str:
        """The steps the workspace's own `plan-create` template sets out for the question, for the planner to
        write as tool steps (TrustGraph's plan-step-execute's part); "" when the workspace keeps the default."""
        prompts = agent_prompts(self.backends)
        if prompts is None or not prompts.uses(PLAN_CREATE):
            return ""
        steps = await prompts.plan_create(
            request.question,
            self.request_framing(request),
            [{"name": t.name, "description": t.description} for t in tools.values()],
        )
        if not steps:
            return ""
        lines = []
        for index, step in enumerate(steps):
            after = [str(d) for d in step.get("depends_on") or []]
            hint = f" (tool: {step['tool_hint']})" if step.get("tool_hint") else ""
            lines.append(f"{index}. {step.get('goal', '')}{hint}{' after ' + ', '.join(after) if after else ''}")
        return self.backends.prompts.render("planner_outline", outline="\n".join(lines))

    async def _schema(self) -> str:
        graph = self.backends.graph
        return TRUSTGRAPH_SCHEMA if graph is None else await graph.describe_schema()

    async def _ground(self, question: str) -> Grounding:
        """The question's names as the graph stores them, found before the planner writes a query."""
        graph = self.backends.graph
        return Grounding() if graph is None else await ground(question, graph)

    async def system_prompt(self, tools: dict[str, ToolSpec] | None = None) -> str:
        """The planner's system prompt: the same for every question on one graph and tool set, so it comes
        first and the model server can keep it evaluated (worker/prompt_warm_up.py)."""
        prompts = self.backends.prompts
        tools = tools if tools is not None else await self.catalogue()
        return prompts.render(
            "planner_system",
            tools=describe_tools(tools),
            graph_schema=await self._schema(),
            cypher_rules=prompts.render("cypher_rules").strip(),
        )

    @activity.defn(name=Activities.PLAN)
    async def plan(self, request: PlanningInput) -> PlanningOutput:
        tools = await self.catalogue(request.scope.tools)
        if not tools:  # TrustGraph's agent would have no tool either: say which request fields left none
            return PlanningOutput(
                error=f"No tool is offered to this request's {request.scope.tools.said()}: "
                'ask with a group its tools are in ("*" for every group).'
            )
        prompts = self.backends.prompts
        grounding = await self._ground(request.question)
        programmed = await self._program_plan(request, tools, grounding)
        if programmed is not None:
            return programmed
        system = await self.system_prompt(tools)
        user = prompts.render(
            "planner_user",
            question=request.question,
            grounding=await described_for_writer(request.question, grounding, self.backends),
        )
        framing = self.framing(request)
        if framing:  # after the question, so the system prompt stays the same for every request
            user = f"{user.rstrip()}\nAdditional context: {framing}\n"
        outline = await self.outline(request, tools)
        if outline:
            user = f"{user.rstrip()}\n{outline}"
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        json_schema = plan_json_schema(tools, request.settings.max_steps)
        problems: list[str] = []
        usable: tuple[ExecutionPlan, Completion] | None = None  # the latest plan with only doubts, not problems
        for attempt in range(1, PLAN_ATTEMPTS + 1):
            completion = await self.backends.llm.chat(
                messages,
                json_schema=json_schema,
                max_tokens=768,
                temperature=0.0 if attempt == 1 else REPAIR_TEMPERATURE,
                logprobs=True,
            )
            try:
                plan = await self._relabelled(
                    await self._fixed(
                        parse_plan(completion.text, plan_id=request.plan_id, tools=tools, settings=request.settings)
                    ),
                    grounding,
                )
                problems = await self._static_problems(plan) + await self._unused_names(plan, grounding)
                doubts = [] if problems or usable is not None else await self._doubts(request.question, plan, grounding)
                if not problems and not doubts:
                    return self._planned(plan, attempt, grounding, completion)
                if not problems:
                    usable = plan, completion
                problems += doubts
            except PlanParseError as exc:
                problems = exc.problems
            # A problem found here becomes repair feedback, never an executed query.
            log.warning(
                "plan_rejected",
                plan_id=request.plan_id,
                attempt=attempt,
                problems=problems,
                plan_text=completion.text[:2000],
            )
            messages += [
                {"role": "assistant", "content": completion.text},
                {"role": "user", "content": prompts.render("planner_repair", problems="; ".join(problems))},
            ]
        if usable is not None:  # a doubt is worth a repair, not a run without an answer
            usable_plan, usable_completion = usable
            return self._planned(usable_plan, PLAN_ATTEMPTS, grounding, usable_completion)
        formed = await self._form_plan(request, tools, grounding)
        if formed is not None:
            return PlanningOutput(
                plan=formed,
                attempts=PLAN_ATTEMPTS,
                grounding=grounding,
                note=(
                    f"No usable plan after {PLAN_ATTEMPTS} attempts ({'; '.join(problems)}); the query was written "
                    "from the query form instead."
                ),
            )
        fallback = self._existence_plan(request, tools, grounding)
        if fallback is not None:
            return PlanningOutput(
                plan=fallback,
                attempts=PLAN_ATTEMPTS,
                grounding=grounding,
                note=(
                    f"No usable plan after {PLAN_ATTEMPTS} attempts ({'; '.join(problems)}); the question names "
                    f"{', '.join(repr(n) for n in grounding.unmatched)}, found nowhere in the graph: checking that "
                    "directly."
                ),
            )
        return PlanningOutput(
            error="Could not make a usable plan for this question: " + "; ".join(problems),
            attempts=PLAN_ATTEMPTS,
            grounding=grounding,
        )

    def _planned(
        self, plan: ExecutionPlan, attempts: int, grounding: Grounding, completion: Completion
    ) -> PlanningOutput:
        """The plan with how sure the model was of its queries (or, when the server gave no token
        log-probabilities though they were asked for, a note saying they are missing)."""
        missing = completion.token_logprobs is None and self.backends.llm.logprobs
        return PlanningOutput(
            plan=plan,
            attempts=attempts,
            grounding=grounding,
            token_evidence=plan_evidence(completion.token_logprobs),
            evidence_note=(
                "The LLM server gave no token log-probabilities for this plan: how "
                "sure the model was of its queries is left out of the confidence."
                if missing
                else ""
            ),
        )

    async def _program_plan(
        self, request: PlanningInput, tools: dict[str, ToolSpec], grounding: Grounding
    ) -> PlanningOutput | None:
        """With `graph_programs`, a graph question's one query proposed by code, not written: the best of the
        programs enumerated from the question's reading and the live schema (cypher/programs.py). Code's
        first beat the model's choice among the first six on a development set (bench/query_writers.py:
        39 of 40 against 30), so the ranking decides. None (the planner writes the plan) when the question
        names something the graph holds nowhere (that is the answer to establish), names no thing and no
        kind of thing (it may not be about the graph), or when no program compiles."""
        backends = self.backends
        if not backends.graph_programs or grounding.unmatched or "GraphQuery" not in tools:
            return None
        try:
            reading, nodes, found = await ranked_programs(request.question, grounding, backends, RANKED)
        except IntentError as exc:
            log.info("program_plan_unusable", plan_id=request.plan_id, reason=str(exc))
            return None
        if not found or not (reading.named or reading.asked):
            return None
        plan = await self._one_query_plan(request, tools, found[0].query)
        if plan is None:
            return None
        # Code's query is the question's best reading and returns the same rows each time it runs: they are the
        # answer, whatever they score (an empty walk between two things the graph holds says "none"). No retry
        # rewrites it into another question; the calibrator states how sure the answer is.
        plan = plan.model_copy(
            update={"steps": [step.model_copy(update={"confidence_threshold": 0.0}) for step in plan.steps]}
        )
        disagree = await rivals_disagree(backends.graph, found) if backends.graph is not None else None
        best = found[0]
        unexplained = unplaced_words(reading.linking, best.intent, best.walk.kind) if reading.linking else None
        unused = unused_words(reading.linking, best.intent, best.walk.labels, nodes)
        log.info(
            "program_plan",
            plan_id=request.plan_id,
            kind=found[0].walk.kind,
            answer=found[0].intent.answer,
            rivals_disagree=disagree,
        )
        return PlanningOutput(
            plan=plan,
            attempts=1,
            grounding=grounding,
            program_evidence=program_evidence(
                [p.score for p in found],
                disagree,
                None if unexplained is None else len(unexplained),
                None if reading.linking is None else len(unused),
            ),
            unexplained=list(unexplained or ()),
            unused=list(unused),
        )

    async def _one_query_plan(
        self, request: PlanningInput, tools: dict[str, ToolSpec], query: str
    ) -> ExecutionPlan | None:
        """A plan of one graph query, fixed and checked like a written one; None when a check fails."""
        try:
            plan = parse_plan(
                json.dumps(
                    {
                        "steps": [
                            {"id": "s1", "function": "GraphQuery", "dependencies": [], "arguments": {"query": query}}
                        ]
                    }
                ),
                plan_id=request.plan_id,
                tools=tools,
                settings=request.settings,
            )
        except PlanParseError as exc:
            log.warning("one_query_plan_unusable", plan_id=request.plan_id, reason=str(exc))
            return None
        plan = await self._fixed(plan)
        return None if await self._static_problems(plan) else plan

    async def _form_plan(
        self, request: PlanningInput, tools: dict[str, ToolSpec], grounding: Grounding
    ) -> ExecutionPlan | None:
        """When no plan is usable, one graph query from the query form (tools/intent_writer.py): a form the
        model fills in under the schema's grammar compiles where free Cypher failed three times."""
        if "GraphQuery" not in tools or self.backends.graph is None or self.backends.schema is None:
            return None
        try:
            query = await intent_query(request.question, grounding, self.backends)
        except IntentError as exc:
            log.warning("form_plan_unusable", plan_id=request.plan_id, reason=str(exc))
            return None
        return await self._one_query_plan(request, tools, query)

    @staticmethod
    def _existence_plan(
        request: PlanningInput, tools: dict[str, ToolSpec], grounding: Grounding
    ) -> ExecutionPlan | None:
        """When no plan is usable but the question names something the graph holds nowhere, that is the
        answer to establish: one query for the names themselves (empty: they do not exist here)."""
        if not grounding.unmatched or "GraphQuery" not in tools:
            return None
        text = json.dumps(
            {
                "steps": [
                    {
                        "id": "s1",
                        "function": "GraphQuery",
                        "dependencies": [],
                        "arguments": {"query": existence_query(grounding.unmatched)},
                    }
                ]
            }
        )
        try:
            return parse_plan(text, plan_id=request.plan_id, tools=tools, settings=request.settings)
        except PlanParseError:
            return None

    async def _doubts(self, question: str, plan: ExecutionPlan, grounding: Grounding) -> list[str]:
        """What makes a runnable plan look like an answer to another question: the question asks for a kind
        of thing ("which supplier") that none of its graph queries matches, spells out a relationship more
        often than the queries walk it, gives a figure no query uses, or the queries return only what the
        question names. Said to the planner once; a plan that keeps them still runs (the question's wording may
        be loose, and the step's own check scores a query without the figure low)."""
        schema = self.backends.schema
        queries = [
            str(s.arguments.get("query", ""))
            for s in plan.steps
            if (tool := registry.tool(s.function)) is not None and tool.spec.uses_schema
        ]
        if schema is None or not queries:
            return []
        # One thread hop for every check of the question and the queries: they read both whole.
        return await off_loop(
            "the plan's doubts", partial(_plan_doubts, await schema.facts(), question, queries, grounding)
        )

    @staticmethod
    async def _unused_names(plan: ExecutionPlan, grounding: Grounding) -> list[str]:
        """A plan that uses none of the names the question gives and the graph holds nowhere answers another
        question; repaired like any other problem, and the existence check is the plan of last resort."""
        if not grounding.unmatched:
            return []  # no name the graph holds nowhere: the steps need not be read
        ignored = await off_loop(
            "the plan's use of the question's names",
            partial(ignored_names, [str(v) for s in plan.steps for v in s.arguments.values()], grounding),
        )
        if not ignored:
            return []
        names = ", ".join(f"'{n}'" for n in ignored)
        return [
            f"the question names {names}, which no step uses: match {'it' if len(ignored) == 1 else 'them'} "
            "in the query, on the property that would hold it (an empty result then shows it does not exist)"
        ]

    async def _fixed(self, plan: ExecutionPlan) -> ExecutionPlan:
        """The plan with each step's certain corrections applied (Tool.fix), before it is checked."""
        steps = []
        for step in plan.steps:
            tool = registry.tool(step.function)
            fixed = await tool.fix(step.arguments, self.backends) if tool is not None else None
            if fixed is not None:
                log.info("plan_step_fixed", step_id=step.id, before=step.arguments, after=fixed)
            steps.append(step.model_copy(update={"arguments": fixed}) if fixed is not None else step)
        return plan.model_copy(update={"steps": steps})

    async def _relabelled(self, plan: ExecutionPlan, grounding: Grounding) -> ExecutionPlan:
        """Each graph query that looks a name up on a label that does not hold it, relabelled with the one
        label grounding found it under (then corrected by the tool's schema fixes) when that makes a query
        with no problem left. The local model was seen ignoring this as repair feedback three times over."""
        graph = self.backends.graph
        if graph is None:
            return plan
        steps = []
        for step in plan.steps:
            tool, query = registry.tool(step.function), step.arguments.get("query")
            if tool is not None and tool.spec.uses_schema and isinstance(query, str):
                better = await relabelled_query(query, grounding, graph, tool, self.backends)
                if better is not None:
                    log.info("plan_step_fixed", step_id=step.id, before=step.arguments, after={"query": better})
                    step = step.model_copy(update={"arguments": {**step.arguments, "query": better}})
            steps.append(step)
        return plan.model_copy(update={"steps": steps})

    async def _static_problems(self, plan: ExecutionPlan) -> list[str]:
        """What each step's tool finds wrong with its arguments before anything runs (e.g. a query FalkorDB
        rejects). Steps whose arguments come from earlier steps' results are checked when they run. A name
        looked up where it is not stored is not a problem here: the local model ignored it as feedback three
        times over, and an empty result is scored as one; `_relabelled` moves it when it can."""
        problems = []
        for step in plan.steps:
            tool = registry.tool(step.function)
            if tool is not None:
                problems += [f"step {step.id}: {p}" for p in await tool.check(step.arguments, self.backends)]
        return problems

    @activity.defn(name=Activities.ADJUST_STEP)
    async def adjust_step(self, request: AdjustInput) -> AdjustOutput:
        """Retry ladder rungs 2 and 3: the LLM proposes new arguments for the step, given why it was weak."""
        tool = (await self.catalogue()).get(request.step.function)
        if tool is None:
            return AdjustOutput(arguments=request.step.arguments)
        schema_text = "Knowledge graph schema:\n" + await self._schema() if tool.uses_schema else ""
        names = [a.name for a in tool.arguments]
        json_schema = {
            "type": "object",
            "properties": {
                "arguments": {
                    "type": "object",
                    "properties": {n: {"type": "string"} for n in names},
                    "required": sorted(tool.required_arguments()),
                }
            },
            "required": ["arguments"],
        }
        prompts = self.backends.prompts
        completion = await self.backends.llm.chat(
            [
                {
                    "role": "system",
                    "content": prompts.render(
                        "adjust_system", tool=tool.name, tool_description=tool.description, graph_schema=schema_text
                    ),
                },
                {
                    "role": "user",
                    "content": prompts.render(
                        "adjust_user",
                        question=request.question,
                        arguments=json.dumps(request.step.arguments),
                        last_output=request.last_output,
                        reasoning=request.reasoning,
                        instruction=prompts.render(f"adjust_{request.rung}"),
                    ),
                },
            ],
            json_schema=json_schema,
            max_tokens=512,
        )
        try:
            proposed = json.loads(completion.text)["arguments"]
        except (json.JSONDecodeError, KeyError, TypeError):
            log.warning("adjustment_unusable", step_id=request.step.id, text=completion.text[:200])
            return AdjustOutput(arguments=request.step.arguments)
        arguments = {k: str(v) for k, v in proposed.items() if k in names and str(v).strip()}
        if tool.required_arguments() - arguments.keys():
            return AdjustOutput(arguments=request.step.arguments)
        return AdjustOutput(arguments=arguments)
