"""`tg-confidence up`: a taken port or an unreachable external part is named, and nothing is left running."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

from temporalio.testing import WorkflowEnvironment

from embedded import demo_graph
from embedded.processes import free_port
from tests.scripted_llm import ScriptedLLM, is_planning, is_routing, is_synthesis


def run_up(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cli", "up", "--exit-after-ask", *args], capture_output=True, text=True, timeout=timeout
    )


def temporal_address(env: WorkflowEnvironment) -> str:
    return env.client.service_client.config.target_host


def free_ports(*names: str) -> list[str]:
    return [arg for name in names for arg in (f"--{name}", str(free_port()))]


async def test_a_taken_port_is_named_with_its_part_and_nothing_starts(tmp_path: Path) -> None:
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    taken = holder.getsockname()[1]
    try:
        with ScriptedLLM(lambda body: (200, "{}")) as llm:
            result = await asyncio.to_thread(
                run_up,
                "--data-dir",
                str(tmp_path),
                "--pulsar-port",
                str(taken),
                "--llm-base-url",
                llm.base_url,
                *free_ports("temporal-port", "ui-port", "falkordb-port", "metrics-port"),
            )
    finally:
        holder.close()
    assert result.returncode == 2, result.stderr
    assert f"Pulsar broker (pulsar-lite): broker port {taken} on 127.0.0.1 is already in use" in result.stderr
    assert not (tmp_path / "temporal.log").exists()  # checked before anything was started


async def test_an_unreachable_external_part_is_named_with_its_address(
    tmp_path: Path, temporal_env: WorkflowEnvironment, falkordb_url: str
) -> None:
    dead_pulsar = f"pulsar://127.0.0.1:{free_port()}"
    with ScriptedLLM(lambda body: (200, "{}")) as llm:
        result = await asyncio.to_thread(
            run_up,
            "--data-dir",
            str(tmp_path),
            "--temporal-address",
            temporal_address(temporal_env),
            "--pulsar-url",
            dead_pulsar,
            "--falkordb-url",
            falkordb_url,
            "--llm-base-url",
            llm.base_url,
            *free_ports("metrics-port"),
        )
    assert result.returncode == 2, result.stderr
    assert f"Pulsar at {dead_pulsar} is unreachable" in result.stderr


async def test_an_unreachable_llm_is_named_with_its_address(
    tmp_path: Path, temporal_env: WorkflowEnvironment, falkordb_url: str, pulsar_url: str
) -> None:
    dead_llm = f"http://127.0.0.1:{free_port()}/v1"
    result = await asyncio.to_thread(
        run_up,
        "--data-dir",
        str(tmp_path),
        "--temporal-address",
        temporal_address(temporal_env),
        "--pulsar-url",
        pulsar_url,
        "--falkordb-url",
        falkordb_url,
        "--llm-base-url",
        dead_llm,
        *free_ports("metrics-port"),
    )
    assert result.returncode == 2, result.stderr
    assert f"LLM server at {dead_llm.removesuffix('/v1')} is unreachable" in result.stderr  # scheme://host:port


SUPPLIERS = len(demo_graph.generate().nodes["Supplier"])


def counting_model(body: dict[str, Any]) -> tuple[int, str]:
    if is_routing(body):
        return 200, json.dumps({"intent": "QUERY"})
    if is_planning(body):
        return 200, json.dumps(
            {
                "steps": [
                    {
                        "id": "s1",
                        "function": "GraphQuery",
                        "dependencies": [],
                        "arguments": {"query": "MATCH (s:Supplier) RETURN count(s) AS suppliers"},
                    }
                ]
            }
        )
    if is_synthesis(body):  # a "how many" is answered with the figure (`up` loads the demo graph)
        return 200, f"The graph holds {SUPPLIERS} suppliers."
    return 200, "ok"


async def test_up_on_a_named_flow_serves_and_asks_on_that_flows_topics(
    tmp_path: Path, temporal_env: WorkflowEnvironment, falkordb_url: str, pulsar_url: str
) -> None:
    """`up -w/-f` hands the flow's topics (and the configured task queues) to every part, and its own --ask
    goes to them: an answer comes back only if the bridge serves the topics `up` printed."""
    unique = uuid.uuid4().hex[:8]
    env = {**os.environ, "TGCA_QUEUES__WORKFLOW": f"tgca-workflows-{unique}"}
    with ScriptedLLM(counting_model) as llm:
        result = await asyncio.to_thread(
            subprocess.run,
            [
                sys.executable,
                "-m",
                "cli",
                "up",
                "--exit-after-ask",
                "--data-dir",
                str(tmp_path),
                "-w",
                f"acme{unique}",
                "-f",
                "myflow",
                "--ask",
                "How many suppliers are there?",
                "--timeout",
                "60",
                "--temporal-address",
                temporal_address(temporal_env),
                "--pulsar-url",
                pulsar_url,
                "--falkordb-url",
                falkordb_url,
                "--graph-name",
                f"up-{unique}",
                "--llm-base-url",
                llm.base_url,
                "--http-port",
                "0",
                *free_ports("metrics-port"),
            ],
            capture_output=True,
            text=True,
            timeout=180,
            env=env,
        )
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"request non-persistent://tg/request/agent:acme{unique}:myflow" in result.stdout
    assert f"response non-persistent://tg/response/agent:acme{unique}:myflow" in result.stdout
    assert f"The graph holds {SUPPLIERS} suppliers." in result.stdout


def run_command(*argv: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *argv], capture_output=True, text=True, timeout=timeout)


async def test_ask_with_pulsar_down_names_it_and_exits_without_a_traceback() -> None:
    dead_pulsar = f"pulsar://127.0.0.1:{free_port()}"
    result = await asyncio.to_thread(run_command, "cli", "ask", "-p", dead_pulsar, "Who supplies Bearing Pro?")
    assert result.returncode == 2, result.stderr
    assert f"Pulsar at {dead_pulsar} is unreachable" in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().count("\n") == 0, result.stderr  # the one line, not the client's reconnect log


async def test_the_bridge_with_pulsar_down_names_it_and_exits_without_a_traceback(
    temporal_env: WorkflowEnvironment,
) -> None:
    dead_pulsar = f"pulsar://127.0.0.1:{free_port()}"
    result = await asyncio.to_thread(
        run_command, "bridge", "-p", dead_pulsar, "-P", "0", "--temporal-address", temporal_address(temporal_env)
    )
    assert result.returncode == 2, result.stderr
    assert f"Pulsar at {dead_pulsar} is unreachable" in result.stderr
    assert "Traceback" not in result.stderr
