"""The README's main job with the real local model: `tg-confidence up` starts every part from its wheel,
loads the demo graph, and answers a demo question with its steps streamed."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from cli.up import DEMO_QUESTION
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


def what_the_parts_did(data_dir: Path) -> str:
    """The worker's last log lines and the model server's timings: which call a slow answer waited on."""

    def tail(name: str, keep: int, wanted: tuple[str, ...] = ()) -> str:
        path = data_dir / name
        if not path.exists():
            return f"({name}: none)"
        lines = [
            line[:400]
            for line in path.read_text(errors="replace").splitlines()
            if not wanted or any(w in line for w in wanted)
        ]
        return f"--- {name} (last {keep} lines of interest)\n" + "\n".join(lines[-keep:])

    return "\n".join([tail("worker.log", 40), tail("llm.log", 40, ("total time", "POST", "Error", "error"))])


async def test_up_answers_the_demo_question_with_the_local_model(tmp_path: Path) -> None:
    ports = {
        name: free_port()
        for name in (
            "temporal-port",
            "ui-port",
            "pulsar-port",
            "falkordb-port",
            "llm-port",
            "metrics-port",
            "http-port",
        )
    }
    args = [arg for name, port in ports.items() for arg in (f"--{name}", str(port))]
    cmd = [
        sys.executable,
        "-m",
        "cli",
        "up",
        "--data-dir",
        str(tmp_path),
        "--demo",
        "--exit-after-ask",
        "--timeout",
        "400",
        *args,
    ]
    result = await asyncio.to_thread(subprocess.run, cmd, capture_output=True, text=True, timeout=600)
    out = result.stdout
    assert result.returncode == 0, f"stdout:\n{out}\nstderr:\n{result.stderr[-3000:]}\n{what_the_parts_did(tmp_path)}"
    assert f"? {DEMO_QUESTION}" in out
    for marker in (
        "[thought] Planning how to answer",
        "[observation] Plan with",
        "[thought] Step ",
        "[answer] ",
        "Confidence: ",
        "Run in the Temporal Web UI: http://127.0.0.1:",
        f"chat in your browser: http://127.0.0.1:{ports['http-port']}/#token=",
    ):
        assert marker in out, marker
    # The answer comes from the graph: the leading supplier by orders is named in it.
    answer = out.split("[answer] ", 1)[1]
    assert leading_supplier() in answer


@pytest.fixture(scope="module")
def local_model_url(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """The embedded llama-cpp-python server with the demo model, for the tests below."""
    from embedded.model_weights import resolve_model
    from embedded.parts import llm_server

    port = free_port()
    server = llm_server(tmp_path_factory.mktemp("llm"), resolve_model().path, port, "local")
    server.start()
    try:
        asyncio.run(server.wait_ready(300))
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.stop()


async def test_the_local_model_pays_a_supplier_after_approval_and_answers_read_only(
    local_model_url: str, make_stack, falkordb_url: str, unique: str
) -> None:
    """The action path end to end on the real model: the demo's payment request is routed to ACTION,
    planned as makePayment on the supplier's orders, approved by a human, executed; a question about the same
    orders is routed to QUERY and changes nothing."""
    from falkordb.asyncio import FalkorDB

    from tests.integration.test_action_path import ALREADY_PAID, TOO_DEAR, approve_when_asked, run

    name = f"real-pay-{unique}"
    await demo_graph.load(falkordb_url, name)
    db = FalkorDB.from_url(falkordb_url)
    g = db.select_graph(name)
    try:
        stack = await make_stack(
            local_model_url,
            graph_name=name,
            ontology_path=str(demo_graph.ONTOLOGY_PATH),
            planning_timeout_ms=300_000,
            graph_programs=True,  # as the service runs by default
        )
        request_id = f"real-pay-{unique}"
        asking = asyncio.create_task(run(stack, "Pay all orders of supplier Northwind Traders", request_id))
        await approve_when_asked(stack, f"agent-{request_id}", asking)
        messages = await asyncio.wait_for(asking, 600)
        answer = messages[-1].content
        assert "makePayment on 20 PurchaseOrder entities: 18 succeeded, 2 failed." in answer, answer
        assert f"{TOO_DEAR}: Insufficient funds" in answer and f"{ALREADY_PAID}: Order already paid" in answer
        records = (await g.ro_query("MATCH (r:ActionRecord) RETURN count(r)")).result_set[0][0]
        assert records == 18
        followup = await run(stack, "Which orders of supplier Northwind Traders are not paid?", f"real-q-{unique}")
        assert followup[-1].message_type == "answer"
        assert not any(m.content.startswith('{"type": "action_') for m in followup)
        assert (await g.ro_query("MATCH (r:ActionRecord) RETURN count(r)")).result_set[0][0] == 18
    finally:
        await g.delete()
        await db.aclose()


async def test_the_local_model_targets_exactly_the_approved_orders_of_the_named_supplier(
    local_model_url: str, falkordb_url: str, unique: str
) -> None:
    """The seed's own action on the real model: "Pay all approved purchase orders of Northwind Traders"
    targets that supplier's 20 approved orders (the small model's own plan has targeted every approved
    order, 239), and a question about the actions is answered from their definitions."""
    from falkordb.asyncio import FalkorDB

    from actions.ontology import Ontology
    from activities.action_planning import ActionPlanningActivities
    from activities.actions import ActionTools
    from backends.graph_store import GraphStore
    from backends.llm import LLMClient
    from contracts.action_path import ResolveTargetsInput
    from contracts.routing import Intent, RouteInput
    from service.prompts import PromptTemplates
    from tests.integration.test_action_scope import NORTHWIND, orders

    name = f"real-scope-{unique}"
    await demo_graph.load(falkordb_url, name)
    graph = GraphStore(falkordb_url, name)
    llm = LLMClient(local_model_url, "local", timeout_s=300)
    ontology = Ontology.load(demo_graph.ONTOLOGY_PATH)
    try:
        planner = ActionPlanningActivities(llm, ontology, PromptTemplates.load(), graph)
        request = f"Pay all approved purchase orders of {NORTHWIND}"
        assert (await planner.route(RouteInput(question=request))).intent is Intent.ACTION
        planned = await planner.plan_action(RouteInput(question=request))
        assert planned.intent is not None and planned.intent.action_name == "makePayment", planned
        found = await ActionTools(graph, ontology).resolve_action_targets(
            ResolveTargetsInput(intent=planned.intent, max_targets=1000, left_out=planned.left_out)
        )
        gold = orders(lambda o, s: s["name"] == NORTHWIND and o["status"] == "approved")
        assert {t.entity_id for t in found.targets} == gold and len(gold) == 20, (planned, found.reasoning)
        question = "Which actions are available for a PurchaseOrder?"
        assert (await planner.route(RouteInput(question=question))).intent is Intent.ANSWER
    finally:
        await llm.aclose()
        await graph.aclose()
        db = FalkorDB.from_url(falkordb_url)
        await db.select_graph(name).delete()
        await db.aclose()


async def test_the_local_model_streams_an_answer_with_its_token_log_probabilities(local_model_url: str) -> None:
    """What an answer streamed as written needs from the embedded server (activities/answer_release.py): the
    text in several pieces as it is written, the whole of it at the end with a finish, the tokens'
    log-probabilities though the server keeps no per-token logits, and the usage."""
    from backends.llm import LLMClient

    pieces: list[str] = []

    async def heard(piece: str) -> None:
        pieces.append(piece)

    llm = LLMClient(local_model_url, "local", timeout_s=300)
    try:
        completion = await llm.chat_stream(
            [{"role": "user", "content": "Name three colours, one short sentence for each."}],
            on_text=heard,
            max_tokens=60,
            logprobs=True,
        )
    finally:
        await llm.aclose()
    assert len(pieces) > 3 and "".join(pieces) == completion.text and completion.text.strip()
    assert completion.token_logprobs is not None and len(completion.token_logprobs) > 3
    # The usage, which llama-cpp-python's own stream leaves out, counted in the dialog's in_token/out_token:
    # the prompt (chat template and all) is longer than its words, and every written token is counted once.
    assert completion.in_tokens is not None and completion.in_tokens > 10
    assert completion.out_tokens == len(completion.token_logprobs)
