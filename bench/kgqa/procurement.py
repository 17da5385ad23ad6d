"""Questions over the demo procurement graph (`embedded.demo_graph.generate()`), every gold answer computed
from that dataset: suppliers supply products; purchase orders are issued to a supplier, contain products and
are delivered to a warehouse; invoices bill orders; payments settle invoices."""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import date as Date
from typing import Any

from bench.kgqa import questions as g
from bench.kgqa.generate import Made, Maker, build
from bench.kgqa.questions import Question
from embedded.demo_graph import DemoDataset, generate

SEED = 61_2024
QUOTAS = {
    "lookup": 22,
    "one-hop": 22,
    "count": 24,
    "aggregation": 24,
    "multi-hop": 22,
    "path": 20,
    "filter": 22,
    "non-existent": 24,
}
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
ROW = dict[str, Any]


@dataclass
class Procurement:
    """The dataset indexed the way the questions walk it."""

    ds: DemoDataset
    suppliers: dict[str, ROW] = field(default_factory=dict)
    products: dict[str, ROW] = field(default_factory=dict)
    warehouses: dict[str, ROW] = field(default_factory=dict)
    orders: dict[str, ROW] = field(default_factory=dict)
    invoices: dict[str, ROW] = field(default_factory=dict)
    payments: dict[str, ROW] = field(default_factory=dict)
    supplies: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))  # supplier -> skus
    supplied_by: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))  # sku -> suppliers
    issued_to: dict[str, str] = field(default_factory=dict)  # po -> supplier
    orders_of: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))  # supplier -> pos
    lines: dict[str, list[ROW]] = field(default_factory=lambda: defaultdict(list))  # po -> CONTAINS edges
    delivered_to: dict[str, str] = field(default_factory=dict)  # po -> warehouse
    bills: dict[str, str] = field(default_factory=dict)  # invoice -> po
    invoice_of: dict[str, str] = field(default_factory=dict)  # po -> invoice
    settles: dict[str, str] = field(default_factory=dict)  # payment -> invoice

    @classmethod
    def from_dataset(cls, ds: DemoDataset) -> Procurement:
        p = cls(ds)
        for label, key, target in (
            ("Supplier", "supplier_id", p.suppliers),
            ("Product", "sku", p.products),
            ("Warehouse", "warehouse_id", p.warehouses),
            ("PurchaseOrder", "po_number", p.orders),
            ("Invoice", "invoice_number", p.invoices),
            ("Payment", "payment_id", p.payments),
        ):
            target.update({row[key]: row for row in ds.nodes[label]})
        for (_, _, rel, _, _), edges in ds.edges.items():
            for e in edges:
                if rel == "SUPPLIES":
                    p.supplies[e["from"]].append(e["to"])
                    p.supplied_by[e["to"]].append(e["from"])
                elif rel == "ISSUED_TO":
                    p.issued_to[e["from"]] = e["to"]
                    p.orders_of[e["to"]].append(e["from"])
                elif rel == "CONTAINS":
                    p.lines[e["from"]].append(e)
                elif rel == "DELIVER_TO":
                    p.delivered_to[e["from"]] = e["to"]
                elif rel == "BILLS":
                    p.bills[e["from"]] = e["to"]
                    p.invoice_of[e["to"]] = e["from"]
                elif rel == "SETTLES":
                    p.settles[e["from"]] = e["to"]
        return p

    def sname(self, sid: str) -> str:
        return self.suppliers[sid]["name"]

    def pname(self, sku: str) -> str:
        return self.products[sku]["name"]

    def wh(self, wid: str) -> list[str]:
        """A warehouse's accepted spellings: its name, its id, its city."""
        w = self.warehouses[wid]
        return [w["name"], wid, w["city"]]

    @property
    def supplier_names(self) -> list[str]:
        return [s["name"] for s in self.suppliers.values()]

    @property
    def product_names(self) -> list[str]:
        return [p["name"] for p in self.products.values()]


def _total(values: list[float]) -> float:
    return round(sum(values), 2)


def _unique_top(scores: dict[str, float], k: int) -> list[str] | None:
    """The k best keys, or None when the k-th and the (k+1)-th tie (no single right answer)."""
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    if len(ranked) < k or (len(ranked) > k and ranked[k - 1][1] == ranked[k][1]):
        return None
    return [key for key, _ in ranked[:k]]


