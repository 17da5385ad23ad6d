"""Which activities and workflows each family's worker hosts, on which task queue. The tools family's
activities come from the tool registry, the same list the planner's catalogue comes from."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from temporalio import activity
from temporalio.client import Client
from temporalio.worker import Interceptor, Worker

from activities.action_planning import ActionPlanningActivities
from activities.actions import ActionTools
from activities.audit_record import RunRecordActivities
from activities.batch_parent import BatchParents
from activities.conversation_activities import ConversationActivities
from activities.follow_up import FollowUpActivities
from activities.planning import PlanningActivities
from activities.publish import PublishActivities, Publisher
from activities.synthesis import SynthesisActivities
from backends import Backends
from contracts.names import Activities, TaskQueues
from contracts.run import AgentSettings
from service.agent_metrics import AgentMetrics
from service.audit_sink import AuditSink
from service.calibrator_file import CalibratorFile
from service.config import ServiceConfig
from service.redacted_failures import with_redacted_failures
from tools import registry
from tools.cache import ResultCache
from worker.flow_context import FlowContextInterceptor
from worker.llm_usage import LlmUsageInterceptor
from worker.log_context import LogContextInterceptor
from worker.override_rejections import OverrideRejectionCounter
from workflows.action_batch import ActionBatchWorkflow
from workflows.confidence_agent import ConfidenceAgentWorkflow
from workflows.conversation_workflow import ConversationWorkflow
from workflows.sandbox import WORKFLOW_RUNNER

FAMILIES = ("workflows", "planning", "tools", "synthesis", "audit")


@dataclass
class Hosting:
    """What one family's worker hosts; families configured on one task queue are merged into one Worker."""

    activities: list[Callable[..., Any]] = field(default_factory=list)
    workflows: list[type] = field(default_factory=list)
    interceptors: list[Interceptor] = field(default_factory=list)
    max_concurrent_activities: int = 100  # the SDK's default

    def merged(self, other: Hosting) -> Hosting:
        # An activity two families list is registered once: the SDK refuses a name twice. Each kind of
        # interceptor wraps a call once.
        kinds = {type(i) for i in self.interceptors}
        return Hosting(
            [*self.activities, *(a for a in other.activities if a not in self.activities)],
            [*self.workflows, *other.workflows],
            [*self.interceptors, *(i for i in other.interceptors if type(i) not in kinds)],
            max(self.max_concurrent_activities, other.max_concurrent_activities),
        )


def family_queue(family: str, queues: TaskQueues) -> str:
    return queues.workflow if family == "workflows" else getattr(queues, family)


def unhosted_neighbours(families: set[str], queues: TaskQueues) -> dict[str, list[str]]:
    """For each hosted family, the families on its task queue this worker does not host: their tasks would
    reach this worker and fail as not registered, so such a worker must not start."""
    found = {
        family: [
            other
            for other in FAMILIES
            if other not in families and family_queue(other, queues) == family_queue(family, queues)
        ]
        for family in sorted(families)
    }
    return {family: others for family, others in found.items() if others}


