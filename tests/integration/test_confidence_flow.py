"""Confidence control inside ConfidenceAgentWorkflow, on the time-skipping test server: the specification's two
worked examples, the retry ladder, human overrides (signal and update), timeouts, bad plans, failing
tools and parallel steps."""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import WorkflowUpdateFailedError

from contracts.override import Override
from contracts.run import AgentRunResult, AgentSettings
from tests.agent_harness import Harness, plan, responder, shipped_confidence
from tests.scripted_llm import is_planning, is_synthesis

EXACT_PATH = "MATCH path=(x:Entity {name:'X'})-[*..3]-(y:Entity {name:'Y'}) RETURN path"
NEVER_FOUND = "MATCH (n:Entity {name: 'Nobody'}) RETURN n.name"


async def test_seed_5_4_empty_result_broadened_retry_accepted_at_0_85(
    harness_factory, seed_graph: str, tmp_path: Path
) -> None:
    harness = await harness_factory(
        responder([plan(("s1", "GraphQuery", {"query": EXACT_PATH}, []))], text=lambda b: ""), seed_graph
    )
    handle = await harness.start("What are the connections between Entity X and Entity Y?")
    result: AgentRunResult = await handle.result()

    step = result.step_results[0]
    assert step.success and step.confidence.score == 0.85 and step.confidence.retry_count == 2
    assert "Entities verified to exist" in step.confidence.reasoning
    text = harness.text()
    assert "Empty result and 'X', 'Y' match nothing in the graph" in text
    assert "retry 1 of 3: retrying with the same arguments after a backoff" in text
    assert "retry 2 of 3: retrying with adjusted arguments" in text
    assert "toLower(x.name) CONTAINS toLower('X')" in text and "[*..5]" in text
    stated = shipped_confidence(result)  # the run's confidence is the calibrated probability of its answer
    assert stated is not None and result.confidence == stated and result.evidence_score == 0.85
    assert f"Confidence: {stated:.2f}" in harness.messages[-1].content
    assert "weakest supporting step 0.85" in harness.messages[-1].content
    # Every attempt is in the audit trail, and the metrics moved.
    record = json.loads((tmp_path / "audit.jsonl").read_text().splitlines()[-1])
    attempts = record["execution"][0]["attempts"]
    assert [a["rung"] for a in attempts] == ["initial", "same", "adjusted"]
    assert [a["confidence_score"] for a in attempts] == [0.3, 0.3, 0.85]
    assert record["final_confidence"] == stated and record["execution"][0]["retry_count"] == 2
    assert "output" not in attempts[0]  # include_raw_outputs is off by default
    assert harness.metric("agent_retry_count_total", function="GraphQuery") == 2
    assert harness.metric("agent_retry_count_total", function="GraphQuery", rung="same") == 1
    assert harness.metric("agent_retry_count_total", function="GraphQuery", rung="adjusted") == 1
    assert harness.metric("agent_confidence_failures_total") == 2
    assert harness.metric("agent_confidence_score_count", function="GraphQuery") == 3
    assert harness.metric("agent_retry_success_rate") == 1.0
    assert harness.metric("agent_plan_complexity_sum") == 1
    assert harness.metric("agent_answer_confidence_count") == 1
    assert harness.metric("agent_answer_confidence_sum") == stated
    # The same run in TrustGraph's agent-manager's names: one session, three tool calls, the LLM's calls metered.
    assert harness.metric("tg_agent_session_total", processor="agent-manager", outcome="completed") == 1
    assert harness.metric("tg_agent_session_total", outcome="error") == 0
    assert harness.metric("tg_agent_iteration_count_sum", processor="agent-manager") == 3
    assert harness.metric("tg_agent_tool_invocation_total", processor="agent-manager", tool="GraphQuery") == 3
    assert harness.metric("tg_agent_tool_duration_seconds_count", tool="GraphQuery") == 3
    llm_calls = harness.metric("tg_agent_llm_duration_seconds_count", processor="agent-manager")
    assert llm_calls >= 2  # at least the plan and the answer, each timed
    # The scripted server reports 10 prompt and 5 completion tokens a call; warm-ups are not run by this harness.
    assert harness.metric("tg_metering_tokens_total", model="scripted", direction="input") == 10 * llm_calls
    assert harness.metric("tg_metering_tokens_total", model="scripted", direction="output") == 5 * llm_calls


