"""Which activities and workflows each family's worker hosts, on which task queue. The tools family's
activities come from the tool registry, the same list the planner's catalogue comes from."""

from __future__ import annotations

from temporalio import activity
from temporalio.client import Client
from temporalio.worker import Worker

from activities.action_planning import ActionPlanningActivities
from activities.actions import ActionTools
from activities.agent_metrics import AgentMetrics
from activities.audit_sink import AuditSink
from activities.conversation import ConversationActivities
from activities.follow_up import FollowUpActivities
from activities.planning import PlanningActivities
from activities.publish import PublishActivities, Publisher
from activities.run_record import RunRecordActivities
from activities.synthesis import SynthesisActivities
from backends import Backends
from contracts.names import Activities
from contracts.run import AgentSettings
from service.calibrator_file import CalibratorFile
from service.config import ServiceConfig
from tools import registry
from tools.cache import ResultCache
from worker.log_context import LogContextInterceptor
from worker.override_rejections import OverrideRejectionCounter
from workflows.action_batch import ActionBatchWorkflow
from workflows.confidence_agent import ConfidenceAgentWorkflow
from workflows.conversation import ConversationWorkflow
from workflows.sandbox import WORKFLOW_RUNNER

FAMILIES = ("workflows", "planning", "tools", "synthesis", "audit")


def build_workers(client: Client, config: ServiceConfig, families: set[str], backends: Backends,
                  metrics: AgentMetrics, audit_sink: AuditSink | None = None,
                  publisher: Publisher | None = None) -> list[Worker]:
    """One Worker per hosted family, each on its own task queue (config.queues). `audit_sink`: where the
    audit family writes (default: config.audit_path); the caller closes it when the workers stop.
    `publisher`: where the workflows family's runs send the caller's messages (required with it)."""
    q = config.queues
    interceptors = [LogContextInterceptor()]
    actions = (ActionTools(backends.graph, backends.ontology, config.action_latency_ms / 1000)
               if backends.graph is not None and backends.ontology is not None else None)
    workers: list[Worker] = []
    if "workflows" in families:
        # Without actions there is nothing to route (route would answer QUERY without asking the LLM): no
        # routing activity, one server round trip less per request.
        has_actions = backends.ontology is not None and bool(backends.ontology.actions)
        settings = config.agent if has_actions else config.agent.model_copy(update={"router_enabled": False})

        @activity.defn(name=Activities.AGENT_SETTINGS)
        async def agent_settings() -> AgentSettings:
            """This worker's configuration, read by each run (a local activity: no extra server round trip)."""
            return settings

        # execute_action also runs here, as the batch's local activity (no server round trip per entity).
        if publisher is None:
            raise ValueError("the workflows family publishes the caller's messages: give it a publisher")
        conversations = ConversationActivities(client)
        local = [agent_settings, conversations.recall, conversations.remember, PublishActivities(publisher).publish,
                 *([actions.execute_action] if actions else [])]
        workers.append(Worker(client, task_queue=q.workflow,
                              workflows=[ConfidenceAgentWorkflow, ActionBatchWorkflow, ConversationWorkflow],
                              activities=local, interceptors=[*interceptors, OverrideRejectionCounter(metrics)],
                              max_concurrent_local_activities=500,
                              workflow_runner=WORKFLOW_RUNNER))
    if "planning" in families:
        planning = PlanningActivities(backends, config.tools)
        routing = ActionPlanningActivities(backends.llm, backends.ontology, backends.prompts, backends.graph)
        follow_up = FollowUpActivities(backends.llm, backends.prompts)
        workers.append(Worker(client, task_queue=q.planning, interceptors=interceptors, activities=[
            planning.plan, planning.adjust_step, routing.route, routing.plan_action, follow_up.read_follow_up]))
    if "tools" in families:
        tool_activities = registry.activities(backends, config.tools, ResultCache(config.cache_ttl_seconds),
                                              metrics)
        workers.append(Worker(client, task_queue=q.tools, interceptors=interceptors, max_concurrent_activities=500,
                              activities=[*tool_activities, *(actions.all() if actions else [])]))
    if "synthesis" in families:
        synthesis = SynthesisActivities(backends, CalibratorFile(config.calibrator_path or None))
        workers.append(Worker(client, task_queue=q.synthesis, interceptors=interceptors,
                              activities=[synthesis.synthesize, synthesis.answer_directly,
                                          synthesis.answer_from_conversation]))
    if "audit" in families:
        sink = audit_sink or AuditSink(config.audit_path, metrics)
        recorder = RunRecordActivities(sink, metrics)
        workers.append(Worker(client, task_queue=q.audit, interceptors=interceptors,
                              activities=[recorder.record_run]))
    return workers
