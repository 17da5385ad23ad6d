"""Passwords in connection strings that the redaction used to cut short: one holding `@` (redaction stopped at
the first, and `redis://[REDACTED]@ss-w0rd!@host` showed the rest) and one holding a space (not redacted at
all). In the worker's FalkorDB URL while FalkorDB is down, the run ends with an error naming FalkorDB at
`scheme://host:port`, built from the parsed URL; in a tool's output, every credential is redacted up to the
last `@` before the host. Neither password appears in the run's history, its messages, its error, the audit
record or the model's prompts (real Temporal dev server and worker, FalkorDB; the LLM scripted)."""

from __future__ import annotations

import asyncio
import base64
import re
from contextlib import AsyncExitStack
from pathlib import Path

import pytest
from temporalio.client import WorkflowHandle
from temporalio.testing import WorkflowEnvironment

from contracts.run import AgentRunResult
from embedded.processes import free_port
from tests.agent_harness import open_harness, plan, responder
from tests.scripted_llm import ScriptedLLM
from tests.seeded_graph import seeded_graph

PASSWORDS = ["Pa@ss-w0rd!", "Pa ss w0rd"]
QUERY = "MATCH (v:Vault) RETURN v.name AS name, v.note AS note"
ANSWER = "The vault's note is redacted."


async def history_text(handle: WorkflowHandle) -> str:
    """The run's history as `temporal workflow show --output json` exports it, with every payload decoded."""
    exported = (await handle.fetch_history()).to_json()
    payloads = re.findall(r'"data": "([A-Za-z0-9+/=]*)"', exported)
    return "\n".join([exported, *(base64.b64decode(p).decode("utf-8", "replace") for p in payloads)])


def leaked(texts: dict[str, str]) -> list[str]:
    """Where a piece of either password shows (the part after its `@`, or after its space, included)."""
    return [
        f"{piece!r} in {where}" for where, text in texts.items() for piece in ("w0rd", "Pa ss", "Pa@") if piece in text
    ]


@pytest.mark.parametrize("password", PASSWORDS)
async def test_a_falkordb_url_is_shown_as_scheme_host_and_port(
    temporal_env: WorkflowEnvironment, tmp_path: Path, password: str
) -> None:
    port = free_port()  # nothing listens: FalkorDB is down
    audit = tmp_path / "audit.jsonl"
    async with AsyncExitStack() as stack:
        llm = stack.enter_context(
            ScriptedLLM(responder([plan(("s1", "GraphQuery", {"query": QUERY}, []))], text=lambda b: "", answer=ANSWER))
        )
        harness = await open_harness(
            stack,
            temporal_env.client,
            llm.base_url,
            f"redis://default:{password}@127.0.0.1:{port}",
            "vault",
            audit,
            max_retries=0,
        )
        handle = await harness.start("What opens the vault?")
        result: AgentRunResult = await asyncio.wait_for(handle.result(), 180)
        history = await history_text(handle)
    said = harness.text() + (result.error or "")
    assert f"FalkorDB at redis://127.0.0.1:{port} is unreachable" in said, said
    assert leaked({"the history": history, "the messages and error": said, "the audit record": audit.read_text()}) == []


async def test_credentials_in_a_tools_output_are_redacted_up_to_the_host(
    temporal_env: WorkflowEnvironment, falkordb_url: str, unique: str, tmp_path: Path
) -> None:
    # After the 30 characters the schema shows of a value as an example (which it shows redacted).
    note = "Connection strings for the vault: " + " and ".join(
        f"redis://default:{p}@db.internal:6379/0" for p in PASSWORDS
    )
    audit = tmp_path / "audit.jsonl"
    async with AsyncExitStack() as stack:
        graph = await stack.enter_async_context(
            seeded_graph(falkordb_url, f"vault-{unique}", f"CREATE (:Vault {{name: 'Main vault', note: '{note}'}})")
        )
        llm = stack.enter_context(
            ScriptedLLM(responder([plan(("s1", "GraphQuery", {"query": QUERY}, []))], text=lambda b: "", answer=ANSWER))
        )
        harness = await open_harness(
            stack,
            temporal_env.client,
            llm.base_url,
            falkordb_url,
            graph,
            audit,
            max_retries=0,
            confidence_threshold=0.1,
            include_raw_outputs=True,
        )
        handle = await harness.start("What opens the vault?")
        result: AgentRunResult = await asyncio.wait_for(handle.result(), 180)
        history = await history_text(handle)
        prompts = str(llm.requests)
    assert result.error is None and result.answer.startswith(ANSWER)
    assert "redis://[REDACTED]@db.internal:6379/0" in history  # the host stays, for whoever reads the record
    assert (
        leaked(
            {
                "the history": history,
                "the messages": harness.text(),
                "the audit record": audit.read_text(),
                "the model's prompts": prompts,
            }
        )
        == []
    )
