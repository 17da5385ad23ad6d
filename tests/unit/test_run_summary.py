"""What the Temporal Web UI shows for a run before it did anything: its question on one short line, and
where the request came from; never a secret the question carried (a history is readable by every operator)."""

from __future__ import annotations

import pytest

from bridge.run_summary import DETAILS_BYTES, SUMMARY_BYTES, run_details, run_summary
from contracts.override import OverrideRequest
from contracts.wire import AgentRequest
from overrides.checks import awaiting_details

pytestmark = pytest.mark.unit


def test_the_summary_is_the_question_on_one_short_line() -> None:
    assert run_summary(AgentRequest(question="Which supplier\nhas the most  orders?")) == (
        "Which supplier has the most orders?"
    )
    long = run_summary(AgentRequest(question="why " * 200))
    assert len(long.encode()) <= SUMMARY_BYTES and long.endswith("...")


def test_a_long_question_in_any_script_stays_within_the_server_s_byte_limits() -> None:
    """Temporal refuses a start whose summary exceeds 400 bytes or details 20 KB: counted in bytes, not
    characters (each of these is three bytes in UTF-8)."""
    request = AgentRequest(question="哪个供应商的采购订单最多" * 2000)
    summary, details = run_summary(request), run_details("r-1", request, "req", "resp")
    assert len(summary.encode()) <= SUMMARY_BYTES and summary.startswith("哪个供应商")
    assert len(details.encode()) <= DETAILS_BYTES and "- request id: `r-1`" in details


def test_summary_and_details_carry_no_secret_from_the_question() -> None:
    request = AgentRequest(question="Use api_key: hunter2hunter2 to list suppliers", conversation_id="c-1")
    details = run_details("r-1", request, "req-topic", "resp-topic")
    assert "hunter2hunter2" not in run_summary(request) and "hunter2hunter2" not in details
    assert "- request id: `r-1`" in details and "- conversation: `c-1`" in details
    assert "session" not in details  # facts the request does not have are left out


def test_the_waiting_details_name_the_step_why_and_the_commands() -> None:
    pending = OverrideRequest(
        step_id="s2",
        function="GraphQuery",
        score=0.3,
        threshold=0.8,
        reasoning="Empty result",
        retries=3,
        timeout_s=600,
    )
    details = awaiting_details("agent-r-1", pending, "Override needed.")
    assert details.splitlines()[0] == "**Waiting for a human** on step `s2` (GraphQuery): Override needed."
    assert "Confidence 0.30 against a threshold of 0.80 after 3 retries: Empty result" in details
    assert "`tg-confidence override agent-r-1 s2 accept`" in details
    assert '--workflow-id agent-r-1 --name submit_override --input \'{"step_id": "s2"' in details