async def test_seed_5_5_three_steps_failing_middle_step_recovers_on_retry(harness_factory, seed_graph: str) -> None:
    find_documents = "MATCH (d:Document) WHERE d.topic = 'AI regulation' RETURN d.title AS title"
    attempts = {"topics": 0}

    def text(body: dict[str, Any]) -> str:
        prompt = body["messages"][-1]["content"]
        if "Extract the key topics" in prompt:
            attempts["topics"] += 1
            if attempts["topics"] == 1:
                return "Maybe something about governance, probably budgets and weather."  # ungrounded
            return "Key topics: EU AI Act obligations; US executive order on AI safety; model transparency reporting."
        return (
            "AI regulation centres on the EU AI Act obligations, the US executive order on AI safety and model "
            "transparency reporting."
        )

    harness = await harness_factory(
        responder(
            [
                plan(
                    ("s1", "GraphQuery", {"query": find_documents}, []),
                    ("s2", "TextCompletion", {"prompt": "Extract the key topics from these documents"}, ["s1"]),
                    ("s3", "TextCompletion", {"prompt": "Summarize the main topics"}, ["s2"]),
                )
            ],
            text=text,
        ),
        seed_graph,
    )
    handle = await harness.start("Summarize the main topics discussed about AI regulation")
    result: AgentRunResult = await handle.result()

    scores = {r.step_id: (r.success, r.confidence.retry_count) for r in result.step_results}
    assert scores == {"s1": (True, 0), "s2": (True, 1), "s3": (True, 0)}
    assert len(harness.messages) >= 6
    assert harness.kinds()[-1] == "answer"
    s2_observations = [
        m.content
        for m in harness.messages
        if m.message_type == "observation" and ("Key topics" in m.content or "Maybe something" in m.content)
    ]
    assert "is below the threshold 0.70" in s2_observations[0] and "meets the threshold 0.70" in s2_observations[1]


async def exhaust(harness_factory, seed_graph: str, **agent: Any) -> tuple[Harness, Any]:  # type: ignore[no-untyped-def]
    """A run whose only step never reaches its threshold, now waiting for a human."""
    harness = await harness_factory(
        responder([plan(("s1", "GraphQuery", {"query": NEVER_FOUND}, []))], text=lambda b: ""), seed_graph, **agent
    )
    handle = await harness.start("Who is the partner of Entity X?")
    status = await harness.wait_for_override(handle)
    assert status["pending_override"]["step_id"] == "s1" and status["phase"] == "awaiting_override"
    assert status["pending_override"]["choices"] == ["accept", "retry", "skip", "abort"]
    return harness, handle


async def test_metrics_move_as_attempts_end_not_when_the_run_does(harness_factory, seed_graph: str) -> None:
    """A run that climbed the retry ladder and waits for a human already shows its attempts and retries."""
    harness, handle = await exhaust(harness_factory, seed_graph, max_retries=2)
    assert harness.metric("agent_retry_count_total", function="GraphQuery") == 2
    assert harness.metric("agent_confidence_failures_total") == 3
    assert harness.metric("agent_confidence_score_count", function="GraphQuery") == 3
    assert harness.metric("agent_step_execution_seconds_count", function="GraphQuery") == 3
    assert harness.metric("agent_plan_complexity_count") == 0  # the run's own figures wait for its end
    await handle.execute_update("submit_override", Override(step_id="s1", decision="skip"))
    await handle.result()
    assert harness.metric("agent_plan_complexity_count") == 1
    assert harness.metric("agent_retry_count_total", function="GraphQuery") == 2  # counted once, not again


@pytest.mark.parametrize("via", ["signal", "update"])
async def test_override_accept_uses_the_low_confidence_result(harness_factory, seed_graph: str, via: str) -> None:
    harness, handle = await exhaust(harness_factory, seed_graph, max_retries=1)
    decision = Override(step_id="s1", decision="accept", by="dana", reason="checked by hand")
    if via == "signal":
        await handle.signal("override", decision)
    else:
        assert await handle.execute_update("submit_override", decision) == "accept recorded for step s1"
    result: AgentRunResult = await handle.result()
    assert result.step_results[0].success and "(accepted by dana)" in result.step_results[0].confidence.reasoning
    assert "Step s1 accepted by dana at confidence 0.30" in harness.text()
    assert "Override needed for step s1 (GraphQuery)" in harness.text()
    assert result.confidence == 0.3 and "Confidence: 0.30 (low)" in harness.messages[-1].content


