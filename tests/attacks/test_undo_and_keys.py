"""Undo and keys an attacker (or an unlucky operator) leans on, on real FalkorDB: undo restores an action's
"before" only while the entity still holds what that action left, so a later change is never silently lost;
and a key that more than one node holds changes none of them."""

from __future__ import annotations

import json
from typing import Any

from actions.queries import SHARED_KEY
from backends.action_history import ActionHistory
from tests.integration.test_action_parameters import ORDERS, execute, order_props, record_count, tools  # noqa: F401


async def test_undo_after_a_later_change_to_the_same_property_is_refused_and_says_why(tools) -> None:  # noqa: F811
    actions, g = tools
    order = next(o for o in ORDERS if o["status"] == "approved" and not o["paid"])["po_number"]
    assert (await actions.execute_action(execute("hold", "PurchaseOrder", order, "s1", reason="customs check"))).success
    assert (await actions.execute_action(execute("release", "PurchaseOrder", order, "s2"))).success
    assert (await actions.execute_action(execute("hold", "PurchaseOrder", order, "s3", reason="quality audit"))).success
    history = ActionHistory(actions)
    first = next(e for e in await history.list(entity_id=order) if e.parameters == {"reason": "customs check"})

    refused = await history.undo(first, by="ops")
    assert not refused.success
    assert "hold_reason is no longer 'customs check'" in refused.detail and "undo that change first" in refused.detail
    props = await order_props(g, order)
    assert (props["status"], props["hold_reason"]) == ("on_hold", "quality audit")  # the later hold stands

    latest = next(e for e in await history.list(entity_id=order) if e.parameters == {"reason": "quality audit"})
    assert (await history.undo(latest, by="ops")).success  # the latest change can still be undone
    assert (await order_props(g, order))["status"] == "approved"


async def test_a_key_two_nodes_hold_changes_neither_and_leaves_no_record(tools) -> None:  # noqa: F811
    actions, g = tools
    draft = next(o for o in ORDERS if o["status"] == "draft")["po_number"]
    await g.query(
        "MATCH (o:PurchaseOrder {po_number: $po}) CREATE (:PurchaseOrder {po_number: $po, status: 'draft'})",
        {"po": draft},
    )
    before = await record_count(g)
    out = await actions.execute_action(execute("submit", "PurchaseOrder", draft))
    assert not out.success and SHARED_KEY in json.loads(out.output)["error"]
    statuses: Any = (
        await g.ro_query("MATCH (o:PurchaseOrder {po_number: $po}) RETURN o.status", {"po": draft})
    ).result_set
    assert statuses == [["draft"], ["draft"]] and await record_count(g) == before
