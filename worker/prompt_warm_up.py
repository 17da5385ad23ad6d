"""Warm the model server's prompt cache when the worker starts.

Each LLM call of a question starts with a long system prompt that is the same for every question (the
planner's holds the tool catalogue and the graph schema: ~1,400 tokens on the demo graph). A model server
that caches prompt prefixes (llama.cpp, vLLM, hosted APIs) evaluates it once and reuses it; without a warm-up
the first question of every worker start pays for it (the local model on 2 cores: ~25 s of a ~45 s first
answer). One one-token call per system prompt at start moves that cost off the first question. It runs in
the background, and a failure only costs the first question its head start.

The server evaluates one request at a time, so a warm-up still running when the first question arrives makes
that question wait: with all four queued ahead of it on a slow CPU (~30 prompt tokens/s), the first question
took 112 s. So the warm-up yields: it warms the prompts in the order a question opens them, and once any
activity has started on this worker it sends no more (the question's own calls leave its prompts evaluated).
A question then waits for at most the one warm-up call in flight.
"""

from __future__ import annotations

import asyncio
from typing import Any

import structlog
from temporalio.worker import ActivityInboundInterceptor, ExecuteActivityInput, Interceptor

from activities.action_planning import ActionPlanningActivities
from activities.planning import PlanningActivities
from backends import Backends
from backends.llm import ChatModel
from service.config import ServiceConfig
from tools.intent_writer import form_system_prompt

log = structlog.get_logger(__name__)

WARM_UP_QUESTION = "Reply with OK."


class ActivityArrivals(Interceptor):
    """Sets `arrived` when the first activity starts on the workers it is given to: a question is being served."""

    def __init__(self) -> None:
        self.arrived = asyncio.Event()

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _Arrival(next, self.arrived)


class _Arrival(ActivityInboundInterceptor):
    def __init__(self, next: ActivityInboundInterceptor, arrived: asyncio.Event) -> None:
        super().__init__(next)
        self._arrived = arrived

    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        self._arrived.set()
        return await self.next.execute_activity(input)


async def system_prompts(config: ServiceConfig, backends: Backends, families: set[str]) -> dict[str, str]:
    """The system prompts this worker's activities open their calls with, by name, in the order a question
    opens them: routing, planning, the query form, synthesis."""
    prompts: dict[str, str] = {}
    if "planning" in families:
        ontology = backends.ontology
        if ontology is not None and ontology.actions:
            router = ActionPlanningActivities(backends.llm, ontology, backends.prompts, backends.graph)
            prompts["router"] = router.router_system_prompt()
        prompts["planner"] = await PlanningActivities(backends, config.tools).system_prompt()
    # The query form is the first other candidate of each graph step, or with candidates off the cross-check of
    # a doubted one: unwarmed, the first doubted step paid ~20 s for its system prompt (measured).
    form_used = backends.graph_candidates > 1 or backends.form_when_doubted
    if "tools" in families and form_used and backends.schema is not None:
        prompts["query form"] = await form_system_prompt(backends)
    if "synthesis" in families:
        prompts["synthesis"] = backends.prompts.render("synthesis_system")
    return prompts


async def warm_up(llm: ChatModel, prompts: dict[str, str], question_arrived: asyncio.Event | None = None) -> list[str]:
    """Ask for one token after each system prompt, until `question_arrived` is set; the names of the prompts
    the server took."""
    warmed: list[str] = []
    names = list(prompts)
    for i, (name, system) in enumerate(prompts.items()):
        if question_arrived is not None and question_arrived.is_set():
            log.info("prompt_warm_up_yielded", skipped=names[i:])
            break
        try:
            await llm.chat(
                [{"role": "system", "content": system}, {"role": "user", "content": WARM_UP_QUESTION}], max_tokens=1
            )
        except Exception as exc:  # a model still loading or down: the first question pays, nothing else
            log.warning("prompt_warm_up_failed", prompt=name, error=str(exc)[:200])
            continue
        warmed.append(name)
    return warmed


async def warm_prompt_cache(
    config: ServiceConfig, backends: Backends, families: set[str], question_arrived: asyncio.Event | None = None
) -> None:
    # With TrustGraph's services the model sits behind its text-completion processor, which may not be up
    # yet (a request would wait out the LLM timeout): its own deployment warms its model.
    if not config.llm_warm_up or config.tool_backend != "local":
        return
    try:
        prompts = await system_prompts(config, backends, families)
    except Exception as exc:  # the graph's schema unreadable at start: the planner reads it per question
        log.warning("prompt_warm_up_failed", prompt="planner", error=str(exc)[:200])
        return
    if prompts:
        log.info("prompt_cache_warmed", prompts=await warm_up(backends.llm, prompts, question_arrived))
