"""The README's main job with the real local model: `tg-confidence up` starts every part from its wheel,
loads the demo graph, and answers a demo question with its steps streamed."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from cli.main import DEMO_QUESTION
from embedded import demo_graph
from embedded.processes import free_port

pytestmark = pytest.mark.real_llm


def leading_supplier() -> str:
    """Computed from the deterministic demo dataset itself, independently of any Cypher."""
    data = demo_graph.generate()
    issued_to = data.edges[("PurchaseOrder", "po_number", "ISSUED_TO", "Supplier", "supplier_id")]
    counts = Counter(e["to"] for e in issued_to)
    leader_id = counts.most_common(1)[0][0]
    return next(s["name"] for s in data.nodes["Supplier"] if s["supplier_id"] == leader_id)


async def test_up_answers_the_demo_question_with_the_local_model(tmp_path: Path) -> None:
    ports = {name: free_port() for name in
             ("temporal-port", "ui-port", "pulsar-port", "falkordb-port", "llm-port", "metrics-port")}
    args = [arg for name, port in ports.items() for arg in (f"--{name}", str(port))]
    cmd = [sys.executable, "-m", "cli", "up", "--data-dir", str(tmp_path), "--demo", "--exit-after-ask",
           "--timeout", "400", *args]
    result = await asyncio.to_thread(subprocess.run, cmd, capture_output=True, text=True, timeout=600)
    out = result.stdout
    assert result.returncode == 0, f"stdout:\n{out}\nstderr:\n{result.stderr[-3000:]}"
    assert f"? {DEMO_QUESTION}" in out
    for marker in ("[thought] Planning how to answer", "[observation] Plan with", "[thought] Step ",
                   "[answer] ", "Confidence: ", "Run in the Temporal Web UI: http://127.0.0.1:"):
        assert marker in out, marker
    # The answer comes from the graph: the leading supplier by orders is named in it.
    answer = out.split("[answer] ", 1)[1]
    assert leading_supplier() in answer
