"""Requests that belong to TrustGraph's own agent loop, or ask for a pattern only TrustGraph's agent has.
TrustGraph's orchestrator sends its ReAct continuations (a history of TrustGraph's own steps) and its
supervisor's sub-goals (a fan-out linked by correlation_id to its parent) back onto the agent request topic.
This service must not answer them as new questions: a continuation would start a fresh run that reads
TrustGraph's steps as a conversation, and a sub-goal's answer would reach the parent's caller as the end of
the dialog. They go to TrustGraph's own agent (`react_request_topic`), or get an error saying how to deploy
the two side by side (docs/trustgraph.md)."""

from __future__ import annotations

from contracts.override import OVERRIDE_STATE
from contracts.wire import AgentRequest

# AgentStep.step_type values TrustGraph's agents write (trustgraph-base 2.11.1, schema/agent.py)
LOOP_STEP_TYPES = frozenset({"react", "plan", "execute", "decompose", "synthesise"})
# AgentRequest.pattern values this service answers itself: it plans a DAG of tool steps and executes it, which
# is what "plan-then-execute" asks for, and what a client asking for TrustGraph's default ("react") wants done.
SERVED_PATTERNS = frozenset({"", "react", "plan-then-execute"})


def loop_request(request: AgentRequest) -> str:
    """What part of TrustGraph's loop the request is ("" when it is a question for this service)."""
    if request.state == OVERRIDE_STATE:
        return ""  # this service's own follow-up: correlation_id names the run waiting for a decision
    if any(step.step_type in LOOP_STEP_TYPES for step in request.history):
        return "a continuation of TrustGraph's agent loop (its history holds TrustGraph's own steps)"
    if request.subagent_goal or request.parent_session_id or request.expected_siblings or request.correlation_id:
        return "a sub-goal of TrustGraph's supervisor (a fan-out from a parent request)"
    if request.pattern not in SERVED_PATTERNS:
        if request.pattern == "supervisor":
            return "a request for TrustGraph's supervisor pattern (a fan-out to sub-agents)"
        return (f"a request for the pattern {request.pattern!r} (this service answers react and plan-then-execute "
                "requests with its own planner)")
    return ""
