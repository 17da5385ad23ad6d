"""Requests that belong to TrustGraph's own agent loop, or ask for a pattern only TrustGraph's agent has.
TrustGraph's agent sends every next iteration of its loop (a ReAct continuation, a plan step, a supervisor's
sub-goals, their completions and the synthesis) to its `next` topic, under the first request's id; beside
this service, that topic may be the flow's agent topic this bridge reads. Such a request must not be answered
as a new question: a continuation would start a fresh run that reads TrustGraph's steps as a conversation,
and its answer would end the caller's dialog early. They go to TrustGraph's own agent (`react_request_topic`),
or get an error saying how to deploy the two side by side (docs/trustgraph.md). A supervisor's sub-goal is a
question of its own: this service may answer it and report to the supervisor (bridge/relay.py, `subagent`)."""

from __future__ import annotations

from contracts.override import OVERRIDE_STATE
from contracts.subagent import SUBAGENT_COMPLETION, SubagentReturn, is_subgoal, subgoal_fields
from contracts.wire import AgentRequest

# AgentStep.step_type values TrustGraph's agents write (trustgraph-base 2.11.1, schema/agent.py; the
# orchestrator's pattern_base.py): plan-then-execute and supervisor steps, and a sub-agent's completion.
# ReAct steps are written with no step type at all (react/service.py, PatternBase.build_next_request).
LOOP_STEP_TYPES = frozenset({"react", "plan", "execute", "decompose", "synthesise", SUBAGENT_COMPLETION})
# AgentRequest.pattern values this service answers itself: it plans a DAG of tool steps and executes it, which is
# what "plan-then-execute" asks for. No pattern leaves the choice to the agent (TrustGraph's meta-router): this
# service's choice is its own plan-then-execute. A request for "react" asks for TrustGraph's ReAct loop, which this
# service does not run: it goes to TrustGraph's agent, as every pattern only that agent has.
SERVED_PATTERNS = frozenset({"", "plan-then-execute"})


def loop_request(request: AgentRequest) -> str:
    """What part of TrustGraph's loop the request is ("" when it is a question for this service)."""
    if request.state == OVERRIDE_STATE:
        return ""  # this service's own follow-up: correlation_id names the run waiting for a decision
    if request.history and (
        any(step.step_type in LOOP_STEP_TYPES for step in request.history) or request.pattern or request.correlation_id
    ):
        # The orchestrator writes its chosen pattern into every continuation, and a sub-agent's continuation
        # keeps its correlation_id; a client's own history (a conversation so far) carries neither.
        return "a continuation of TrustGraph's agent loop (its history holds TrustGraph's own steps)"
    if request.subagent_goal or request.parent_session_id or request.expected_siblings or request.correlation_id:
        return "a sub-goal of TrustGraph's supervisor (a fan-out from a parent request)"
    if request.pattern not in SERVED_PATTERNS:
        if request.pattern == "supervisor":
            return "a request for TrustGraph's supervisor pattern (a fan-out to sub-agents)"
        if request.pattern == "react":
            return (
                "a request for TrustGraph's react pattern (its ReAct loop; this service plans and executes: ask "
                "with no pattern or with plan-then-execute for its answer)"
            )
        return (
            f"a request for the pattern {request.pattern!r} (this service answers plan-then-execute requests, "
            "and those naming no pattern, with its own planner)"
        )
    return ""


def served_subgoal(
    request: AgentRequest, serve_subagent_goals: bool, react_request_topic: str
) -> SubagentReturn | None:
    """Where to report a supervisor's sub-goal this service answers; None when it does not answer it. The
    completion can only reach the orchestrator that fanned out (its aggregator is in its memory) on the topic
    that orchestrator reads: without react_request_topic the sub-goal is refused as before."""
    if not (serve_subagent_goals and react_request_topic) or request.state == OVERRIDE_STATE:
        return None
    return SubagentReturn.of(request, react_request_topic) if is_subgoal(request) else None


def undecoded_subgoal(payload: bytes, serve_subagent_goals: bool, react_request_topic: str) -> SubagentReturn | None:
    """Where to report a supervisor's sub-goal this service would answer but cannot read as an AgentRequest (a
    question over the limit, a field of the wrong type): as failed, so that the supervisor still answers; None for
    any other payload."""
    if not (serve_subagent_goals and react_request_topic):
        return None
    return subgoal_fields(payload, react_request_topic)
