"""What a TrustGraph user sees of this service through TrustGraph 2.11.1's own api-gateway: its own
`tg-invoke-agent` (plain, -v, -x, streaming and --no-streaming), `tg-list-explain-traces`,
`tg-show-explain-trace`, `tg-get-document-content` and `tg-query-graph`, run as a user runs them, against the
gateway in front of the bridge and worker on the test broker, the explain triples stored by TrustGraph's own
FalkorDB writer and read back by its FalkorDB query service (tests/trustgraph_gateway.py: what stands in for the
TrustGraph services that cannot run here, and why). docs/trustgraph-contract.md, "Through TrustGraph's
api-gateway"."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from tests.contract.test_trustgraph_contract import ANSWER, GOOD_PLAN, answers
from tests.scripted_llm import ScriptedLLM, is_planning, is_synthesis
from tests.trustgraph_gateway import Gateway, Ran, run_cli, running_gateway

QUESTION = "Which supplier has the most purchase orders?"
STATED = re.compile(r"^Confidence: (\d\.\d\d) - (calibrated: .+)$", re.MULTILINE)  # the answer's last line
TG, TGCA = "https://trustgraph.ai/ns/", "urn:tgca:ns:"
# TrustGraph 2.11.1's gateway reads `error.code`, which its own Error has not (docs/trustgraph-contract.md).
GATEWAY_BUG = "Exception: 'Error' object has no attribute 'code'"


# A calibrator fixed for these tests (the one shipped on 2026-11-26 before its refit), whose weights move the
# scripted answer's confidence: the words "raised because ..." are checked here, not the shipped weights, which
# each refit changes.
EXPLAINED_CALIBRATOR = Path(__file__).with_name("explained_calibrator.json")


@pytest_asyncio.fixture(scope="module")
async def gateway(pulsar_url: str, falkordb_url: str, tmp_path_factory) -> AsyncIterator[Gateway]:  # type: ignore[no-untyped-def]
    async with running_gateway(pulsar_url, falkordb_url, Path(tmp_path_factory.mktemp("gateway"))) as running:
        yield running


@pytest_asyncio.fixture
async def flow(make_stack, gateway):  # type: ignore[no-untyped-def]
    """start(llm_base_url) -> the stack, its flow started in TrustGraph (the gateway routes it)."""

    async def start(llm_base_url: str):  # type: ignore[no-untyped-def]
        stack = await make_stack(llm_base_url, service={"calibrator_path": str(EXPLAINED_CALIBRATOR)})
        await gateway.start_flow(stack.config.workspace, stack.config.flow)
        return stack

    return start


def tg(gateway: Gateway, stack) -> list[str]:  # type: ignore[no-untyped-def]
    """The options every TrustGraph CLI takes to reach this flow through the gateway."""
    return ["-w", stack.config.workspace, "-f", stack.config.flow]


async def invoke(gateway: Gateway, stack, *options: str, question: str = QUESTION) -> Ran:  # type: ignore[no-untyped-def]
    ran = await run_cli("tg-invoke-agent", "-u", gateway.url, *tg(gateway, stack), "-q", question, *options)
    assert ran.code == 0, ran
    return ran


async def query_graph(gateway: Gateway, stack, subject: str) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    """`tg-query-graph -s subject`: the subject's (predicate, object) pairs, as its JSON output gives them."""
    ran = await run_cli("tg-query-graph", "-u", gateway.url, *tg(gateway, stack), "-s", subject, "--format", "json")
    assert ran.code == 0 and not ran.stderr, ran

    def value(term: dict[str, str]) -> str:
        return term.get("i") or term.get("v") or ""

    return [(value(t["p"]), value(t["o"])) for t in json.loads(ran.stdout)]


async def trace_kept(gateway: Gateway, stack, last: str, document: str = "", timeout_s: float = 30) -> None:  # type: ignore[no-untyped-def]
    """Wait until the run's trace is in TrustGraph's store: the worker keeps it off the caller's path, so the
    caller may have its answer before the last entity (`last`, its URI) is sent to the store, and its `document`
    to the librarian; then until TrustGraph's writer has stored every triple sent."""
    workspace = stack.config.workspace
    for _ in range(int(timeout_s * 10)):
        sent = {t[1] for t in gateway.services.sent.get(workspace, set())}
        if last in sent and (not document or document in gateway.services.documents.get(workspace, {})):
            break
        await asyncio.sleep(0.1)
    else:
        raise TimeoutError(f"{last} never reached the triples store (or {document or 'its document'} the librarian)")
    await gateway.stored(workspace)


def flat(text: str) -> str:
    """tg-invoke-agent's output without its line wrapping and its 🤔/💡 prefixes."""
    return " ".join(text.replace("\U0001f914", " ").replace("\U0001f4a1", " ").split())


