"""The chat page in each state a person meets, in real headless Chromium over the real stack (Temporal,
pulsar-lite, FalkorDB, the bridge, the chat API): empty with example questions written from the graph's live
schema, a plan running as a graph of its steps, answered with its confidence and why, waiting for an approval,
a batch in progress, ended in an error; used by keyboard alone, and in a window 380 px wide. Only the model is
scripted. Each state is measured for what a person relies on (text contrast, no sideways scrolling, where the
focus is) and photographed: `chat-<state>.png` in $TGCA_TEST_ARTIFACTS, and in docs/images with
UPDATE_DOC_IMAGES=1."""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
from pathlib import Path
from typing import Any

from falkordb.asyncio import FalkorDB
from playwright.async_api import Locator, Page, expect

from chat.auth import token_sha256
from contracts.override import Role
from embedded import demo_graph
from service.config import HttpIdentity
from tests.chat_server import chat_server
from tests.integration.test_action_parameters_path import OF_SUPPLIER, intent
from tests.integration.test_action_path import SUPPLIER
from tests.integration.test_chat_ui import RUN_S, STEP_S, artifact, chromium_page
from tests.scripted_llm import (
    ScriptedLLM,
    is_action_planning,
    is_follow_up,
    is_planning,
    is_routing,
    is_synthesis,
    question_of,
)

DOC_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"
MAX_IMAGE_BYTES = 200_000
WIDE = {"width": 1000, "height": 900}
NARROW = {"width": 380, "height": 760}

QUESTION = "Which supplier has the most purchase orders, and how is Northwind rated?"
TOP = (
    "MATCH (o:PurchaseOrder)-[:ISSUED_TO]->(s:Supplier) RETURN s.name AS supplier, count(o) AS orders "
    "ORDER BY orders DESC LIMIT 3"
)
RATING = "MATCH (s:Supplier {name: 'Northwind'}) RETURN s.name AS supplier, s.rating AS rating"  # no such name
BOTH = (
    "MATCH (s:Supplier) WHERE s.name IN ['Acme Industrial', 'Northwind Traders'] "
    "RETURN s.name AS supplier, s.country AS country"
)
COUNTED = "MATCH (s:Supplier) RETURN count(s) AS suppliers"  # asked "which", it names none: a person decides
ANSWER = "Acme Industrial has the most purchase orders (135). Northwind Traders is rated 4.2."
HOLD = f"Hold the unpaid orders of {SUPPLIER}, reason: audit"
HELD = sorted(
    o["po_number"]
    for o in demo_graph.generate().nodes["PurchaseOrder"]
    if o["po_number"] in OF_SUPPLIER and o["status"] == "approved" and not o["paid"]
)


def plan(last_query: str = BOTH) -> list[dict[str, Any]]:
    """Two independent steps (the second repaired on its retries), then one that needs both."""
    return [
        {"id": "top", "function": "GraphQuery", "dependencies": [], "arguments": {"query": TOP}},
        {"id": "rating", "function": "GraphQuery", "dependencies": [], "arguments": {"query": RATING}},
        {"id": "both", "function": "GraphQuery", "dependencies": ["top", "rating"], "arguments": {"query": last_query}},
    ]


class PageModel:
    """Plans a question with `steps` and answers it with ANSWER once `answering` is set (a test looks at the run
    meanwhile); plans "Hold ..." as holding the supplier's unpaid orders, with the reason given."""

    def __init__(self, steps: list[dict[str, Any]] | None = None, answering: threading.Event | None = None) -> None:
        self.steps = steps or plan()
        self.answering = answering

    def __call__(self, body: dict[str, Any]) -> tuple[int, str]:
        if is_follow_up(body):  # a conversation's next question stands on its own
            latest = question_of(body).rsplit("Latest message: ", 1)[-1].strip()
            return 200, json.dumps({"question": latest, "from_conversation": False})
        if is_routing(body):
            return 200, json.dumps({"intent": "ACTION" if "question: hold" in question_of(body).lower() else "QUERY"})
        if is_action_planning(body):
            return 200, json.dumps(
                intent(
                    "hold",
                    related_class="Supplier",
                    related_name=SUPPLIER,
                    parameters={"reason": "audit"},
                    filters=[{"property": "paid", "op": "eq", "value": False}],
                )
            )
        if is_planning(body):
            if "steps" not in json.dumps(body["response_format"]):
                return 200, json.dumps({"arguments": {}})  # adjust_step: nothing better than the tool's own repair
            return 200, json.dumps({"steps": self.steps})
        if is_synthesis(body):
            if self.answering is not None:
                self.answering.wait(120)
            return 200, ANSWER
        return 200, "ok"