@pytest.mark.parametrize("via", ["signal", "update"])
async def test_override_retry_with_new_arguments(harness_factory, seed_graph: str, via: str) -> None:
    harness, handle = await exhaust(harness_factory, seed_graph, max_retries=1)
    decision = Override(
        step_id="s1", decision="retry", arguments={"query": "MATCH (n:Entity {name: 'Entity X'}) RETURN n.name"}
    )
    if via == "signal":
        await handle.signal("override", decision)
    else:
        await handle.execute_update("submit_override", decision)
    result: AgentRunResult = await handle.result()
    assert result.step_results[0].success and result.step_results[0].confidence.score == 0.9
    assert "Entity X" in result.step_results[0].output
    # The ladder's retry and the human's are told apart on the dashboard's "retries by rung".
    assert harness.metric("agent_retry_count_total", function="GraphQuery", rung="human") == 1
    assert harness.metric("agent_retry_count_total", function="GraphQuery") == 2


@pytest.mark.parametrize("via", ["signal", "update"])
async def test_override_skip_and_abort(harness_factory, seed_graph: str, via: str) -> None:
    for decision, check in (("skip", "skipped"), ("abort", "aborted")):
        harness, handle = await exhaust(harness_factory, seed_graph, max_retries=0)
        override = Override(step_id="s1", decision=decision, by="sam", reason="not needed")
        if via == "signal":
            await handle.signal("override", override)
        else:
            await handle.execute_update("submit_override", override)
        result: AgentRunResult = await handle.result()
        if check == "skipped":
            assert not result.step_results[0].success and result.error is None
            assert "Step s1 skipped by sam." in harness.text()
            assert harness.kinds()[-1] == "answer" and "I could not establish an answer" in harness.messages[-1].content
        else:
            assert result.error == "Aborted by sam at step s1: not needed"
            final = harness.messages[-1]
            assert final.message_type == "error" and final.error and final.error.message == result.error


async def test_update_validator_rejects_bad_overrides(harness_factory, seed_graph: str) -> None:
    _, handle = await exhaust(harness_factory, seed_graph, max_retries=0)
    for override, reason in (
        (Override(step_id="s9", decision="accept"), "unknown step 's9'"),
        (Override(step_id="s1", decision="approve"), "invalid decision 'approve'"),
        (Override(step_id="s1", decision="skip", arguments={"query": "x"}), "only be given with"),
    ):
        with pytest.raises(WorkflowUpdateFailedError) as caught:
            await handle.execute_update("submit_override", override)
        assert reason in str(caught.value.cause)
    # A bad signal is ignored (and visible in the status); the valid update goes through.
    await handle.signal("override", Override(step_id="s7", decision="abort"))
    status = await handle.query("status")
    assert status["pending_override"] and "unknown step 's7'" in status["rejected_overrides"][0]
    await handle.execute_update("submit_override", Override(step_id="s1", decision="accept"))
    result: AgentRunResult = await handle.result()
    assert result.step_results[0].success and result.error is None


async def test_no_override_within_the_timeout_ends_in_graceful_failure(harness_factory, seed_graph: str) -> None:
    harness = await harness_factory(
        responder([plan(("s1", "GraphQuery", {"query": NEVER_FOUND}, []))], text=lambda b: ""),
        seed_graph,
        max_retries=1,
    )
    handle = await harness.start("Who is the partner of Entity X?")
    started = time.monotonic()
    result: AgentRunResult = await handle.result()  # 10 minutes skipped
    assert time.monotonic() - started < 60
    assert result.error is None and result.confidence == 0.0
    assert "No override arrived for step s1 within 600 s" in harness.text()
    final = harness.messages[-1]
    assert final.message_type == "answer" and "Confidence: 0.00 (low)" in final.content
    assert "s1 (low_confidence)" in final.content


async def test_invalid_then_cyclic_then_repaired_plan(harness_factory, seed_graph: str) -> None:
    cyclic = plan(
        ("s1", "GraphQuery", {"query": "MATCH (n:Entity) RETURN n.name"}, ["s2"]),
        ("s2", "TextCompletion", {"prompt": "Summarize"}, ["s1"]),
    )
    good = plan(("s1", "GraphQuery", {"query": "MATCH (n:Entity) RETURN n.name AS name"}, []))
    harness = await harness_factory(responder([cyclic, good], text=lambda b: ""), seed_graph)
    result: AgentRunResult = await (await harness.start("List the entities")).result()
    assert result.error is None and result.step_results[0].success

    harness = await harness_factory(responder([cyclic], text=lambda b: ""), seed_graph)
    result = await (await harness.start("List the entities")).result()
    assert result.error is not None and "dependency cycle: s1 -> s2 -> s1" in result.error
    assert harness.messages[-1].message_type == "error"