@pytest.mark.parametrize("streaming", [True, False])
async def test_tg_invoke_agent_prints_the_answer_with_its_stated_confidence(flow, gateway, streaming) -> None:  # type: ignore[no-untyped-def]
    with ScriptedLLM(answers) as llm:
        stack = await flow(llm.base_url)
        ran = await invoke(gateway, stack, *([] if streaming else ["--no-streaming"]))
    # the answer once (streamed chunks joined, not repeated by the empty final message), nothing else
    assert ran.stdout.startswith(ANSWER) and ran.stdout.count(ANSWER) == 1 and not ran.stderr, ran
    [(score, reasons)] = STATED.findall(ran.stdout)
    assert 0 < float(score) < 1 and "raised because" in reasons
    assert "Planning" not in ran.stdout and "Plan with" not in ran.stdout  # without -v: the answer alone


async def test_the_end_of_a_dialog_sent_again_is_ignored_by_the_gateway_and_tg_invoke_agent(flow, gateway) -> None:  # type: ignore[no-untyped-def]
    """The end of each dialog reaches the gateway three times (again after about 1 s and 10 s): the gateway's one
    client for the flow keeps answering the next questions, each once, and says nothing of the copies."""
    with ScriptedLLM(answers) as llm:
        stack = await flow(llm.base_url)
        logged_before = len(gateway.gateway.log_path.read_text(errors="replace"))
        first = await invoke(gateway, stack, "--no-streaming")
        second = await invoke(gateway, stack)  # within the first one's repeats
        await asyncio.sleep(11)  # every copy of both has arrived
        third = await invoke(gateway, stack, "--no-streaming")
    for ran in (first, second, third):
        assert ran.stdout.count(ANSWER) == 1 and not ran.stderr, ran
    logged = gateway.gateway.log_path.read_text(errors="replace")[logged_before:]
    assert not re.search(r"(?i)error|exception|traceback", logged), logged


@pytest.mark.parametrize("streaming", [True, False])
async def test_verbose_shows_the_plan_steps_and_step_confidence_before_the_answer(flow, gateway, streaming) -> None:  # type: ignore[no-untyped-def]
    with ScriptedLLM(answers) as llm:
        stack = await flow(llm.base_url)
        ran = await invoke(gateway, stack, "-v", *([] if streaming else ["--no-streaming"]))
    out = ran.stdout
    assert out.startswith(f"\u2753 {QUESTION}")
    thought, observation, answer = out.index("\U0001f914"), out.index("\U0001f4a1"), out.index(ANSWER)
    assert thought < observation < answer  # tg-invoke-agent's thoughts and observations, then the answer
    seen = flat(out)
    assert f"Planning how to answer: {QUESTION}" in seen
    assert "Plan with 1 step(s): 1. s1: GraphQuery(query=MATCH (po:PurchaseOrder)" in seen
    assert re.search(r"Confidence \d\.\d\d meets the threshold 0\.80: Query returned 2 row\(s\)", seen), seen
    assert STATED.search(out)