# Every visible text against what lies behind it (WCAG 2.1 AA: 4.5:1, 3:1 for large text); inactive controls
# are exempt, as the criterion says.
LOW_CONTRAST = """() => {
  const parse = (c) => { const m = c.match(/rgba?\\(([^)]+)\\)/); if (!m) return null;
    const p = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number);
    return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 }; };
  const blend = (top, under) => ({ r: top.r * top.a + under.r * (1 - top.a), g: top.g * top.a + under.g * (1 - top.a),
                                   b: top.b * top.a + under.b * (1 - top.a), a: 1 });
  const lum = ({ r, g, b }) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const behind = (node) => { const layers = [];
    for (let n = node; n; n = n.parentElement) { const c = parse(getComputedStyle(n).backgroundColor);
      if (c && c.a > 0) { layers.push(c); if (c.a >= 1) break; } }
    return layers.reverse().reduce((under, layer) => blend(layer, under), { r: 255, g: 255, b: 255, a: 1 }); };
  const found = [];
  for (const node of document.querySelectorAll("body *")) {
    const text = [...node.childNodes].filter((c) => c.nodeType === 3).map((c) => c.textContent).join("").trim();
    if (!text || !node.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) continue;
    const box = node.getBoundingClientRect();
    if (box.width <= 1 || box.height <= 1 || node.closest(":disabled")) continue;
    const style = getComputedStyle(node), bg = behind(node), fg = blend(parse(style.color), bg);
    const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
    const ratio = (hi + 0.05) / (lo + 0.05);
    const size = parseFloat(style.fontSize), large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
    if (ratio < (large ? 3 : 4.5)) found.push(`${text.slice(0, 40)}: ${ratio.toFixed(2)}`);
  }
  return found;
}"""
SIDEWAYS = "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
FOCUSED = """() => { const e = document.activeElement, s = getComputedStyle(e);
  return { id: e.id, testid: e.dataset.testid || "", choice: e.dataset.choice || "", tag: e.tagName.toLowerCase(),
           text: (e.innerText || e.value || "").trim().slice(0, 80),
           ring: s.outlineStyle !== "none" && parseFloat(s.outlineWidth) >= 2 }; }"""


async def readable(page: Page, state: str) -> None:
    """The state as a person sees it: every text readable, nothing scrolled sideways."""
    assert await page.evaluate(LOW_CONTRAST) == [], state
    assert await page.evaluate(SIDEWAYS) <= 0, f"{state}: the page scrolls sideways"


async def measured(page: Page, state: str, shown: Locator | None = None, where: str = "start") -> None:
    """The state readable, then its photograph (the viewport, with `shown` at its top, or `where` else), small
    enough for the docs."""
    await readable(page, state)
    if shown is not None:
        await shown.evaluate("(e, where) => e.scrollIntoView({ block: where })", where)
    path = artifact(f"chat-{state}.png")
    await page.screenshot(path=str(path), animations="disabled", caret="hide")
    assert path.stat().st_size < MAX_IMAGE_BYTES, f"{path.name}: {path.stat().st_size} bytes"
    if os.environ.get("UPDATE_DOC_IMAGES"):
        DOC_IMAGES.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, DOC_IMAGES / path.name)