class Makers:
    """One method per kind of question; each returns the phrasings, the fields and the gold, or None."""

    def __init__(self, p: Procurement) -> None:
        self.p = p
        self.statuses = sorted({o["status"] for o in p.orders.values()})
        self.countries = sorted({s["country"] for s in p.suppliers.values()})
        self.categories = sorted({x["category"] for x in p.products.values()})
        self.methods = sorted({x["method"] for x in p.payments.values()})
        self.cities = sorted({w["city"] for w in p.warehouses.values()})

    # lookup -----------------------------------------------------------------------------------------------
    def supplier_country(self, rng: random.Random) -> Made:
        s = rng.choice(list(self.p.suppliers.values()))
        return Made(
            (
                "Which country is {s} based in?",
                "In what country is the supplier {s} located?",
                "Where is {s} headquartered? Name the country.",
            ),
            g.name(s["country"], self.countries),
            {"s": s["name"]},
        )

    def supplier_rating(self, rng: random.Random) -> Made:
        s = rng.choice(list(self.p.suppliers.values()))
        return Made(
            ("What is the rating of {s}?", "How is the supplier {s} rated?", "What rating does {s} have?"),
            g.number(s["rating"]),
            {"s": s["name"]},
        )

    def supplier_terms(self, rng: random.Random) -> Made:
        s = rng.choice(list(self.p.suppliers.values()))
        return Made(
            (
                "What are the payment terms of {s}, in days?",
                "How many days of payment terms does {s} give?",
                "Within how many days must {s} be paid?",
            ),
            g.count(s["payment_terms_days"]),
            {"s": s["name"]},
        )

    def product_price(self, rng: random.Random) -> Made:
        x = rng.choice(list(self.p.products.values()))
        return Made(
            ("What is the unit price of {x}?", "How much does one {x} cost?", "What does a single unit of {x} cost?"),
            g.number(x["unit_price"]),
            {"x": x["name"]},
        )

    def product_category(self, rng: random.Random) -> Made:
        x = rng.choice(list(self.p.products.values()))
        return Made(
            (
                "Which category does {x} belong to?",
                "What product category is {x} in?",
                "In which category is the product {x} listed?",
            ),
            g.name(x["category"], self.categories),
            {"x": x["name"]},
        )

    def order_status(self, rng: random.Random) -> Made:
        o = rng.choice(list(self.p.orders.values()))
        return Made(
            (
                "What is the status of purchase order {o}?",
                "What state is order {o} in?",
                "Which status does purchase order {o} have?",
            ),
            g.name(o["status"], self.statuses),
            {"o": o["po_number"]},
        )

    def order_total(self, rng: random.Random) -> Made:
        o = rng.choice(list(self.p.orders.values()))
        return Made(
            (
                "What is the total amount of purchase order {o}?",
                "How much is order {o} worth in total?",
                "What does purchase order {o} amount to?",
            ),
            g.number(o["total_amount"]),
            {"o": o["po_number"]},
        )

    def order_date(self, rng: random.Random) -> Made:
        o = rng.choice(list(self.p.orders.values()))
        return Made(
            (
                "On what date was purchase order {o} placed?",
                "When was order {o} ordered?",
                "What is the order date of {o}?",
            ),
            g.date(o["order_date"]),
            {"o": o["po_number"]},
        )

    def invoice_due(self, rng: random.Random) -> Made:
        i = rng.choice(list(self.p.invoices.values()))
        return Made(
            (
                "When is invoice {i} due?",
                "What is the due date of invoice {i}?",
                "By which date must invoice {i} be paid?",
            ),
            g.date(i["due_date"]),
            {"i": i["invoice_number"]},
        )

    def warehouse_city(self, rng: random.Random) -> Made:
        w = rng.choice(list(self.p.warehouses.values()))
        return Made(
            (
                "In which city is warehouse {w}?",
                "Where is warehouse {w} located (city)?",
                "What city does warehouse {w} stand in?",
            ),
            g.name(w["city"], self.cities),
            {"w": w["warehouse_id"]},
        )

    def payment_method(self, rng: random.Random) -> Made:
        x = rng.choice(list(self.p.payments.values()))
        return Made(
            (
                "How was payment {x} made?",
                "Which payment method was used for {x}?",
                "By what method was payment {x} paid?",
            ),
            g.name(x["method"], self.methods),
            {"x": x["payment_id"]},
        )

    # one-hop ----------------------------------------------------------------------------------------------
    def products_of_supplier(self, rng: random.Random) -> Made:
        sid = rng.choice(list(self.p.suppliers))
        items = sorted({self.p.pname(k) for k in self.p.supplies[sid]})
        return Made(
            (
                "Which products does {s} supply?",
                "List the products supplied by {s}.",
                "What does the supplier {s} sell to us? Name the products.",
            ),
            g.names(list(items), distractors=self.p.product_names),
            {"s": self.p.sname(sid)},
        )

    def suppliers_of_product(self, rng: random.Random) -> Made | None:
        sku = rng.choice(list(self.p.products))
        items = sorted({self.p.sname(s) for s in self.p.supplied_by[sku]})
        if not 1 <= len(items) <= 6:
            return None
        return Made(
            ("Which suppliers supply {x}?", "Who supplies {x}?", "From which suppliers can we get {x}?"),
            g.names(list(items), distractors=self.p.supplier_names),
            {"x": self.p.pname(sku)},
        )

    def supplier_of_order(self, rng: random.Random) -> Made:
        po = rng.choice(list(self.p.orders))
        return Made(
            (
                "Which supplier was purchase order {o} issued to?",
                "Who is the supplier of order {o}?",
                "To which supplier did we send purchase order {o}?",
            ),
            g.name(self.p.sname(self.p.issued_to[po]), self.p.supplier_names),
            {"o": po},
        )

    def warehouse_of_order(self, rng: random.Random) -> Made:
        po = rng.choice(list(self.p.orders))
        others = [w["name"] for wid, w in self.p.warehouses.items() if wid != self.p.delivered_to[po]]
        return Made(
            (
                "Which warehouse is purchase order {o} delivered to?",
                "Where does order {o} get delivered?",
                "To which warehouse does purchase order {o} go?",
            ),
            g.name(self.p.wh(self.p.delivered_to[po]), others),
            {"o": po},
        )

    def products_in_order(self, rng: random.Random) -> Made:
        po = rng.choice(list(self.p.orders))
        items = sorted({self.p.pname(e["to"]) for e in self.p.lines[po]})
        return Made(
            (
                "Which products does purchase order {o} contain?",
                "What products are on order {o}?",
                "List the products ordered in {o}.",
            ),
            g.names(list(items), distractors=self.p.product_names),
            {"o": po},
        )

    def order_of_invoice(self, rng: random.Random) -> Made:
        inv = rng.choice(list(self.p.invoices))
        return Made(
            (
                "Which purchase order does invoice {i} bill?",
                "What order is invoice {i} for?",
                "Invoice {i} bills which purchase order?",
            ),
            g.name(self.p.bills[inv]),
            {"i": inv},
        )

    def invoice_of_payment(self, rng: random.Random) -> Made:
        pay = rng.choice(list(self.p.payments))
        return Made(
            (
                "Which invoice does payment {x} settle?",
                "What invoice was paid by payment {x}?",
                "Payment {x} settles which invoice?",
            ),
            g.name(self.p.settles[pay]),
            {"x": pay},
        )

    # count ------------------------------------------------------------------------------------------------
    def orders_of_supplier(self, rng: random.Random) -> Made:
        sid = rng.choice(list(self.p.suppliers))
        return Made(
            (
                "How many purchase orders were issued to {s}?",
                "How many orders have we placed with {s}?",
                "What is the number of purchase orders for the supplier {s}?",
            ),
            g.count(len(self.p.orders_of[sid])),
            {"s": self.p.sname(sid)},
        )

    def product_count_of_supplier(self, rng: random.Random) -> Made:
        sid = rng.choice(list(self.p.suppliers))
        return Made(
            (
                "How many products does {s} supply?",
                "How many different products can we buy from {s}?",
                "Count the products supplied by {s}.",
            ),
            g.count(len(set(self.p.supplies[sid]))),
            {"s": self.p.sname(sid)},
        )

    def orders_with_status(self, rng: random.Random) -> Made:
        status = rng.choice(self.statuses)
        n = sum(o["status"] == status for o in self.p.orders.values())
        return Made(
            (
                "How many purchase orders have the status {st}?",
                "How many orders are {st}?",
                "Count the purchase orders whose status is '{st}'.",
            ),
            g.count(n),
            {"st": status},
        )

    def invoices_with_status(self, rng: random.Random) -> Made:
        status = rng.choice(sorted({i["status"] for i in self.p.invoices.values()}))
        n = sum(i["status"] == status for i in self.p.invoices.values())
        return Made(
            (
                "How many invoices are {st}?",
                "How many invoices have the status '{st}'?",
                "What is the number of {st} invoices?",
            ),
            g.count(n),
            {"st": status},
        )

    def suppliers_in_country(self, rng: random.Random) -> Made:
        country = rng.choice(self.countries)
        n = sum(s["country"] == country for s in self.p.suppliers.values())
        return Made(
            (
                "How many suppliers are based in {c}?",
                "How many of our suppliers are located in {c}?",
                "Count the suppliers from {c}.",
            ),
            g.count(n),
            {"c": country},
        )

    def products_in_category(self, rng: random.Random) -> Made:
        cat = rng.choice(self.categories)
        n = sum(x["category"] == cat for x in self.p.products.values())
        return Made(
            (
                "How many products are in the {c} category?",
                "How many {c} products are there?",
                "Count the products of category {c}.",
            ),
            g.count(n),
            {"c": cat},
        )

    def orders_to_warehouse(self, rng: random.Random) -> Made:
        wid = rng.choice(list(self.p.warehouses))
        n = sum(w == wid for w in self.p.delivered_to.values())
        return Made(
            (
                "How many purchase orders are delivered to the {w}?",
                "How many orders go to {w}?",
                "Count the purchase orders with delivery to the {w}.",
            ),
            g.count(n),
            {"w": self.p.warehouses[wid]["name"]},
        )

    def payments_by_method(self, rng: random.Random) -> Made:
        method = rng.choice(self.methods)
        n = sum(x["method"] == method for x in self.p.payments.values())
        return Made(
            (
                "How many payments were made by {m}?",
                "How many payments used {m}?",
                "Count the payments whose method is {m}.",
            ),
            g.count(n),
            {"m": method},
        )

    def orders_containing(self, rng: random.Random) -> Made:
        sku = rng.choice(list(self.p.products))
        n = sum(any(e["to"] == sku for e in lines) for lines in self.p.lines.values())
        return Made(
            (
                "How many purchase orders contain {x}?",
                "In how many orders does {x} appear?",
                "Count the purchase orders that include {x}.",
            ),
            g.count(n),
            {"x": self.p.pname(sku)},
        )

    # aggregation ------------------------------------------------------------------------------------------
    def supplier_order_total(self, rng: random.Random) -> Made:
        sid = rng.choice(list(self.p.suppliers))
        total = _total([self.p.orders[po]["total_amount"] for po in self.p.orders_of[sid]])
        return Made(
            (
                "What is the total amount of all purchase orders issued to {s}?",
                "How much have we ordered from {s} in total?",
                "Sum up the order totals of {s}.",
            ),
            g.number(total),
            {"s": self.p.sname(sid)},
        )

    def supplier_order_average(self, rng: random.Random) -> Made:
        sid = rng.choice(list(self.p.suppliers))
        amounts = [self.p.orders[po]["total_amount"] for po in self.p.orders_of[sid]]
        return Made(
            (
                "What is the average total amount of the purchase orders of {s}?",
                "On average, how large is an order placed with {s}?",
            ),
            g.number(round(sum(amounts) / len(amounts), 4)),
            {"s": self.p.sname(sid)},
        )

    def supplier_order_max(self, rng: random.Random) -> Made:
        sid = rng.choice(list(self.p.suppliers))
        top = max(self.p.orders[po]["total_amount"] for po in self.p.orders_of[sid])
        return Made(
            (
                "What is the largest purchase order amount for {s}?",
                "What is the most expensive single order we placed with {s}? Give its total.",
            ),
            g.number(top),
            {"s": self.p.sname(sid)},
        )

    def category_average_price(self, rng: random.Random) -> Made:
        cat = rng.choice(self.categories)
        prices = [x["unit_price"] for x in self.p.products.values() if x["category"] == cat]
        return Made(
            (
                "What is the average unit price of products in the {c} category?",
                "On average, what does one product of the {c} category cost per unit?",
            ),
            g.number(round(sum(prices) / len(prices), 4)),
            {"c": cat},
        )

    def top_suppliers_by_orders(self, rng: random.Random) -> Made | None:
        k = rng.choice([1, 2, 3])
        top = _unique_top({sid: len(pos) for sid, pos in self.p.orders_of.items()}, k)
        if top is None:
            return None
        return Made(
            (
                "Which {k} suppliers have the most purchase orders?",
                "Name the top {k} suppliers by number of purchase orders.",
            )
            if k > 1
            else ("Which supplier has the most purchase orders?", "Who is our supplier with the most orders?"),
            g.topk([self.p.sname(s) for s in top], self.p.supplier_names),
            {"k": k},
        )

    def top_supplier_of_warehouse(self, rng: random.Random) -> Made | None:
        wid = rng.choice(list(self.p.warehouses))
        top = _unique_top(dict(Counter(self.p.issued_to[po] for po, w in self.p.delivered_to.items() if w == wid)), 1)
        if top is None:
            return None
        return Made(
            (
                "Which supplier has the most purchase orders delivered to the {w}?",
                "Whose orders arrive most often at the {w}? Name the supplier.",
            ),
            g.topk([self.p.sname(top[0])], self.p.supplier_names),
            {"w": self.p.warehouses[wid]["name"]},
        )

    def top_suppliers_by_amount(self, rng: random.Random) -> Made | None:
        month = rng.randrange(1, 12)
        scores: dict[str, float] = defaultdict(float)
        for po, o in self.p.orders.items():
            if o["order_date"].startswith(f"2024-{month:02d}"):
                scores[self.p.issued_to[po]] += o["total_amount"]
        top = _unique_top(dict(scores), 1)
        if top is None:
            return None
        return Made(
            (
                "Which supplier received the highest total purchase order amount in {m} 2024?",
                "With which supplier did we spend the most on orders placed in {m} 2024?",
            ),
            g.topk([self.p.sname(top[0])], self.p.supplier_names),
            {"m": MONTHS[month - 1]},
        )

    def top_warehouse(self, rng: random.Random) -> Made | None:
        top = _unique_top(dict(Counter(self.p.delivered_to.values())), 1)
        if top is None:
            return None
        return Made(
            (
                "Which warehouse receives the most purchase orders?",
                "Which warehouse gets the most deliveries?",
                "To which warehouse are the most orders delivered?",
            ),
            g.topk([self.p.wh(top[0])], [w["name"] for w in self.p.warehouses.values()]),
        )

    def top_rated_in_country(self, rng: random.Random) -> Made | None:
        country = rng.choice(self.countries)
        scores = {s["name"]: s["rating"] for s in self.p.suppliers.values() if s["country"] == country}
        if len(scores) < 2:
            return None
        top = _unique_top(scores, 1)
        if top is None:
            return None
        return Made(
            ("Which supplier based in {c} has the highest rating?", "Who is the best-rated supplier in {c}?"),
            g.topk([top[0]], list(scores)),
            {"c": country},
        )

    def product_quantity(self, rng: random.Random) -> Made | None:
        sku = rng.choice(list(self.p.products))
        qty = sum(e["quantity"] for lines in self.p.lines.values() for e in lines if e["to"] == sku)
        if qty == 0:
            return None
        return Made(
            (
                "What total quantity of {x} has been ordered across all purchase orders?",
                "How many units of {x} were ordered in all?",
            ),
            g.count(qty),
            {"x": self.p.pname(sku)},
        )

    def payments_total_by_method(self, rng: random.Random) -> Made:
        method = rng.choice(self.methods)
        total = _total([x["amount"] for x in self.p.payments.values() if x["method"] == method])
        return Made(
            ("What is the total amount paid by {m}?", "How much money was paid by {m} in all?"),
            g.number(total),
            {"m": method},
        )

    def top_product_in_category(self, rng: random.Random) -> Made | None:
        cat = rng.choice(self.categories)
        counts = Counter(
            e["to"] for lines in self.p.lines.values() for e in lines if self.p.products[e["to"]]["category"] == cat
        )
        top = _unique_top(dict(counts), 1)
        if top is None:
            return None
        return Made(
            (
                "Which {c} product appears in the most purchase orders?",
                "What is the most frequently ordered product in the {c} category?",
            ),
            g.topk([self.p.pname(top[0])], self.p.product_names),
            {"c": cat},
        )

    # multi-hop --------------------------------------------------------------------------------------------
    def warehouses_of_supplier(self, rng: random.Random) -> Made | None:
        sid = rng.choice(list(self.p.suppliers))
        wids = sorted({self.p.delivered_to[po] for po in self.p.orders_of[sid]})
        if not 1 <= len(wids) <= 5:
            return None
        others = [w["name"] for wid, w in self.p.warehouses.items() if wid not in wids]
        return Made(
            (
                "Which warehouses have received orders from {s}?",
                "To which warehouses are the purchase orders of {s} delivered?",
                "Where do the orders placed with {s} get delivered? List the warehouses.",
            ),
            g.names([self.p.wh(w) for w in wids], distractors=others),
            {"s": self.p.sname(sid)},
        )

    def suppliers_per_warehouse(self, rng: random.Random) -> Made:
        wid = rng.choice(list(self.p.warehouses))
        n = len({self.p.issued_to[po] for po, w in self.p.delivered_to.items() if w == wid})
        return Made(
            (
                "How many distinct suppliers have purchase orders delivered to the {w}?",
                "From how many different suppliers does the {w} receive orders?",
            ),
            g.count(n),
            {"w": self.p.warehouses[wid]["name"]},
        )

    def supplier_of_invoice(self, rng: random.Random) -> Made:
        inv = rng.choice(list(self.p.invoices))
        return Made(
            (
                "Which supplier's order does invoice {i} bill?",
                "Invoice {i} is for an order with which supplier?",
                "Who is the supplier behind invoice {i}?",
            ),
            g.name(self.p.sname(self.p.issued_to[self.p.bills[inv]]), self.p.supplier_names),
            {"i": inv},
        )

    def supplier_of_payment(self, rng: random.Random) -> Made:
        pay = rng.choice(list(self.p.payments))
        sid = self.p.issued_to[self.p.bills[self.p.settles[pay]]]
        return Made(
            (
                "Which supplier was paid by payment {x}?",
                "Payment {x} went to which supplier?",
                "Which supplier received payment {x}?",
            ),
            g.name(self.p.sname(sid), self.p.supplier_names),
            {"x": pay},
        )

    def paid_total_of_supplier(self, rng: random.Random) -> Made | None:
        sid = rng.choice(list(self.p.suppliers))
        amounts = [
            x["amount"]
            for pay, x in self.p.payments.items()
            if self.p.issued_to[self.p.bills[self.p.settles[pay]]] == sid
        ]
        if not amounts:
            return None
        return Made(
            (
                "What is the total amount of payments made for orders issued to {s}?",
                "How much have we actually paid {s} so far, summing the payments?",
            ),
            g.number(_total(amounts)),
            {"s": self.p.sname(sid)},
        )

    def open_invoices_of_supplier(self, rng: random.Random) -> Made | None:
        sid = rng.choice(list(self.p.suppliers))
        n = sum(
            i["status"] == "open" and self.p.issued_to[self.p.bills[inv]] == sid for inv, i in self.p.invoices.items()
        )
        if n == 0:
            return None
        return Made(
            ("How many invoices for orders of {s} are still open?", "How many open invoices does {s} have?"),
            g.count(n),
            {"s": self.p.sname(sid)},
        )

    def countries_of_product_suppliers(self, rng: random.Random) -> Made | None:
        sku = rng.choice(list(self.p.products))
        countries = sorted({self.p.suppliers[s]["country"] for s in self.p.supplied_by[sku]})
        if not 1 <= len(countries) <= 4:
            return None
        return Made(
            (
                "In which countries are the suppliers of {x} based?",
                "From which countries do the suppliers of {x} come?",
            ),
            g.names(list(countries), distractors=self.countries),
            {"x": self.p.pname(sku)},
        )

    def categories_of_supplier(self, rng: random.Random) -> Made | None:
        sid = rng.choice(list(self.p.suppliers))
        cats = sorted({self.p.products[k]["category"] for k in self.p.supplies[sid]})
        if len(cats) > 4:
            return None
        return Made(
            ("Which product categories does {s} supply?", "In which categories are the products of {s}?"),
            g.names(list(cats), distractors=self.categories),
            {"s": self.p.sname(sid)},
        )

    # path -------------------------------------------------------------------------------------------------
    def orders_between(self, rng: random.Random) -> Made | None:
        sid, wid = rng.choice(list(self.p.suppliers)), rng.choice(list(self.p.warehouses))
        n = sum(self.p.delivered_to[po] == wid for po in self.p.orders_of[sid])
        if n == 0:
            return None
        return Made(
            (
                "How many purchase orders connect {s} with the {w}?",
                "Through how many purchase orders is {s} linked to the {w}?",
                "How many orders of {s} were delivered to the {w}?",
            ),
            g.count(n),
            {"s": self.p.sname(sid), "w": self.p.warehouses[wid]["name"]},
        )

    def shared_products(self, rng: random.Random) -> Made | None:
        a, b = rng.sample(list(self.p.suppliers), 2)
        common = sorted({self.p.pname(k) for k in set(self.p.supplies[a]) & set(self.p.supplies[b])})
        if not 1 <= len(common) <= 3:
            return None
        return Made(
            (
                "Which products do both {a} and {b} supply?",
                "What products do {a} and {b} have in common?",
                "Which products connect {a} and {b} as suppliers of the same item?",
            ),
            g.names(list(common), distractors=self.p.product_names),
            {"a": self.p.sname(a), "b": self.p.sname(b)},
        )

    def payment_chain(self, rng: random.Random) -> Made:
        pay = rng.choice(list(self.p.payments))
        po = self.p.bills[self.p.settles[pay]]
        return Made(
            (
                "Which purchase order links payment {x} to its supplier, and which supplier is it?",
                "Follow payment {x} through its invoice: which purchase order and which supplier does it reach?",
            ),
            g.both(g.name(po), g.name(self.p.sname(self.p.issued_to[po]), self.p.supplier_names)),
            {"x": pay},
        )

    def order_between_invoice_and_warehouse(self, rng: random.Random) -> Made:
        inv = rng.choice(list(self.p.invoices))
        po = self.p.bills[inv]
        others = [w["name"] for wid, w in self.p.warehouses.items() if wid != self.p.delivered_to[po]]
        return Made(
            (
                "Which warehouse is the order billed by invoice {i} delivered to?",
                "Invoice {i} bills an order: where is that order delivered?",
            ),
            g.name(self.p.wh(self.p.delivered_to[po]), others),
            {"i": inv},
        )

    def suppliers_sharing_products(self, rng: random.Random) -> Made | None:
        sid = rng.choice(list(self.p.suppliers))
        others = sorted({self.p.sname(o) for k in self.p.supplies[sid] for o in self.p.supplied_by[k] if o != sid})
        if not 1 <= len(others) <= 6:
            return None
        return Made(
            (
                "Which other suppliers supply at least one product that {s} also supplies?",
                "Which suppliers are connected to {s} through a product they both supply?",
            ),
            g.names(list(others), distractors=self.p.supplier_names),
            {"s": self.p.sname(sid)},
        )

    def common_warehouse(self, rng: random.Random) -> Made | None:
        a, b = rng.sample(list(self.p.suppliers), 2)
        wa = {self.p.delivered_to[po] for po in self.p.orders_of[a]}
        wb = {self.p.delivered_to[po] for po in self.p.orders_of[b]}
        common = sorted(wa & wb)
        if not 1 <= len(common) <= 3:
            return None
        others = [w["name"] for wid, w in self.p.warehouses.items() if wid not in common]
        return Made(
            (
                "Which warehouses receive orders from both {a} and {b}?",
                "At which warehouses do deliveries of {a} and of {b} both arrive?",
            ),
            g.names([self.p.wh(w) for w in common], distractors=others),
            {"a": self.p.sname(a), "b": self.p.sname(b)},
        )

    # filter -----------------------------------------------------------------------------------------------
    def rated_suppliers_in_country(self, rng: random.Random) -> Made | None:
        country, bar = rng.choice(self.countries), rng.choice([3.0, 3.5, 4.0, 4.5])
        pool = [s for s in self.p.suppliers.values() if s["country"] == country]
        hits = sorted(s["name"] for s in pool if s["rating"] > bar)
        if not 1 <= len(hits) <= 5 or len(hits) == len(pool):
            return None
        return Made(
            (
                "Which suppliers in {c} have a rating above {r}?",
                "List the suppliers based in {c} rated higher than {r}.",
                "Which suppliers from {c} are rated over {r}?",
            ),
            g.names(list(hits), distractors=self.p.supplier_names),
            {"c": country, "r": bar},
        )

    def large_orders_of_supplier(self, rng: random.Random) -> Made | None:
        sid, bar = rng.choice(list(self.p.suppliers)), rng.choice([5_000, 10_000, 20_000, 50_000])
        n = sum(self.p.orders[po]["total_amount"] > bar for po in self.p.orders_of[sid])
        if n == 0:
            return None
        return Made(
            (
                "How many purchase orders of {s} have a total amount above {t}?",
                "How many orders issued to {s} are worth more than {t}?",
            ),
            g.count(n),
            {"s": self.p.sname(sid), "t": f"{bar:,}"},
        )

    def orders_in_month(self, rng: random.Random) -> Made | None:
        month = rng.randrange(1, 12)
        n = sum(
            Date.fromisoformat(o["order_date"]).year == 2024 and Date.fromisoformat(o["order_date"]).month == month
            for o in self.p.orders.values()
        )
        if n == 0:
            return None
        return Made(
            ("How many purchase orders were placed in {m} 2024?", "How many orders have an order date in {m} 2024?"),
            g.count(n),
            {"m": MONTHS[month - 1]},
        )

    def cheap_products_in_category(self, rng: random.Random) -> Made | None:
        cat, bar = rng.choice(self.categories), rng.choice([10, 15, 20, 25])
        hits = sorted(x["name"] for x in self.p.products.values() if x["category"] == cat and x["unit_price"] < bar)
        if not 1 <= len(hits) <= 6:
            return None
        return Made(
            (
                "Which {c} products cost less than {t} per unit?",
                "List the products in {c} with a unit price below {t}.",
            ),
            g.names(list(hits), distractors=self.p.product_names),
            {"c": cat, "t": bar},
        )

    def invoices_due_before(self, rng: random.Random) -> Made | None:
        day = Date(2024, rng.randrange(2, 12), 1)
        n = sum(Date.fromisoformat(i["due_date"]) < day and i["status"] == "open" for i in self.p.invoices.values())
        if n == 0:
            return None
        return Made(
            (
                "How many open invoices are due before {d}?",
                "How many invoices that are still open fall due before {d}?",
            ),
            g.count(n),
            {"d": day.isoformat()},
        )

    def status_orders_of_supplier(self, rng: random.Random) -> Made | None:
        sid, status = rng.choice(list(self.p.suppliers)), rng.choice(self.statuses)
        n = sum(self.p.orders[po]["status"] == status for po in self.p.orders_of[sid])
        if n == 0:
            return None
        return Made(
            ("How many {st} purchase orders does {s} have?", "How many orders issued to {s} have the status {st}?"),
            g.count(n),
            {"s": self.p.sname(sid), "st": status},
        )

    def terms_and_rating(self, rng: random.Random) -> Made | None:
        days, bar = rng.choice([15, 30, 45, 60]), rng.choice([3.5, 4.0, 4.5])
        hits = sorted(
            s["name"] for s in self.p.suppliers.values() if s["payment_terms_days"] == days and s["rating"] >= bar
        )
        if not 1 <= len(hits) <= 5:
            return None
        return Made(
            (
                "Which suppliers have payment terms of {d} days and a rating of at least {r}?",
                "List the suppliers with {d}-day payment terms rated {r} or better.",
            ),
            g.names(list(hits), distractors=self.p.supplier_names),
            {"d": days, "r": bar},
        )

    def big_payments_by_method(self, rng: random.Random) -> Made | None:
        method, bar = rng.choice(self.methods), rng.choice([10_000, 20_000, 40_000])
        n = sum(x["method"] == method and x["amount"] > bar for x in self.p.payments.values())
        if n == 0:
            return None
        return Made(
            ("How many payments over {t} were made by {m}?", "How many {m} payments exceeded {t}?"),
            g.count(n),
            {"m": method, "t": f"{bar:,}"},
        )

    # non-existent -----------------------------------------------------------------------------------------
    def fake_supplier(self, rng: random.Random) -> str:
        real = {n.lower() for n in self.p.supplier_names}
        invented = [
            "Zephyrine",
            "Quillmark",
            "Brightforge",
            "Halvorsen",
            "Marlowe",
            "Korvath",
            "Ambervale",
            "Tessaract",
            "Orinel",
            "Kestrelmoor",
        ]
        first_words = sorted({n.split()[0] for n in self.p.supplier_names if len(n.split()) == 2})
        second_words = [*sorted({n.split()[-1] for n in self.p.supplier_names}), "Holdings", "Partners", "Works"]
        while True:  # half wholly invented, half real words in a combination that does not exist
            first = rng.choice(invented) if rng.random() < 0.5 else rng.choice(first_words)
            candidate = f"{first} {rng.choice(second_words)}"
            if candidate.lower() not in real:
                return candidate

    def fake_product(self, rng: random.Random) -> str:
        real = {n.lower() for n in self.p.product_names}
        bases = sorted({n.rsplit(" ", 1)[0] for n in self.p.product_names})
        while True:
            if rng.random() < 0.5:
                candidate = f"{rng.choice(bases)} {rng.choice(['Deluxe', 'Mini', 'Max', 'Lite'])}"
            else:
                candidate = (
                    f"{rng.choice(['Turbine Blade', 'Laser Module', 'Hydraulic Pump', 'Fiber Spool'])} "
                    f"{rng.choice(['Standard', 'Pro'])}"
                )
            if candidate.lower() not in real:
                return candidate

    def fake_id(self, rng: random.Random, prefix: str, width: int, existing: set[str], low: int, high: int) -> str:
        while True:
            candidate = f"{prefix}{rng.randrange(low, high):0{width}d}"
            if candidate not in existing:
                return candidate

    def absent_supplier(self, rng: random.Random) -> Made:
        x = self.fake_supplier(rng)
        kind = rng.randrange(5)
        if kind == 0:
            return Made(
                ("What is the rating of {x}?", "How is the supplier {x} rated?"),
                g.absent(x, forbid_numbers=True),
                {"x": x},
            )
        if kind == 1:
            return Made(
                ("Which products does {x} supply?", "List the products supplied by {x}."),
                g.absent(x, distractors=self.p.product_names),
                {"x": x},
            )
        if kind == 2:
            return Made(
                ("How many purchase orders were issued to {x}?", "How many orders have we placed with {x}?"),
                g.absent(x, forbid_numbers=True),
                {"x": x},
            )
        if kind == 3:
            return Made(
                ("Which country is {x} based in?", "Where is the supplier {x} located?"),
                g.absent(x, distractors=self.countries),
                {"x": x},
            )
        return Made(
            (
                "What is the total amount of all purchase orders issued to {x}?",
                "How much have we ordered from {x} in total?",
            ),
            g.absent(x, forbid_numbers=True),
            {"x": x},
        )

    def absent_product(self, rng: random.Random) -> Made:
        x = self.fake_product(rng)
        if rng.random() < 0.5:
            return Made(
                ("What is the unit price of {x}?", "How much does one {x} cost?"),
                g.absent(x, forbid_numbers=True),
                {"x": x},
            )
        return Made(
            ("Which suppliers supply {x}?", "Who supplies {x}?"),
            g.absent(x, distractors=self.p.supplier_names),
            {"x": x},
        )

    def absent_record(self, rng: random.Random) -> Made:
        kind = rng.randrange(4)
        if kind == 0:
            x = self.fake_id(rng, "PO-2024", 4, set(self.p.orders), 700, 9999)
            return Made(
                ("What is the status of purchase order {x}?", "Which supplier was order {x} issued to?"),
                {**g.absent(x, distractors=self.statuses + self.p.supplier_names)},
                {"x": x},
            )
        if kind == 1:
            x = self.fake_id(rng, "INV-", 5, set(self.p.invoices), 700, 99999)
            return Made(
                ("Which purchase order does invoice {x} bill?", "When is invoice {x} due?"),
                {**g.absent(x, forbid_numbers=True), "forbid_patterns": [r"\bPO-\d+"]},
                {"x": x},
            )
        if kind == 2:
            x = self.fake_id(rng, "PAY-", 5, set(self.p.payments), 700, 99999)
            return Made(
                ("How was payment {x} made?", "Which payment method was used for {x}?"),
                g.absent(x, distractors=self.methods),
                {"x": x},
            )
        x = self.fake_id(rng, "WH-", 2, set(self.p.warehouses), 7, 99)
        return Made(
            ("In which city is warehouse {x}?", "How many purchase orders are delivered to warehouse {x}?"),
            g.absent(x, distractors=self.cities, forbid_numbers=True),
            {"x": x},
        )

    def by_category(self) -> dict[str, list[Maker]]:
        return {
            "lookup": [
                self.supplier_country,
                self.supplier_rating,
                self.supplier_terms,
                self.product_price,
                self.product_category,
                self.order_status,
                self.order_total,
                self.order_date,
                self.invoice_due,
                self.warehouse_city,
                self.payment_method,
            ],
            "one-hop": [
                self.products_of_supplier,
                self.suppliers_of_product,
                self.supplier_of_order,
                self.warehouse_of_order,
                self.products_in_order,
                self.order_of_invoice,
                self.invoice_of_payment,
            ],
            "count": [
                self.orders_of_supplier,
                self.product_count_of_supplier,
                self.orders_with_status,
                self.invoices_with_status,
                self.suppliers_in_country,
                self.products_in_category,
                self.orders_to_warehouse,
                self.payments_by_method,
                self.orders_containing,
            ],
            "aggregation": [
                self.supplier_order_total,
                self.supplier_order_average,
                self.supplier_order_max,
                self.category_average_price,
                self.top_suppliers_by_orders,
                self.top_suppliers_by_amount,
                self.top_warehouse,
                self.top_rated_in_country,
                self.product_quantity,
                self.payments_total_by_method,
                self.top_product_in_category,
                self.top_supplier_of_warehouse,
            ],
            "multi-hop": [
                self.warehouses_of_supplier,
                self.suppliers_per_warehouse,
                self.supplier_of_invoice,
                self.supplier_of_payment,
                self.paid_total_of_supplier,
                self.open_invoices_of_supplier,
                self.countries_of_product_suppliers,
                self.categories_of_supplier,
            ],
            "path": [
                self.orders_between,
                self.shared_products,
                self.payment_chain,
                self.order_between_invoice_and_warehouse,
                self.suppliers_sharing_products,
                self.common_warehouse,
            ],
            "filter": [
                self.rated_suppliers_in_country,
                self.large_orders_of_supplier,
                self.orders_in_month,
                self.cheap_products_in_category,
                self.invoices_due_before,
                self.status_orders_of_supplier,
                self.terms_and_rating,
                self.big_payments_by_method,
            ],
            "non-existent": [self.absent_supplier, self.absent_product, self.absent_record],
        }


def questions(dataset: DemoDataset | None = None) -> list[Question]:
    """The procurement question set: the same questions and golds on every run."""
    return build("proc", SEED, Makers(Procurement.from_dataset(dataset or generate())).by_category(), QUOTAS)
