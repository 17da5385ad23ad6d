"""`tg-confidence ask` as a person at a terminal sees it (a pseudo-terminal) and as a script does (a pipe),
against the real Temporal dev server, broker and graph with the worker and bridge running in this process
and a scripted model: at a terminal, colour, one progress bar per batch and the inline override prompt
(answered by typing into the terminal); with NO_COLOR, no colour; in a pipe, the plain lines scripts parse,
no prompt, and the run waits for `tg-confidence override`."""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path
from typing import Any

from temporalio.testing import WorkflowEnvironment

from contracts.override import OverrideIdentity, Role
from contracts.run import AgentRunResult
from embedded import demo_graph
from overrides.signing import new_key_pair
from tests.integration.test_action_path import SUPPLIER, DomainModel
from tests.scripted_llm import ScriptedLLM, is_planning, is_routing, is_synthesis

ESCAPE = re.compile(r"\x1b\[[0-9;]*m")  # a colour or style code
NOBODY = "MATCH (s:Supplier {name: 'Nobody'}) RETURN s.name"
NOBODY_EITHER = "MATCH (s:Supplier {name: 'Nobody either'}) RETURN s.name"
PROMPT = "Your decision ["
QUESTION = "Which supplier is our oldest partner?"


def weak_step_model(body: dict[str, Any]) -> tuple[int, str]:
    """Plans one graph query that finds nothing (confidence 0.30, below 0.80: a human is asked)."""
    if is_routing(body):
        return 200, json.dumps({"intent": "QUERY"})
    if is_planning(body):
        return 200, json.dumps(
            {"steps": [{"id": "s1", "function": "GraphQuery", "dependencies": [], "arguments": {"query": NOBODY}}]}
        )
    if is_synthesis(body):
        return 200, "No supplier by that name is in the graph."
    return 200, "ok"


def cli(stack, temporal_env: WorkflowEnvironment, *argv: str) -> list[str]:  # type: ignore[no-untyped-def]
    """`tg-confidence ...` pointed at the test's stack: its Temporal, and for `ask` its workspace's topics."""
    flow = ["-w", stack.config.workspace, "--ui-url", ""] if argv[0] == "ask" else []
    return [
        sys.executable,
        "-m",
        "cli",
        *argv,
        *flow,
        "-p",
        stack.config.pulsar_url,
        "--temporal-address",
        temporal_env.client.service_client.config.target_host,
    ]