async def test_a_plan_runs_as_a_graph_of_its_steps_to_an_answer_with_its_confidence(
    make_stack, demo_copy, unique: str
) -> None:
    """Empty, the page offers this graph's questions; asked, the plan is drawn as its steps and their
    dependencies, each step with its query, its repair, its verdicts and its rows while the answer is still being
    written; answered, the answer with its confidence as a bar and the reasons."""
    graph_name, _ = demo_copy
    problems: list[str] = []
    answering = threading.Event()
    with ScriptedLLM(PageModel(answering=answering)) as llm:
        stack = await make_stack(llm.base_url, graph_name=graph_name, ontology_path=str(demo_graph.ONTOLOGY_PATH))
        async with chat_server(stack) as server, chromium_page("chat-plan", problems, viewport=WIDE) as page:
            try:
                await page.goto(server.page_url)
                # Empty: questions written from this graph's schema, one click from the box.
                examples = page.locator("#example-list button")
                await expect(examples.first).to_be_visible(timeout=STEP_S)
                texts = await examples.all_inner_texts()
                assert len(texts) >= 4 and any("purchase order" in t for t in texts), texts
                await measured(page, "empty")
                await examples.nth(1).click()
                chosen = (await examples.nth(1).inner_text()).split("\n")[-1]
                assert await page.input_value("#question") == chosen
                assert await page.evaluate("() => document.activeElement.id") == "question"

                await page.fill("#question", QUESTION)
                await page.press("#question", "Enter")
                # Running: the plan as a graph, each step's state as it goes; the answer is held back meanwhile.
                nodes = page.locator("#plan-graph [data-testid=node]")
                await expect(nodes).to_have_count(3, timeout=RUN_S)
                for step in ("top", "rating", "both"):
                    await expect(page.locator(f'#plan-graph [data-step="{step}"]')).to_have_attribute(
                        "data-state", "succeeded", timeout=RUN_S
                    )
                await expect(page.locator("#status")).to_have_text("running")
                await expect(page.locator("#plan-title")).to_have_text("Plan: 3 steps")
                top, rating, both = [
                    await page.locator(f'#plan-graph [data-step="{s}"]').bounding_box()
                    for s in ("top", "rating", "both")
                ]
                assert both["x"] > top["x"] + top["width"] and both["x"] > rating["x"] + rating["width"]
                await expect(page.locator("#plan-graph svg.edges path")).to_have_count(2)  # both <- top, rating
                await page.click('#plan-graph [data-step="rating"]')  # the step that was repaired
                details = page.locator('#step-list [data-step="rating"]')
                await expect(details).to_have_attribute("open", "")
                assert await page.evaluate("() => document.activeElement.tagName") == "SUMMARY"
                await expect(details.locator("summary")).to_contain_text(
                    "succeeded, confidence 0.90 (0.80 needed), 2 retries"
                )
                attempts = details.locator("[data-testid=attempts] li")
                await expect(attempts.filter(has_text="Retry 2: GraphQuery")).to_have_count(1)
                await expect(attempts.filter(has_text="Confidence 0.30 is below the threshold 0.80")).to_have_count(2)
                await expect(details.locator('[data-argument="query"]')).to_have_text(RATING)
                await expect(details.locator('[data-argument="query-ran"]')).to_contain_text(
                    "toLower(s.name) CONTAINS toLower('Northwind')"
                )
                await expect(details.locator("[data-testid=step-output] tbody tr")).to_have_text(
                    ["Northwind Traders4.2"]
                )  # the rows as the attempt found them
                await measured(page, "running", page.locator("[data-testid=turn]").last)
                answering.set()

                # Answered: the answer, its confidence as a bar with the reasons, and every step's rows.
                await expect(page.locator("#status")).to_have_text("done", timeout=RUN_S)
                await expect(page.locator("#answer")).to_have_text(ANSWER)
                score = await page.inner_text("#confidence")
                assert re.fullmatch(r"0\.\d\d", score), score
                bar = page.locator("#confidence-bar")
                assert float(await bar.get_attribute("aria-valuenow")) == float(score)
                width = await bar.locator(".fill").evaluate(
                    "f => f.getBoundingClientRect().width / f.parentElement.clientWidth"
                )
                assert abs(width - float(score)) < 0.02
                reasons = page.locator("#confidence-reasons li")
                await expect(
                    reasons.filter(has_text="every name and figure in the answer is in the results")
                ).to_have_count(1)
                assert await page.get_attribute("#answer", "aria-busy") == "false"
                await page.click('#plan-graph [data-step="top"]')
                rows = page.locator('#step-list [data-step="top"] [data-testid=step-output] tbody tr')
                await expect(rows).to_have_count(3)
                await expect(rows.first).to_have_text("Acme Industrial135")
                await expect(page.locator('#step-list [data-step="top"] caption')).to_have_text("top: 3 rows")
                await measured(page, "answered", page.locator("[data-testid=turn]").last)
            finally:
                answering.set()  # a failed test leaves no model waiting
    assert not problems, problems


