"""The browser chat UI (chat/static/index.html) in a real headless Chromium, over the real stack (Temporal,
pulsar-lite, FalkorDB, the bridge, the chat API): seed 002's conversation as a person would have it. Ask to pay
the supplier's orders, watch the thinking stream in, approve with the button, watch the progress bar reach
20/20 and the two failures with their reasons, then ask which orders were not paid in the same conversation.
Only the model is scripted. Screenshots go to $TGCA_TEST_ARTIFACTS (default: <repo>/.artifacts/).

Debian's chromium (/usr/bin/chromium) drives through Playwright's Python API; Playwright never downloads a
browser of its own. scripts/setup.sh installs both: a machine without them fails this test, it does not skip."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from embedded import demo_graph
from tests.chat_server import chat_server
from tests.integration.test_action_parameters_path import OF_SUPPLIER, PlanningModel, intent
from tests.integration.test_action_path import ALREADY_PAID, SUPPLIER, TOO_DEAR
from tests.integration.test_conversations import ConversationalModel
from tests.scripted_llm import ScriptedLLM

try:
    from playwright.async_api import Page, async_playwright, expect
except ImportError:  # failed in the test, with the remedy
    async_playwright = None  # type: ignore[assignment]

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(os.environ.get("TGCA_TEST_ARTIFACTS") or Path(__file__).resolve().parents[2] / ".artifacts")
PAY = f"Pay all orders of supplier {SUPPLIER}"
FOLLOW_UP = "Which of those orders were not paid, and why?"
RUN_S = 180_000  # ms: a whole pay run on a busy 2-core machine
STEP_S = 60_000

# The network drops POST /chat/stream's connection just before the chunk that holds the override request.
CUT_STREAM = """(() => {
  const realFetch = window.fetch;
  window.streamCut = false;
  window.fetch = async (input, init) => {
    const response = await realFetch(input, init);
    if (String(input) !== "/chat/stream" || window.streamCut) return response;
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    const body = new ReadableStream({
      async pull(controller) {
        const { value, done } = await reader.read();
        if (done) return controller.close();
        if (!decoder.decode(value, { stream: true }).includes("override_request")) return controller.enqueue(value);
        window.streamCut = true;
        await reader.cancel();
        controller.error(new TypeError("network error (the test cut the stream)"));
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
})();"""

# Every text the progress counter showed, in order (installed once the approval buttons are up).
RECORD_PROGRESS = """() => {
  const counter = document.getElementById("progress-text");
  window.progressSeen = [];
  new MutationObserver((records) => {
    for (const r of records) for (const n of r.addedNodes) window.progressSeen.push(n.textContent);
  }).observe(counter, { childList: true });
}"""


def browser_or_fail() -> None:
    if async_playwright is None:
        pytest.fail("playwright is not installed: run scripts/setup.sh (pip install -e '.[test]')", pytrace=False)
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: run scripts/setup.sh as root (apt-get install chromium)", pytrace=False)


def artifact(name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS / name


async def screenshot(page: Page, name: str) -> None:
    await page.screenshot(path=str(artifact(name)), full_page=True)


@asynccontextmanager
async def chromium_page(name: str, problems: list[str], viewport: dict[str, int] | None = None) -> AsyncIterator[Page]:
    """A page in headless Debian Chromium (1100 x 900 unless `viewport` says otherwise); its script errors go to
    `problems`, and a failing test leaves `<name>-failure.png`."""
    browser_or_fail()
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = await browser.new_page(viewport=viewport or {"width": 1100, "height": 900})
            page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
            page.on(
                "console", lambda m: problems.append(f"console: {m.text} {m.location}") if m.type == "error" else None
            )
            try:
                yield page
            except BaseException:
                await screenshot(page, f"{name}-failure.png")
                raise
        finally:
            await browser.close()


async def test_seed_conversation_in_the_browser(make_stack, demo_copy, unique: str) -> None:
    graph_name, g = demo_copy
    problems: list[str] = []
    with ScriptedLLM(ConversationalModel()) as llm:
        stack = await make_stack(
            llm.base_url,
            graph_name=graph_name,
            ontology_path=str(demo_graph.ONTOLOGY_PATH),
            action_window=8,
            action_max_concurrent=4,
        )
        async with chat_server(stack) as server, chromium_page("chat-ui", problems) as page:
            conversation_id, progress_seen = await seed_conversation(page, server.page_url)
            await screenshot(page, "chat-ui.png")
            async with server.client() as http:
                memory = (await http.get(f"/conversations/{conversation_id}")).json()

    assert progress_seen[:20] == [f"{n}/20" for n in range(1, 21)], progress_seen  # every step, in order
    assert set(progress_seen[20:]) <= {"20/20"}
    assert memory["turn_count"] == 2 and memory["turns"][0]["action"]["failed"] == 2  # one conversation
    assert (await g.ro_query("MATCH (r:ActionRecord) RETURN count(r)")).result_set[0][0] == 18
    assert not problems, problems


async def test_a_dropped_stream_is_picked_up_where_it_left(make_stack, demo_copy, unique: str) -> None:
    """The connection drops as the approval request is sent: the page reconnects with GET /runs/{id}/events
    and the last id it had, gets the request, and sees the run to its end with nothing missed or repeated."""
    graph_name, g = demo_copy
    problems: list[str] = []
    with ScriptedLLM(ConversationalModel()) as llm:
        stack = await make_stack(
            llm.base_url,
            graph_name=graph_name,
            ontology_path=str(demo_graph.ONTOLOGY_PATH),
            action_window=8,
            action_max_concurrent=4,
        )
        async with chat_server(stack) as server, chromium_page("chat-ui-reconnect", problems) as page:
            requests: list[str] = []
            page.on("request", lambda r: requests.append(f"{r.method} {r.url}"))
            await page.add_init_script(CUT_STREAM)
            await page.goto(server.page_url)
            await page.fill("#question", PAY)
            await page.click("#send")
            approve = page.locator("[data-choice=accept]")
            await expect(approve).to_be_visible(timeout=RUN_S)
            assert await page.evaluate("() => window.streamCut") is True
            await page.evaluate(RECORD_PROGRESS)
            await approve.click()
            await expect(page.locator("#status")).to_have_text("done", timeout=RUN_S)
            await expect(page.locator("#results-summary")).to_have_text("18 succeeded, 2 failed")
            await expect(page.locator("#failures li")).to_have_count(2)
            await expect(page.locator("#targets tbody tr")).to_have_count(20)  # the plan was not shown twice
            await expect(page.locator("#confidence")).to_have_text("0.95")
            progress_seen = await page.evaluate("() => window.progressSeen")
            answer = await page.inner_text("#answer")

    reconnects = [r for r in requests if r.startswith("GET ") and "/events?after=" in r]
    assert len(reconnects) == 1 and "/runs/agent-chat-" in reconnects[0], requests
    assert progress_seen[:20] == [f"{n}/20" for n in range(1, 21)], progress_seen
    assert answer.count("18 succeeded, 2 failed") == 1
    assert (await g.ro_query("MATCH (r:ActionRecord) RETURN count(r)")).result_set[0][0] == 18
    assert not problems, problems


async def test_an_action_plans_parameters_and_filters_are_shown_before_approval(
    make_stack, demo_copy, unique: str
) -> None:
    """'Hold the unpaid orders of the supplier, reason: audit': the plan and the approval request say what
    will be written and which conditions chose the targets, before anyone approves."""
    graph_name, g = demo_copy
    problems: list[str] = []
    model = PlanningModel(
        intent(
            "hold",
            related_class="Supplier",
            related_name=SUPPLIER,
            parameters={"reason": "audit"},
            filters=[{"property": "paid", "op": "eq", "value": False}],
        )
    )
    expected = sum(
        1
        for o in demo_graph.generate().nodes["PurchaseOrder"]
        if o["po_number"] in OF_SUPPLIER and o["status"] == "approved" and not o["paid"]
    )
    with ScriptedLLM(model) as llm:
        stack = await make_stack(llm.base_url, graph_name=graph_name, ontology_path=str(demo_graph.ONTOLOGY_PATH))
        async with chat_server(stack) as server, chromium_page("chat-ui-parameters", problems) as page:
            await page.goto(server.page_url)
            await page.fill("#question", f"Hold the unpaid orders of {SUPPLIER}, reason: audit")
            await page.click("#send")
            approve = page.locator("[data-choice=accept]")
            await expect(approve).to_be_visible(timeout=RUN_S)
            await expect(page.locator("#plan-summary")).to_have_text(f"hold on {expected} PurchaseOrder entities")
            await expect(page.locator("#plan-details")).to_have_text(
                f"With reason=\"audit\". Targets of Supplier '{SUPPLIER}' where paid = false."
            )
            await expect(page.locator('#override-arguments [data-argument="parameters"] dd')).to_have_text(
                'reason="audit"'
            )
            await expect(page.locator('#override-arguments [data-argument="filters"] dd')).to_have_text("paid = false")
            await screenshot(page, "chat-ui-parameters.png")
            await approve.click()
            await expect(page.locator("#status")).to_have_text("done", timeout=RUN_S)
            await expect(page.locator("#results-summary")).to_have_text(f"{expected} succeeded, 0 failed")
    held = (await g.ro_query("MATCH (o:PurchaseOrder {hold_reason: 'audit'}) RETURN count(o)")).result_set[0][0]
    assert held == expected
    assert not problems, problems


async def seed_conversation(page: Page, url: str) -> tuple[str, list[Any]]:
    """The person's side of seed 002. Returns the conversation id and what the progress counter showed."""
    await page.goto(url)
    await page.fill("#question", PAY)
    await page.click("#send")

    await expect(page.locator("#asked")).to_have_text(PAY)
    await expect(page.locator("#thought-list li.thinking").first).to_be_visible(timeout=RUN_S)
    assert (await page.locator("#thought-list li.thinking").first.inner_text()).strip()
    link = page.locator("#temporal-link")
    await expect(link).to_be_visible()
    workflow_id = await page.inner_text("#workflow-id")
    assert workflow_id.startswith("agent-chat-")
    assert (await link.get_attribute("href")).endswith(f"/namespaces/default/workflows/{workflow_id}")
    conversation_id = await page.inner_text("#conversation-id")
    assert conversation_id.startswith("c-")

    approve = page.locator("[data-choice=accept]")
    await expect(approve).to_be_visible(timeout=RUN_S)
    await expect(approve).to_have_text("Approve")
    choices = await page.locator("#override-choices button").evaluate_all("bs => bs.map(b => b.dataset.choice)")
    assert {"accept", "skip", "abort"} <= set(choices) <= {"accept", "retry", "skip", "abort"}
    await expect(page.locator("#plan-summary")).to_have_text("makePayment on 20 PurchaseOrder entities")
    # no parameters, no filters: the supplier the targets were chosen through
    await expect(page.locator("#plan-details")).to_have_text(f"Targets of Supplier '{SUPPLIER}'.")
    assert (await page.inner_text("#override-reasoning")).strip()
    await page.evaluate(RECORD_PROGRESS)
    await screenshot(page, "chat-ui-approval.png")
    await approve.click()

    await expect(page.locator("#override-choices button")).to_have_count(0, timeout=STEP_S)  # resolved
    await expect(page.locator("#progress-text")).to_have_text("20/20", timeout=RUN_S)
    assert await page.eval_on_selector("#progress", "p => [p.value, p.max]") == [20, 20]
    await expect(page.locator("#results-summary")).to_have_text("18 succeeded, 2 failed", timeout=STEP_S)
    failures = page.locator("#failures li")
    await expect(failures).to_have_count(2)
    await expect(page.locator(f'#failures li[data-entity="{TOO_DEAR}"]')).to_have_text(
        f"{TOO_DEAR}: Insufficient funds"
    )
    await expect(page.locator(f'#failures li[data-entity="{ALREADY_PAID}"]')).to_have_text(
        f"{ALREADY_PAID}: Order already paid"
    )
    await expect(page.locator("#status")).to_have_text("done", timeout=RUN_S)
    await expect(page.locator("#answer")).to_contain_text("18 succeeded, 2 failed")
    await expect(page.locator("#confidence")).to_have_text("0.95")
    assert "Confidence:" not in await page.inner_text("#answer")  # shown on its own, with its reasons
    await expect(page.locator('#plan-graph [data-step="execute"]')).to_have_attribute("data-state", "succeeded")
    progress_seen = await page.evaluate("() => window.progressSeen")

    await expect(page.locator("#send")).to_be_enabled()
    await page.fill("#question", FOLLOW_UP)
    await page.click("#send")
    await expect(page.locator("[data-testid=turn]")).to_have_count(2)
    await expect(page.locator("#asked")).to_have_text(FOLLOW_UP)  # the ids moved to the new turn
    await expect(page.locator("#status")).to_have_text("done", timeout=RUN_S)
    answer = page.locator("#answer")
    await expect(answer).to_contain_text(f"{TOO_DEAR} (Insufficient funds)")
    await expect(answer).to_contain_text(f"{ALREADY_PAID} (Order already paid)")
    await expect(page.locator("#confidence")).to_have_text("0.95")
    assert await page.inner_text("#conversation-id") == conversation_id
    return conversation_id, progress_seen