async def test_a_tool_that_keeps_failing_is_reported_and_its_dependents_skipped(
    harness_factory, seed_graph: str
) -> None:
    def respond(body: dict[str, Any]) -> tuple[int, str]:
        if is_planning(body):
            return 200, plan(
                ("s1", "GraphQuery", {"query": "MATCH (n:Entity) RETURN n.name AS name"}, []),
                ("s2", "TextCompletion", {"prompt": "Describe them"}, ["s1"]),
                ("s3", "TextCompletion", {"prompt": "Conclude"}, ["s2"]),
            )
        if is_synthesis(body):
            return 200, "Entity X, Entity Y, Entity Z and Entity W exist."
        return 503, "model overloaded"

    harness = await harness_factory(respond, seed_graph, max_retries=1, override_enabled=False)
    result: AgentRunResult = await (await harness.start("Describe the entities")).result()
    outcomes = {r.step_id: r.success for r in result.step_results}
    assert outcomes == {"s1": True, "s2": False}
    assert "HTTP 503" in result.step_results[1].output
    text = harness.text()
    assert "Skipping s3: they depend on step s2" in text
    assert result.confidence == round(0.9 * 1 / 3, 2)
    assert "s2 (low_confidence), s3 (skipped)" in harness.messages[-1].content


async def test_independent_steps_overlap_in_time_when_parallel(harness_factory, seed_graph: str) -> None:
    spans: dict[str, tuple[float, float]] = {}
    lock = threading.Lock()

    def respond(body: dict[str, Any]) -> tuple[int, str]:
        if is_planning(body):
            return 200, plan(
                ("a", "TextCompletion", {"prompt": "First view"}, []),
                ("b", "TextCompletion", {"prompt": "Second view"}, []),
            )
        if is_synthesis(body):
            return 200, "Both views."
        name = re.search(r"(First|Second) view", body["messages"][-1]["content"]).group(1)
        begin = time.monotonic()
        time.sleep(1.0)
        with lock:
            spans[name] = (begin, time.monotonic())
        return 200, f"{name} view text"

    harness = await harness_factory(respond, seed_graph, parallel_execution=True)
    await (await harness.start("Two views please")).result()
    (a0, a1), (b0, b1) = spans["First"], spans["Second"]
    assert a0 < b1 and b0 < a1, spans  # the two steps ran at the same time


async def test_request_level_settings_are_limited_and_clamped(harness_factory, seed_graph: str) -> None:
    harness = await harness_factory(
        responder([plan(("s1", "GraphQuery", {"query": NEVER_FOUND}, []))], text=lambda b: ""),
        seed_graph,
        override_enabled=False,
    )
    handle = await harness.start(
        "Who is the partner of Entity X?",
        settings=AgentSettings(override_enabled=False),
        plan=json.dumps({"max_retries": 99, "llm_api_key": "x", "confidence_threshold": 0.5}),
    )
    result: AgentRunResult = await handle.result()
    text = harness.text()
    assert "max_retries 99 clamped to 5" in text and "ignored 'llm_api_key'" in text
    assert "retry 1 of 5" in text
    # The simplified rung proposes nothing new (the scripted adjust_step has nothing better): the ladder stops
    # there instead of running the same query twice more.
    assert result.step_results[0].confidence.retry_count == 3 and "found nothing new to try" in text


async def test_a_run_waiting_for_a_human_says_so_in_its_current_details(harness_factory, seed_graph: str) -> None:
    """What `temporal workflow describe` and the Web UI show while the run waits: the step, why, and the commands
    that answer it; cleared once a human decided."""
    from temporalio.api.sdk.v1 import WorkflowMetadata

    _, handle = await exhaust(harness_factory, seed_graph, max_retries=0)
    waiting = await handle.query("__temporal_workflow_metadata", result_type=WorkflowMetadata)
    details = waiting.current_details
    assert details.startswith("**Waiting for a human** on step `s1` (GraphQuery)")
    assert f"tg-confidence override {handle.id} s1 accept" in details
    assert f"temporal workflow update execute --workflow-id {handle.id} --name submit_override" in details
    await handle.execute_update("submit_override", Override(step_id="s1", decision="skip"))
    await handle.result()
    decided = await handle.query("__temporal_workflow_metadata", result_type=WorkflowMetadata)
    assert decided.current_details == ""