async def test_an_approval_card_says_what_will_change_then_the_batch_runs_and_is_undone(
    make_stack, demo_copy, unique: str
) -> None:
    """The approval card: the action, the value it writes, what changes in each target, how many, the targets
    with their dry run; a run that waits is seen from afar (the tab's title). Approved, the batch shows its
    progress as it goes; then one target's hold is undone from the action history."""
    graph_name, g = demo_copy
    problems: list[str] = []
    with ScriptedLLM(PageModel()) as llm:
        stack = await make_stack(
            llm.base_url,
            graph_name=graph_name,
            ontology_path=str(demo_graph.ONTOLOGY_PATH),
            action_max_concurrent=2,
            service={"action_latency_ms": 1000},
        )
        async with chat_server(stack) as server, chromium_page("chat-approval", problems, viewport=WIDE) as page:
            await page.goto(server.page_url)
            await page.fill("#question", HOLD)
            await page.click("#send")
            approve = page.locator("[data-choice=accept]")
            await expect(approve).to_be_visible(timeout=RUN_S)
            await expect(page.locator("#status")).to_have_text("waiting for your decision")
            assert (await page.title()).startswith("Decision needed")
            assert await page.evaluate("() => document.activeElement.dataset.testid") == "override-title"
            await expect(page.locator("#plan-summary")).to_have_text(f"hold on {len(HELD)} PurchaseOrder entities")
            await expect(page.locator("#plan-changes li")).to_have_text(
                ['status becomes "on_hold"', 'hold_reason becomes "audit" (the reason given)']
            )
            await expect(page.locator("#plan-undo")).to_have_text(
                "It can be undone afterwards (release), from the action history."
            )
            await expect(page.locator('#plan-counts [data-count="targets"]')).to_have_text(f"{len(HELD)} targets")
            await expect(page.locator('#plan-counts [data-count="would-fail"]')).to_have_text("0 would fail")
            targets = page.locator("#targets tbody tr")
            await expect(targets).to_have_count(len(HELD))
            assert sorted(await targets.evaluate_all("rows => rows.map(r => r.dataset.entity)")) == HELD
            await expect(targets.first.locator("td").last).to_have_text("would succeed")
            await expect(page.locator('#override-arguments [data-argument="parameters"] dd')).to_have_text(
                'reason="audit"'
            )
            await expect(
                page.locator("#override-reasoning li").filter(has_text=f"It touches {len(HELD)} entities")
            ).to_have_count(1)
            await measured(page, "approval", page.locator("#override"), "end")

            await approve.click()
            # A batch in progress: some done, not all.
            await page.wait_for_function(
                "() => { const p = document.getElementById('progress'); return p && p.value >= 1 && p.value < p.max; }",
                timeout=RUN_S,
            )
            await expect(page.locator("#status")).to_have_text("running")
            assert not (await page.title()).startswith("Decision needed")
            await expect(page.locator('#plan-graph [data-step="approve"]')).to_have_attribute(
                "data-state", "accepted_by_override"
            )
            await measured(page, "batch", page.locator("#batch"), "center")
            await expect(page.locator("#status")).to_have_text("done", timeout=RUN_S)
            await expect(page.locator("#results-summary")).to_have_text(f"{len(HELD)} succeeded, 0 failed")

            entries = page.locator("#history-list li")
            await expect(entries).to_have_count(len(HELD), timeout=STEP_S)  # refreshed when the batch ended
            undone = await entries.first.get_attribute("data-entity")
            await expect(entries.first.locator(".change")).to_contain_text("status: approved → on_hold")
            undo = entries.first.locator("button.undo")
            await undo.click()
            await expect(undo).to_have_text("Confirm undo")
            await undo.click()
            await expect(page.locator("#history-status")).to_contain_text(f"Undone: hold on {undone}", timeout=STEP_S)
            await expect(page.locator(f'#history-list li[data-entity="{undone}"] .undone').first).to_be_visible()
    statuses = dict(
        (
            await g.ro_query(
                "MATCH (o:PurchaseOrder) WHERE o.po_number IN $ids RETURN o.po_number, o.status", {"ids": HELD}
            )
        ).result_set
    )
    assert statuses == {po: "approved" if po == undone else "on_hold" for po in HELD}
    assert not problems, problems


