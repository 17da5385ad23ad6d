"""In open mode (no identities: the default on loopback) a web page on another site must
not be able to use the API through the user's browser. A hostile page in real Chromium posts a plain
cross-site form to undo an executed action; a DNS-rebinding page names its own host; a request without
open mode's local token is refused. Nothing is undone."""

from __future__ import annotations

import asyncio
from typing import Any

from embedded import demo_graph
from tests.chat_server import chat_server
from tests.integration.test_action_path import DomainModel
from tests.integration.test_chat_api import collect
from tests.integration.test_chat_ui import chromium_page
from tests.scripted_llm import ScriptedLLM

HOSTILE_ORIGIN = "http://localhost:9"  # loopback too, so no browser rule about private networks interferes
HOSTILE_PAGE = """<!doctype html><html><body>
<form id="f" method="POST" action="{target}"><input name="x" value="1"></form>
<script>document.getElementById("f").submit();</script></body></html>"""


async def test_another_site_cannot_use_the_open_api_through_the_browser(make_stack, demo_copy, unique: str) -> None:
    graph_name, g = demo_copy
    drafts = sorted(o["po_number"] for o in demo_graph.generate().nodes["PurchaseOrder"] if o["status"] == "draft")[:2]
    intent = {
        "entity_type": "PurchaseOrder",
        "action_name": "submit",
        "entity_ids": drafts,
        "related_class": "",
        "related_name": "",
    }
    with ScriptedLLM(DomainModel(intent)) as llm:
        stack = await make_stack(llm.base_url, graph_name=graph_name, ontology_path=str(demo_graph.ONTOLOGY_PATH))
        async with chat_server(stack) as server, server.client() as http:
            events: list[dict[str, Any]] = []
            await asyncio.wait_for(
                collect(http, {"query": f"Submit orders {' and '.join(drafts)} to be approved"}, events), 120
            )
            key = (await http.get("/actions", params={"run": events[0]["workflow_id"]})).json()[0]["key"]
            undo = f"{server.url}/actions/{key}/undo"

            async with server.client(token="") as tokenless:  # what any page can send: no token
                no_token = [await tokenless.get("/actions"), await tokenless.post(f"/actions/{key}/undo")]
            rebound = await http.get("/actions", headers={"Host": f"rebind.example:{server.url.rsplit(':', 1)[1]}"})
            forged_origin = await http.post(f"/actions/{key}/undo", headers={"Origin": HOSTILE_ORIGIN})

            problems: list[str] = []
            async with chromium_page("cross-site-form", problems) as page:

                async def hostile(route: Any) -> None:
                    await route.fulfill(body=HOSTILE_PAGE.format(target=undo), content_type="text/html")

                await page.route(f"{HOSTILE_ORIGIN}/", hostile)
                async with page.expect_navigation(url=undo):
                    await page.goto(f"{HOSTILE_ORIGIN}/")
                answered = await page.text_content("body")
            history = (await http.get("/actions", params={"run": events[0]["workflow_id"]})).json()

    assert [r.status_code for r in no_token] == [401, 401]
    assert rebound.status_code == 403 and "does not answer to the host name" in rebound.json()["detail"]
    assert forged_origin.status_code == 403 and "cross-site" in forged_origin.json()["detail"]
    assert answered is not None and "cross-site requests from 'http://localhost:9' are refused" in answered
    assert all(not entry["undone_by"] for entry in history)
    statuses = dict(
        (
            await g.ro_query(
                "MATCH (o:PurchaseOrder) WHERE o.po_number IN $ids RETURN o.po_number, o.status", {"ids": drafts}
            )
        ).result_set
    )
    assert statuses == {d: "submitted" for d in drafts}  # nothing undone


async def test_the_api_answers_its_own_page_and_configured_origins(make_stack, demo_copy, unique: str) -> None:
    graph_name, _ = demo_copy
    with ScriptedLLM(DomainModel({})) as llm:
        stack = await make_stack(llm.base_url, graph_name=graph_name, ontology_path=str(demo_graph.ONTOLOGY_PATH))
        async with chat_server(stack, origins=["https://ops.example"]) as server, server.client() as http:
            own = await http.get("/actions", headers={"Origin": server.url})
            configured = await http.get("/actions", headers={"Origin": "https://ops.example"})
            by_name = await http.get("/actions", headers={"Host": f"localhost:{server.url.rsplit(':', 1)[1]}"})
    assert [own.status_code, configured.status_code, by_name.status_code] == [200, 200, 200]