async def test_explain_names_the_plan_steps_and_the_evidence_behind_each_confidence(flow, gateway) -> None:  # type: ignore[no-untyped-def]
    with ScriptedLLM(answers) as llm:
        stack = await flow(llm.base_url)
        ran = await invoke(gateway, stack, "-x", "-v")
        session = re.search(r"\[session\] (\S+)", ran.stderr).group(1)  # type: ignore[union-attr]
        await trace_kept(gateway, stack, f"{session}/synthesis", f"{session}/synthesis/doc")
        listed = await run_cli("tg-list-explain-traces", "-u", gateway.url, *tg(gateway, stack))
        shown = await run_cli("tg-show-explain-trace", "-u", gateway.url, *tg(gateway, stack), session)
        step_confidence = await query_graph(gateway, stack, f"{session}/step/0/confidence")
        rows = await query_graph(gateway, stack, f"{session}/step/0/confidence/evidence/rows")
        answer_confidence = await query_graph(gateway, stack, f"{session}/synthesis/confidence")
        # each entity's document, which the stored trace links, fetched as a user fetches it
        step_doc = await run_cli(
            "tg-get-document-content", "-u", gateway.url, "-w", stack.config.workspace, f"{session}/step/0/doc"
        )
        answer_doc = await run_cli(
            "tg-get-document-content", "-u", gateway.url, "-w", stack.config.workspace, f"{session}/synthesis/doc"
        )

    # -x: TrustGraph's provenance events as it prints them for its own agent, each named by its URI; no document
    # yet (it is written after the answer, and linked from the stored trace once the librarian has it)
    explained = ran.stderr
    assert f"[session] {session}\n    Query: {QUESTION}\n" in explained
    assert re.search(rf"\[plan\] {re.escape(session)}/plan\n    Step 0: s1: GraphQuery\(query=MATCH ", explained)
    assert re.search(
        rf"\[step-result\] {re.escape(session)}/step/0\n    Step: s1: GraphQuery\(query=.*\n(?!    Document:)",
        explained,
    )
    assert f"[synthesis] {session}/synthesis\n" in explained and "Document:" not in explained
    assert [m for m in re.findall(r"\[([a-z-]+)\]", explained)] == ["session", "plan", "step-result", "synthesis"]

    # read back from TrustGraph's store, through the gateway: the session listed, its trace in order
    assert listed.code == 0 and re.search(
        rf"^{re.escape(session)}\s+Agent\s+{re.escape(QUESTION)}", listed.stdout, re.MULTILINE
    ), listed
    assert shown.code == 0 and not shown.stderr, shown
    trace = shown.stdout
    assert trace.startswith(f"=== Agent Session: {session} ===\n\nQuestion: {QUESTION}\n")
    sections = [trace.index(s) for s in ("--- Plan ---", "--- Step Result ---", "--- Synthesis ---")]
    assert sections == sorted(sections)
    assert "Plan with 1 steps:\n  0: s1: GraphQuery(query=MATCH (po:PurchaseOrder)" in trace
    assert "Step: s1: GraphQuery(query=MATCH (po:PurchaseOrder)" in trace

    # every confidence figure names its evidence: the step's is the one its observation stated
    observed = float(re.search(r"Confidence (\d\.\d\d) meets the threshold", flat(ran.stdout)).group(1))  # type: ignore[union-attr]
    step = dict(step_confidence)
    assert float(step[TGCA + "score"]) == observed and step[TGCA + "reasoning"] == "Query returned 2 row(s)"
    assert f"{session}/step/0/confidence/evidence/rows" in {o for p, o in step_confidence if p == TGCA + "evidence"}
    assert dict(rows)[TGCA + "feature"] == "rows" and dict(rows)[TGCA + "value"] == "2"
    stated, reasons = STATED.search(ran.stdout).groups()  # type: ignore[union-attr]
    answer = dict(answer_confidence)
    assert f"{float(answer[TGCA + 'score']):.2f}" == stated and reasons.startswith(answer[TGCA + "reasoning"])
    evidence = {o.rsplit("/", 1)[1] for p, o in answer_confidence if p == TGCA + "evidence"}
    assert {"coverage", "aggregates", "step_score"} <= evidence

    # ... and each is written out where TrustGraph's CLIs read it: the librarian document the trace links
    evidence_words = f"Confidence {observed:.2f} meets the threshold 0.80: Query returned 2 row(s)"
    assert evidence_words in flat(ran.stdout) and STATED.search(ran.stdout)  # -x -v: as the run said them
    assert step_doc.code == 0 and evidence_words in step_doc.stdout and "- rows = 2" in step_doc.stdout, step_doc
    assert answer_doc.code == 0 and f"Confidence: {stated} - {reasons}" in answer_doc.stdout, answer_doc
    moved = re.search(r"Evidence behind the stated confidence:\n(- .*\n)+", answer_doc.stdout)
    assert moved and "- aggregates = 1 (a query that aggregates" in moved.group(0), answer_doc  # type: ignore[union-attr]
    assert moved.group(0).index(", raised the figure") < moved.group(0).index("- coverage = 1")  # type: ignore[union-attr]
    step_shown = trace[trace.index("--- Step Result ---") : trace.index("--- Synthesis ---")]
    assert "Result:\n  Step s1: GraphQuery(query=MATCH" in step_shown
    assert f"\n  {evidence_words}\n  Evidence behind this confidence:\n" in step_shown
    assert "\n  - rows = 2\n" in step_shown
    answer_shown = trace[trace.index("--- Synthesis ---") :]
    assert f"Answer:\n  {ANSWER.splitlines()[0]}" in answer_shown
    assert f"\n  Confidence: {stated} - {reasons}\n" in answer_shown and "\n  - coverage = " in answer_shown


# Three steps, the third depending on the first: TrustGraph's trace reader follows every prov:wasDerivedFrom and
# never drops a repeat, so a step or an answer reachable twice would print twice.
TOP_TWO = json.loads(GOOD_PLAN)["steps"][0]["arguments"]["query"]
LEADER = "Acme Industrial leads with 135 orders."
THREE_STEPS = json.dumps(
    {
        "steps": [
            {"id": "s1", "function": "GraphQuery", "dependencies": [], "arguments": {"query": TOP_TWO}},
            {
                "id": "s2",
                "function": "GraphQuery",
                "dependencies": [],
                "arguments": {"query": TOP_TWO.replace("DESC", "ASC")},
            },
            {
                "id": "s3",
                "function": "TextCompletion",
                "dependencies": ["s1"],
                "arguments": {"prompt": "Say which supplier leads"},
            },
        ]
    }
)