async def test_a_step_a_person_aborts_ends_the_run_in_an_error(make_stack, demo_copy, unique: str) -> None:
    """A step whose confidence stays low waits for a person (the card shows its query and why); aborted from
    the card with a reason, the run ends in an error, said as one, and nothing after it runs."""
    graph_name, _ = demo_copy
    problems: list[str] = []
    with ScriptedLLM(PageModel(plan(COUNTED))) as llm:
        stack = await make_stack(llm.base_url, graph_name=graph_name, ontology_path=str(demo_graph.ONTOLOGY_PATH))
        async with chat_server(stack) as server, chromium_page("chat-error", problems, viewport=WIDE) as page:
            await page.goto(server.page_url)
            await page.fill("#question", QUESTION)
            await page.click("#send")
            await expect(page.locator("[data-choice=abort]")).to_be_visible(timeout=RUN_S)
            choices = await page.locator("#override-choices button").all_inner_texts()
            assert choices == ["Accept", "Retry", "Skip", "Abort"], choices  # a review, not an approval
            await expect(page.locator('#override-arguments [data-argument="query"] pre')).to_have_text(COUNTED)
            await expect(page.locator("#override-reasoning li").filter(has_text="the rows hold no name")).to_have_count(
                1
            )
            await expect(page.locator('#plan-graph [data-step="both"]')).to_have_attribute(
                "data-state", "awaiting_override"
            )
            await page.fill("[data-testid=override-reason]", "the count names no supplier")
            await page.click("[data-choice=abort]")
            error = page.locator("#error")
            await expect(error).to_have_text(
                "Aborted by local at step both: the count names no supplier", timeout=RUN_S
            )
            await expect(error).to_have_attribute("role", "alert")
            await expect(page.locator("#status")).to_have_text("failed")
            await expect(page.locator("#answer-box")).to_be_hidden()
            await expect(page.locator("#send")).to_be_enabled()
            await measured(page, "error", page.locator("[data-testid=turn]").last)
    assert not problems, problems