def environment(**changes: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TGCA_") and k not in ("NO_COLOR", "FORCE_COLOR")}
    env["TERM"] = "xterm-256color"
    for name, value in changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def converse(
    argv: list[str], env: dict[str, str], script: list[tuple[str, str]], timeout_s: float = 120
) -> tuple[int, str]:
    """Run `argv` on a pseudo-terminal (120x40): each time the output shows the next `expect` of `script`
    (after what was already answered), type its answer and Enter. The exit code and all that was shown."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True)
    os.close(slave)
    shown, answered_to, step = b"", 0, 0
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            readable, _, _ = select.select([master], [], [], 0.1)
            if readable:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: the program ended and closed the terminal
                    break
                if not chunk:
                    break
                shown += chunk
            if step < len(script):
                expect, answer = script[step]
                at = shown.find(expect.encode(), answered_to)
                if at >= 0:
                    os.write(master, answer.encode() + b"\n")
                    answered_to, step = at + len(expect), step + 1
            elif proc.poll() is not None and not readable:
                break
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"still running after {timeout_s:.0f} s (step {step}):\n{shown.decode(errors='replace')[-3000:]}"
                )
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        os.close(master)
    return proc.returncode, shown.decode(errors="replace")


def run_of(output: str) -> str:
    """The workflow id the override request named."""
    workflow_id = re.search(r"tg-confidence override (agent-\S+) ", output)
    assert workflow_id, output
    return workflow_id.group(1)


async def result_of(stack, output: str) -> AgentRunResult:  # type: ignore[no-untyped-def]
    return await stack.client.get_workflow_handle(run_of(output), result_type=AgentRunResult).result()


async def test_a_weak_step_is_decided_at_the_prompt_retry_with_arguments_then_accept(
    make_stack, temporal_env: WorkflowEnvironment
) -> None:
    """A typo is asked again; retry takes a new query (still weak: asked again); accept ends the run."""
    with ScriptedLLM(weak_step_model) as llm:
        stack = await make_stack(llm.base_url, max_retries=0)
        code, shown = await asyncio.to_thread(
            converse,
            cli(stack, temporal_env, "ask", QUESTION, "--by", "dana"),
            environment(),
            [(PROMPT, "maybe"), (PROMPT, "r"), ("new query", NOBODY_EITHER), (PROMPT, "accept checked by hand")],
        )
        result = await result_of(stack, shown)
    plain = ESCAPE.sub("", shown)
    assert code == 0, plain
    assert ESCAPE.search(shown), "no colour at a terminal"
    assert "Step s1 (GraphQuery) needs your decision: confidence 0.30 is below 0.80" in plain
    assert "'maybe' is not a choice here; choose one of accept, retry, skip, abort" in plain
    assert "retry recorded for step s1" in plain and "accept recorded for step s1" in plain
    assert plain.count(PROMPT) == 3  # the typo, retry, and accept once the retried query stayed weak
    assert "[answer] No supplier by that name is in the graph." in plain
    assert result.error is None and result.step_results[0].success
    assert "(accepted by dana)" in result.step_results[0].confidence.reasoning
    assert f"Step s1 (retry 1): GraphQuery(query={NOBODY_EITHER})" in plain


async def test_no_color_and_a_signed_decision_at_the_prompt(
    make_stack, temporal_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    """NO_COLOR: not one escape code, the prompt all the same; a run that takes signed decisions is decided
    with the key given to ask."""
    pem, public = new_key_pair()
    key = tmp_path / "ana.pem"
    key.write_bytes(pem)
    identity = OverrideIdentity(name="ana", public_key=public, roles=[Role.REVIEW])
    with ScriptedLLM(weak_step_model) as llm:
        stack = await make_stack(llm.base_url, max_retries=0, override_keys=[identity])
        code, shown = await asyncio.to_thread(
            converse,
            cli(stack, temporal_env, "ask", QUESTION, "--by", "ana", "--key", str(key)),
            environment(NO_COLOR="1"),
            [(PROMPT, "skip not needed")],
        )
        result = await result_of(stack, shown)
        # decided: `tg-confidence override` with the key finds no request to sign over, and says so
        late = await asyncio.to_thread(
            subprocess.run,
            cli(stack, temporal_env, "override", run_of(shown), "s1", "accept", "--by", "ana", "--key", str(key)),
            capture_output=True,
            text=True,
            timeout=60,
            env=environment(),
        )
    assert code == 0, shown
    assert late.returncode == 1 and "is not awaiting an override of step s1 (it waits on no step)" in late.stderr
    assert "\x1b[" not in shown
    assert "skip recorded for step s1" in shown
    assert "Step s1 skipped by ana" in shown
    assert result.error is None and not result.step_results[0].success


async def test_a_batch_is_approved_at_the_prompt_and_shown_as_one_progress_bar(
    make_stack, demo_copy, temporal_env: WorkflowEnvironment
) -> None:
    graph_name, _ = demo_copy
    with ScriptedLLM(DomainModel()) as llm:
        stack = await make_stack(
            llm.base_url,
            graph_name=graph_name,
            ontology_path=str(demo_graph.ONTOLOGY_PATH),
            action_window=8,
            action_max_concurrent=4,
        )
        code, shown = await asyncio.to_thread(
            converse,
            cli(stack, temporal_env, "ask", f"Pay all orders of supplier {SUPPLIER}"),
            environment(),
            [(PROMPT, "a")],
        )
    plain = ESCAPE.sub("", shown)
    assert code == 0, plain
    assert (
        "Approval needed: makePayment on 20 PurchaseOrder of Supplier 'Northwind Traders' (18 would succeed, "
        "2 would fail)"
    ) in plain
    assert "a[b]ort" in plain and "[r]etry" not in plain  # the approval's own choices
    assert "accept recorded for step approve" in plain
    assert "[progress " not in plain  # 20 entities: a bar, not a line each
    assert "makePayment on PurchaseOrder" in plain and "/20" in plain
    assert plain.count("[action error]") == 2 and "[action complete] 18 of 20 succeeded, 2 failed" in plain


async def test_in_a_pipe_ask_prints_plain_lines_and_never_prompts(
    make_stack, demo_copy, temporal_env: WorkflowEnvironment
) -> None:
    """A script's ask: no escape codes, no prompt (stdin is not a terminal), a line per batch entity; the
    approval comes from `tg-confidence override`, as the printed instructions say."""
    graph_name, _ = demo_copy
    with ScriptedLLM(DomainModel()) as llm:
        stack = await make_stack(
            llm.base_url,
            graph_name=graph_name,
            ontology_path=str(demo_graph.ONTOLOGY_PATH),
            action_window=8,
            action_max_concurrent=4,
        )
        asking = await asyncio.create_subprocess_exec(
            *cli(stack, temporal_env, "ask", f"Pay all orders of supplier {SUPPLIER}"),
            env=environment(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert asking.stdout is not None
        lines: list[str] = []
        while not any("tg-confidence override" in line for line in lines):
            lines.append((await asyncio.wait_for(asking.stdout.readline(), 120)).decode())
        workflow_id = re.search(r"tg-confidence override (agent-\S+) approve accept", lines[-1])
        assert workflow_id, lines
        decided = await asyncio.create_subprocess_exec(
            *cli(stack, temporal_env, "override", workflow_id.group(1), "approve", "accept", "--by", "ops"),
            env=environment(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        said, complaint = await asyncio.wait_for(decided.communicate(), 60)
        assert decided.returncode == 0, complaint
        rest, errors = await asyncio.wait_for(asking.communicate(), 120)
    assert said.decode().strip() == "accept recorded for step approve"
    out = "".join(lines) + rest.decode()
    assert asking.returncode == 0, out + errors.decode()
    assert "\x1b[" not in out and PROMPT not in out and PROMPT not in errors.decode()
    assert out.startswith(f"? Pay all orders of supplier {SUPPLIER}\n[thought] ")
    progress = re.findall(r"^\[progress (\d+)/20\] PO-\S+ (done|FAILED)$", out, re.MULTILINE)
    assert sorted(int(n) for n, _ in progress) == list(range(1, 21))
    assert "[action complete] 18 of 20 succeeded, 2 failed" in out


JOIN = """
import hashlib, sys
from pathlib import Path
from embedded.progress import byte_progress
from embedded.model_weights import join_parts
parts = [Path(sys.argv[1]) / f"part{n}.bin" for n in range(3)]
for n, part in enumerate(parts):
    part.write_bytes(bytes([n]) * 3_000_000)
sha = hashlib.sha256(b"".join(p.read_bytes() for p in parts)).hexdigest()
with byte_progress("joining 3 model slices") as progress:
    join_parts(parts, Path(sys.argv[1]) / "model.gguf", sha, progress)
print("joined")
"""


def test_the_model_join_is_a_bar_at_a_terminal_and_one_line_in_a_pipe(tmp_path: Path) -> None:
    argv = [sys.executable, "-c", JOIN, str(tmp_path)]
    code, shown = converse(argv, environment(), [], timeout_s=60)
    assert code == 0 and "joined" in shown, shown
    assert ESCAPE.search(shown) and "━" in shown and "9.0/9.0 MB" in ESCAPE.sub("", shown)
    piped = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=environment())
    assert piped.returncode == 0 and piped.stdout == "joined\n"
    assert piped.stderr == "joining 3 model slices (9.0 MB) ...\n"


def test_version_is_the_package_s_at_a_terminal_and_in_a_pipe() -> None:
    from service.flags import package_version

    argv = [sys.executable, "-m", "cli", "--version"]
    piped = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=environment())
    assert piped.stdout == f"tg-confidence {package_version()}\n" and package_version() != "unknown"
    code, shown = converse(argv, environment(), [], timeout_s=60)
    assert code == 0 and shown.strip() == piped.stdout.strip()