def three_steps(body: dict[str, object]) -> tuple[int, str]:
    if is_planning(body):
        return 200, THREE_STEPS
    if is_synthesis(body):
        return 200, ANSWER
    return 200, LEADER if "Say which supplier leads" in json.dumps(body) else "noted"


async def test_show_explain_trace_prints_each_step_of_a_plan_with_a_dependency_once(flow, gateway) -> None:  # type: ignore[no-untyped-def]
    with ScriptedLLM(three_steps) as llm:
        stack = await flow(llm.base_url)
        ran = await invoke(gateway, stack, "-x")
        session = re.search(r"\[session\] (\S+)", ran.stderr).group(1)  # type: ignore[union-attr]
        await trace_kept(gateway, stack, f"{session}/synthesis", f"{session}/synthesis/doc")
        shown = await run_cli("tg-show-explain-trace", "-u", gateway.url, *tg(gateway, stack), session)
        dependent = await query_graph(gateway, stack, f"{session}/step/2")

    # -x: TrustGraph's events, its step URIs numbered from 0 in plan order
    assert re.findall(r"\[([a-z-]+)\] (\S+)", ran.stderr) == [
        ("session", session),
        ("plan", f"{session}/plan"),
        ("step-result", f"{session}/step/0"),
        ("step-result", f"{session}/step/1"),
        ("step-result", f"{session}/step/2"),
        ("synthesis", f"{session}/synthesis"),
    ]

    # tg-show-explain-trace: each entity once, in TrustGraph's order (plan, steps in plan order, synthesis)
    assert shown.code == 0 and not shown.stderr, shown
    trace = shown.stdout
    assert re.findall(r"^--- (.+) ---$", trace, re.MULTILINE) == [
        "Plan",
        "Step Result",
        "Step Result",
        "Step Result",
        "Synthesis",
    ], trace
    assert [s.split(":", 1)[0] for s in re.findall(r"^Step: (.+)$", trace, re.MULTILINE)] == ["s1", "s2", "s3"]
    assert "Plan with 3 steps:\n  0: s1: GraphQuery(" in trace and "\n  2: s3: TextCompletion(" in trace

    # the dependency is still in the trace, where TrustGraph's reader does not follow it, and in the step's
    # document, numbered as the plan above lists its steps; and so is the plan's id for each step
    facts = set(dependent)
    assert (TGCA + "dependsOn", f"{session}/step/0") in facts and (TGCA + "stepId", "s3") in facts
    assert "Result:\n  Step s3: TextCompletion(prompt=Say which supplier leads)\n" in trace
    assert trace.count("Depends on:") == 1 and "\n  Depends on: step 0 of the plan\n" in trace


async def test_an_agent_error_reaches_the_caller_as_the_gateways_own_error(flow, gateway) -> None:  # type: ignore[no-untyped-def]
    """TrustGraph 2.11.1's gateway cannot encode an agent's error (its translator reads `error.code`): the caller
    gets the gateway's exception instead of the agent's message, whichever agent answers. The message is in the
    run's trace: `tg-invoke-agent -x` names the session, whose Conclusion holds it (tg:toolError)."""
    bad = json.dumps({"steps": [{"id": "s1", "function": "Teleport", "arguments": {}, "dependencies": []}]})
    with ScriptedLLM(lambda body: (200, bad)) as llm:
        stack = await flow(llm.base_url)
        plain = await invoke(gateway, stack, question="Teleport me")
        batch = await invoke(gateway, stack, "--no-streaming", question="Teleport me")
        explained = await invoke(gateway, stack, "-x", question="Teleport me")
        session = re.search(r"\[session\] (\S+)", explained.stderr).group(1)  # type: ignore[union-attr]
        await trace_kept(gateway, stack, f"{session}/final")
        conclusion = await query_graph(gateway, stack, f"{session}/final")

    for ran in (plain, batch, explained):
        assert ran.stdout == GATEWAY_BUG + "\n", ran
    assert f"[conclusion] {session}/final" in explained.stderr
    reason = dict(conclusion)
    assert TG + "Error" in {o for p, o in conclusion if p.endswith("#type")}
    assert reason[TG + "terminationReason"] == "error"
    assert reason[TG + "toolError"].startswith(
        "Could not make a usable plan for this question: step s1 uses unknown tool 'Teleport'"
    )