async def test_the_page_is_used_by_keyboard_alone(make_stack, demo_copy, unique: str) -> None:
    """With identities configured: the token typed in where the page asks for it, an example chosen, a question
    sent with Enter, the approval card reached and answered, an action undone; focus always visible."""
    graph_name, g = demo_copy
    problems: list[str] = []
    token = f"ops-{unique}"
    identities = [
        HttpIdentity(
            name="ops", token_sha256=token_sha256(token), roles=[Role.APPROVE, Role.REVIEW, Role.UNDO, Role.AUDIT]
        )
    ]
    with ScriptedLLM(PageModel()) as llm:
        stack = await make_stack(llm.base_url, graph_name=graph_name, ontology_path=str(demo_graph.ONTOLOGY_PATH))
        async with (
            chat_server(stack, identities) as server,
            chromium_page("chat-keyboard", problems, viewport=WIDE) as page,
        ):
            await page.goto(server.url)
            token_box = page.locator("#token")
            await expect(token_box).to_be_focused(timeout=STEP_S)  # asked for, where the keys go
            await page.keyboard.type(token)
            await page.keyboard.press("Enter")
            await expect(page.locator("#example-list button").first).to_be_visible(timeout=STEP_S)

            examples = await page.locator("#example-list button").all_inner_texts()
            seen = [await tab(page)]  # from the token box on: every example, then the question box
            while seen[-1]["id"] != "question":
                assert len(seen) < 20, seen
                seen.append(await tab(page))
            assert [s["text"] for s in seen[:-1]] == examples and all(s["ring"] for s in seen), seen
            await page.keyboard.press("Shift+Tab")  # back to the last example
            example = await page.evaluate(FOCUSED)
            await page.keyboard.press("Enter")
            assert await page.input_value("#question") == example["text"].split("\n")[-1].strip()
            assert (await page.evaluate(FOCUSED))["id"] == "question"
            await page.keyboard.press("Control+A")
            await page.keyboard.type(HOLD)
            await page.keyboard.press("Enter")

            title = page.locator("#override-title")
            await expect(title).to_be_focused(timeout=RUN_S)  # taken to the decision it waits for
            assert (await page.evaluate(FOCUSED))["ring"]
            reason = await tab(page)
            assert reason["testid"] == "override-reason" and reason["ring"], reason
            await page.keyboard.type("checked by keyboard")
            approve = await tab(page)
            assert approve["choice"] == "accept" and approve["ring"], approve
            await measured(page, "keyboard")
            await page.keyboard.press("Enter")
            await expect(page.locator("#status")).to_have_text("done", timeout=RUN_S)
            await expect(page.locator("#results-summary")).to_have_text(f"{len(HELD)} succeeded, 0 failed")

            await expect(page.locator("#history-list li")).to_have_count(len(HELD), timeout=STEP_S)
            for _ in range(60):  # on from where the decision was, to the first Undo
                focused = await tab(page)
                if focused["text"] == "Undo":
                    break
            assert focused["text"] == "Undo" and focused["ring"], focused
            undone = await page.evaluate("() => document.activeElement.closest('li').dataset.entity")
            await page.keyboard.press("Enter")
            await expect(page.locator("button.undo[data-confirming]")).to_be_focused()
            await page.keyboard.press("Enter")
            await expect(page.locator("#history-status")).to_contain_text(f"Undone: hold on {undone}", timeout=STEP_S)
            await expect(page.locator("#history-status")).to_be_focused()
    assert (await g.ro_query("MATCH (o:PurchaseOrder {po_number: $id}) RETURN o.status", {"id": undone})).result_set[0][
        0
    ] == "approved"
    # Before the token, the browser logs the API's 401s; those are how the page knew to ask for it.
    assert [p for p in problems if "status of 401 (Unauthorized)" not in p] == [], problems


async def tab(page: Page) -> dict[str, Any]:
    await page.keyboard.press("Tab")
    return await page.evaluate(FOCUSED)