def build_workers(
    client: Client,
    config: ServiceConfig,
    families: set[str],
    backends: Backends,
    metrics: AgentMetrics,
    audit_sink: AuditSink | None = None,
    publisher: Publisher | None = None,
    watchers: Sequence[Interceptor] = (),
) -> list[Worker]:
    """One Worker per task queue the hosted families use (config.queues): by default all of them share the
    workflow's queue, and one Worker hosting everything runs each activity eagerly. `audit_sink`: where the
    audit family writes (default: config.audit_path); the caller closes it when the workers stop.
    `publisher`: where the workflows family's runs send the caller's messages (required with it), and the
    synthesis family a streamed answer's sentences (without it, no answer is streamed as written).
    `watchers`: more interceptors, given to every family (worker/prompt_warm_up.py's ActivityArrivals)."""
    actions = (
        ActionTools(backends.graph, backends.ontology, config.action_latency_ms / 1000)
        if backends.graph is not None and backends.ontology is not None
        else None
    )
    client = with_redacted_failures(client)  # what the workers report lands in histories: no secret in it
    by_queue: dict[str, Hosting] = {}
    for family in FAMILIES:
        if family in families:
            hosting = _hosting(family, client, config, backends, metrics, actions, audit_sink, publisher)
            hosting.interceptors.extend(watchers)
            queue = family_queue(family, config.queues)
            by_queue[queue] = by_queue[queue].merged(hosting) if queue in by_queue else hosting
    with _collector_paused():
        return [
            Worker(
                client,
                task_queue=queue,
                activities=h.activities,
                workflows=h.workflows,
                interceptors=h.interceptors,
                max_concurrent_activities=h.max_concurrent_activities,
                max_concurrent_local_activities=500,
                workflow_runner=WORKFLOW_RUNNER,
            )
            for queue, h in by_queue.items()
        ]


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Building a Worker validates each workflow by importing its modules into a fresh sandbox. On Python
    3.11 a garbage collection that runs a finaliser which imports (a ResourceWarning) while that import
    waits for a module lock another thread holds raises KeyError(thread id) from importlib (CPython
    gh-91351, fixed in 3.12 only) and the worker fails to start. No collection, no re-entrant import."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _hosting(
    family: str,
    client: Client,
    config: ServiceConfig,
    backends: Backends,
    metrics: AgentMetrics,
    actions: ActionTools | None,
    audit_sink: AuditSink | None,
    publisher: Publisher | None,
) -> Hosting:
    # Every family: each activity's log lines name its run, its output carries its LLM usage, and it calls the
    # TrustGraph services of its run's flow.
    logged: list[Interceptor] = [LogContextInterceptor(), LlmUsageInterceptor(), FlowContextInterceptor()]
    if family == "workflows":
        # Without actions there is nothing to route (route would answer QUERY without asking the LLM): no
        # routing activity, one server round trip less per request.
        has_actions = backends.ontology is not None and bool(backends.ontology.actions)
        settings = config.agent if has_actions else config.agent.model_copy(update={"router_enabled": False})

        @activity.defn(name=Activities.AGENT_SETTINGS)
        async def agent_settings() -> AgentSettings:
            """This worker's configuration, read by each run (a local activity: no extra server round trip)."""
            return settings

        # The writes run here only, as the runs' local activities (activities/actions.py refuses any other
        # way), each batch child after check_batch_parent found the agent run that started it.
        if publisher is None:
            raise ValueError("the workflows family publishes the caller's messages: give it a publisher")
        conversations = ConversationActivities(client)
        parents = BatchParents(client, config.queues.workflow)
        # The runs' messages (a local activity) and their explain entities' store (a regular one, off the path).
        publishing = PublishActivities(publisher, config.explain)
        return Hosting(
            [
                agent_settings,
                conversations.recall,
                conversations.remember,
                publishing.publish,
                publishing.store_explain,
                parents.check_batch_parent,
                *(actions.writers() if actions else []),
            ],
            [ConfidenceAgentWorkflow, ActionBatchWorkflow, ConversationWorkflow],
            [*logged, OverrideRejectionCounter(metrics)],
        )
    if family == "planning":
        planning = PlanningActivities(backends, config.tools, config.tool_access())
        routing = ActionPlanningActivities(backends.llm, backends.ontology, backends.prompts, backends.graph)
        follow_up = FollowUpActivities(backends.llm, backends.prompts)
        return Hosting(
            [planning.plan, planning.adjust_step, routing.route, routing.plan_action, follow_up.read_follow_up],
            interceptors=logged,
        )
    if family == "tools":
        tool_activities = registry.activities(backends, config.tools, ResultCache(config.cache_ttl_seconds), metrics)
        return Hosting(
            [*tool_activities, *(actions.all() if actions else [])], interceptors=logged, max_concurrent_activities=500
        )
    if family == "synthesis":
        # It publishes a streamed answer's checked sentences itself (activities/answer_release.py).
        publish = PublishActivities(publisher).send_in_order if publisher is not None else None
        synthesis = SynthesisActivities(backends, CalibratorFile(config.calibrator_path or None), publish)
        return Hosting(
            [synthesis.synthesize, synthesis.answer_directly, synthesis.answer_from_conversation], interceptors=logged
        )
    sink = audit_sink or AuditSink(config.audit_path, metrics)
    return Hosting([RunRecordActivities(sink, metrics).record_run], interceptors=logged)