async def test_a_narrow_window_needs_no_sideways_scrolling(make_stack, demo_copy, unique: str) -> None:
    """380 px wide: the examples, a plan's graph (its stages one under another), a step's rows, the answer and an
    approval card with its targets all fit; a table wider than the window scrolls in its own frame."""
    graph_name, _ = demo_copy
    problems: list[str] = []
    with ScriptedLLM(PageModel()) as llm:
        stack = await make_stack(llm.base_url, graph_name=graph_name, ontology_path=str(demo_graph.ONTOLOGY_PATH))
        async with chat_server(stack) as server, chromium_page("chat-narrow", problems, viewport=NARROW) as page:
            await page.goto(server.page_url)
            await expect(page.locator("#example-list button").first).to_be_visible(timeout=STEP_S)
            await readable(page, "narrow, empty")
            await page.click("#access summary")  # the token's panel, open
            await readable(page, "narrow, the token's panel open")
            await page.click("#access summary")
            await page.fill("#question", QUESTION)
            await page.press("#question", "Enter")
            await expect(page.locator("#status")).to_have_text("done", timeout=RUN_S)
            top, both = [await page.locator(f'#plan-graph [data-step="{s}"]').bounding_box() for s in ("top", "both")]
            assert both["y"] > top["y"] + top["height"]  # a stage below the one it needs
            await page.click('#plan-graph [data-step="top"]')
            await expect(page.locator('#step-list [data-step="top"] [data-testid=step-output] tbody tr')).to_have_count(
                3
            )
            for part in ("#plan-graph", "#answer-box", '#step-list [data-step="top"]'):
                box = await page.locator(part).bounding_box()
                assert box["x"] >= 0 and box["x"] + box["width"] <= NARROW["width"], (part, box)
            await measured(page, "narrow", page.locator("#plan-box"))

            await page.fill("#question", HOLD)
            await page.press("#question", "Enter")
            await expect(page.locator("[data-choice=accept]")).to_be_visible(timeout=RUN_S)
            assert await page.evaluate(SIDEWAYS) <= 0
            buttons = await page.locator("#override-choices button").evaluate_all(
                "bs => bs.map(b => { const r = b.getBoundingClientRect(); return [r.left, r.right]; })"
            )
            assert all(left >= 0 and right <= NARROW["width"] for left, right in buttons), buttons
            await readable(page, "narrow approval")
            await page.click("[data-choice=skip]")
            await expect(page.locator("#status")).to_have_text("done", timeout=RUN_S)
    assert not problems, problems


async def test_example_questions_come_from_a_graph_the_page_never_saw(
    make_stack, falkordb_url: str, unique: str
) -> None:
    """GET /examples on a graph of another world (no purchase orders, no suppliers) and no ontology: every
    question is written in that graph's own words and names."""
    name = f"orbits-{unique}"
    db = FalkorDB.from_url(falkordb_url)
    graph = db.select_graph(name)
    await graph.query(
        "CREATE (sun:Star {name: 'Sol', mass_kg: 1.989e30}), "
        "(earth:Planet {name: 'Earth', radius_km: 6371}), (mars:Planet {name: 'Mars', radius_km: 3389}), "
        "(luna:Moon {name: 'Luna', radius_km: 1737}), (phobos:Moon {name: 'Phobos', radius_km: 11}), "
        "(earth)-[:ORBITS]->(sun), (mars)-[:ORBITS]->(sun), (luna)-[:ORBITS]->(earth), (phobos)-[:ORBITS]->(mars)"
    )
    try:
        with ScriptedLLM(PageModel()) as llm:
            stack = await make_stack(llm.base_url, graph_name=name)  # a graph to read, no actions on it
            async with chat_server(stack) as server, server.client() as http:
                response = await http.get("/examples")
                async with server.client(token="") as tokenless:
                    refused = await tokenless.get("/examples")
    finally:
        await graph.delete()
        await db.aclose()
    assert response.status_code == 200 and refused.status_code == 401
    body = response.json()
    questions = [e["question"] for e in body["examples"]]
    assert body["graph"] == name and len(questions) >= 4, questions
    assert "How many planets are there?" in questions
    assert any("orbits" in q and re.search(r"'(Sol|Earth|Mars)'", q) for q in questions), questions
    assert any("highest radius km" in q for q in questions), questions
    words = " ".join(questions).lower()
    assert not any(w in words for w in ("purchase", "supplier", "order", "payment")), questions
