"""The demo knowledge graph: a procurement domain generated deterministically (same seed, same graph).

Suppliers supply products; purchase orders are issued to a supplier, contain products and are
delivered to a warehouse; invoices bill orders; payments settle invoices. Hundreds of orders, so
questions have real answers and real aggregates.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from falkordb.asyncio import FalkorDB

from actions.ontology import Ontology
from contracts.redaction import shown_url

SEED = 20240115

_COUNTRIES = [
    "Germany",
    "France",
    "United States",
    "Japan",
    "Brazil",
    "India",
    "Canada",
    "Italy",
    "Mexico",
    "Netherlands",
]
_SUPPLIER_WORDS = (
    [
        "Acme",
        "Globex",
        "Initech",
        "Umbrella",
        "Stark",
        "Wayne",
        "Tyrell",
        "Cyberdyne",
        "Soylent",
        "Hooli",
        "Vandelay",
        "Wonka",
        "Gringotts",
        "Oscorp",
        "Aperture",
        "Massive",
        "Nakatomi",
        "Pied Piper",
        "Monarch",
        "Virtucon",
        "Duff",
        "Bluth",
        "Dunder",
        "Prestige",
        "Sirius",
    ],
    ["Industrial", "Supply", "Components", "Logistics", "Materials", "Manufacturing", "Trading", "Electronics"],
)
_CATEGORIES = {
    "Electronics": ["Sensor", "Controller", "Power Supply", "Cable Harness", "Display Panel", "Relay"],
    "Hardware": ["Steel Bolt", "Hinge", "Bearing", "Bracket", "Valve", "Gasket"],
    "Office": ["Printer Paper", "Toner Cartridge", "Desk Chair", "Monitor Arm", "Whiteboard"],
    "Packaging": ["Cardboard Box", "Pallet Wrap", "Foam Insert", "Shipping Label"],
    "Chemicals": ["Lubricant", "Solvent", "Adhesive", "Coolant"],
}
_CITIES = [
    ("Hamburg", "Germany"),
    ("Lyon", "France"),
    ("Chicago", "United States"),
    ("Osaka", "Japan"),
    ("Toronto", "Canada"),
    ("Rotterdam", "Netherlands"),
]
_PO_STATUSES = ["draft", "submitted", "approved", "approved", "approved", "delivered", "delivered", "cancelled"]
_PAY_METHODS = ["bank transfer", "credit card", "check"]


@dataclass
class DemoDataset:
    nodes: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # label -> property maps
    # (from_label, from_key, rel_type, to_label, to_key) -> [{"from": id, "to": id, **props}]
    edges: dict[tuple[str, str, str, str, str], list[dict[str, Any]]] = field(default_factory=dict)

    def count(self, label: str) -> int:
        return len(self.nodes.get(label, []))


def generate(n_suppliers: int = 25, n_orders: int = 600, seed: int = SEED) -> DemoDataset:
    rng = random.Random(seed)
    ds = DemoDataset()
    start = date(2024, 1, 2)

    suppliers: list[dict[str, Any]] = []
    for i in range(n_suppliers):
        name = f"{_SUPPLIER_WORDS[0][i % len(_SUPPLIER_WORDS[0])]} {_SUPPLIER_WORDS[1][i % len(_SUPPLIER_WORDS[1])]}"
        suppliers.append(
            {
                "supplier_id": f"SUP-{i + 1:03d}",
                "name": name,
                "country": rng.choice(_COUNTRIES),
                "rating": round(rng.uniform(2.5, 5.0), 1),
                "payment_terms_days": rng.choice([15, 30, 45, 60]),
                "account_balance": float(rng.randrange(20_000, 400_000, 500)),
            }
        )
    ds.nodes["Supplier"] = suppliers

    products: list[dict[str, Any]] = []
    n = 0
    for category, names in _CATEGORIES.items():
        for base in names:
            for grade in ("Standard", "Pro"):
                n += 1
                products.append(
                    {
                        "sku": f"SKU-{n:04d}",
                        "name": f"{base} {grade}",
                        "category": category,
                        "unit_price": round(rng.uniform(2, 40) * (3 if grade == "Pro" else 1), 2),
                    }
                )
    ds.nodes["Product"] = products

    ds.nodes["Warehouse"] = [
        {"warehouse_id": f"WH-{i + 1:02d}", "name": f"{city} Distribution Center", "city": city, "country": country}
        for i, (city, country) in enumerate(_CITIES)
    ]

    supplies: list[dict[str, Any]] = []
    for s in suppliers:
        for p in rng.sample(products, rng.randint(4, 9)):
            supplies.append({"from": s["supplier_id"], "to": p["sku"], "lead_time_days": rng.randint(2, 30)})
    ds.edges[("Supplier", "supplier_id", "SUPPLIES", "Product", "sku")] = supplies
    catalogue: dict[str, list[str]] = {}
    for e in supplies:
        catalogue.setdefault(e["from"], []).append(e["to"])
    price = {p["sku"]: p["unit_price"] for p in products}

    orders, issued_to, contains, deliver_to = [], [], [], []
    invoices, bills, payments, settles = [], [], [], []
    paid_orders: set[str] = set()
    for i in range(n_orders):
        supplier = suppliers[
            min(int(rng.paretovariate(1.2)) - 1, n_suppliers - 1) if i % 3 == 0 else rng.randrange(n_suppliers)
        ]
        po_id = f"PO-{2024_0000 + i + 1}"
        order_date = start + timedelta(days=rng.randrange(0, 330))
        status = rng.choice(_PO_STATUSES)
        total = 0.0
        for sku in rng.sample(catalogue[supplier["supplier_id"]], rng.randint(1, 3)):
            qty = rng.randint(5, 500)
            total += qty * price[sku]
            contains.append({"from": po_id, "to": sku, "quantity": qty, "unit_price": price[sku]})
        total = round(total, 2)
        orders.append(
            {
                "po_number": po_id,
                "status": status,
                "order_date": order_date.isoformat(),
                "total_amount": total,
                "currency": "USD",
            }
        )
        issued_to.append({"from": po_id, "to": supplier["supplier_id"]})
        deliver_to.append({"from": po_id, "to": rng.choice(ds.nodes["Warehouse"])["warehouse_id"]})
        if status in ("approved", "delivered"):
            inv_id = f"INV-{i + 1:05d}"
            paid = status == "delivered" and rng.random() < 0.8
            invoices.append(
                {
                    "invoice_number": inv_id,
                    "amount": total,
                    "status": "paid" if paid else "open",
                    "issued_on": (order_date + timedelta(days=3)).isoformat(),
                    "due_date": (order_date + timedelta(days=3 + supplier["payment_terms_days"])).isoformat(),
                }
            )
            bills.append({"from": inv_id, "to": po_id})
            if paid:
                paid_orders.add(po_id)
                pay_id = f"PAY-{i + 1:05d}"
                payments.append(
                    {
                        "payment_id": pay_id,
                        "amount": total,
                        "method": rng.choice(_PAY_METHODS),
                        "paid_on": (order_date + timedelta(days=rng.randint(10, 60))).isoformat(),
                    }
                )
                settles.append({"from": pay_id, "to": inv_id})
    for o in orders:
        o["paid"] = o["po_number"] in paid_orders
    _add_batch_supplier(ds, orders, issued_to, contains, deliver_to, products, rng_seed=seed)
    ds.nodes["PurchaseOrder"] = orders
    # The buyer's operating account: enough for most payments, not for all of them.
    ds.nodes["Account"] = [
        {"account_id": "ACC-OPS", "name": "Operating account", "balance": OPERATING_BALANCE, "currency": "USD"}
    ]
    ds.nodes["Invoice"] = invoices
    ds.nodes["Payment"] = payments
    ds.edges[("PurchaseOrder", "po_number", "ISSUED_TO", "Supplier", "supplier_id")] = issued_to
    ds.edges[("PurchaseOrder", "po_number", "CONTAINS", "Product", "sku")] = contains
    ds.edges[("PurchaseOrder", "po_number", "DELIVER_TO", "Warehouse", "warehouse_id")] = deliver_to
    ds.edges[("Invoice", "invoice_number", "BILLS", "PurchaseOrder", "po_number")] = bills
    ds.edges[("Payment", "payment_id", "SETTLES", "Invoice", "invoice_number")] = settles
    return ds


BATCH_SUPPLIER = {
    "supplier_id": "SUP-900",
    "name": "Northwind Traders",
    "country": "Netherlands",
    "rating": 4.2,
    "payment_terms_days": 30,
    "account_balance": 50_000.0,
}
OPERATING_BALANCE = 250_000.0


def _add_batch_supplier(
    ds: DemoDataset,
    orders: list[dict[str, Any]],
    issued_to: list[dict[str, Any]],
    contains: list[dict[str, Any]],
    deliver_to: list[dict[str, Any]],
    products: list[dict[str, Any]],
    rng_seed: int,
) -> None:
    """The demo conversation's supplier: 20 approved orders, awaiting payment. Paying them all from
    the operating account succeeds 18 times; one order was paid already and one costs more than the
    account holds, whatever the order the payments run in (the other 18 total far less than the balance)."""
    rng = random.Random(rng_seed + 1)
    ds.nodes["Supplier"].append(dict(BATCH_SUPPLIER))
    skus = [p["sku"] for p in rng.sample(products, 4)]
    for i in range(20):
        po_id = f"PO-{2025_0000 + i + 1}"
        total = round(rng.uniform(2_000, 9_000), 2)
        paid = i == 14
        if i == 2:
            total = OPERATING_BALANCE + 150_000.0
        orders.append(
            {
                "po_number": po_id,
                "status": "approved",
                "order_date": f"2025-01-{i + 5:02d}",
                "total_amount": total,
                "currency": "USD",
                "paid": paid,
            }
        )
        issued_to.append({"from": po_id, "to": BATCH_SUPPLIER["supplier_id"]})
        contains.append({"from": po_id, "to": skus[i % len(skus)], "quantity": 1, "unit_price": total})
        deliver_to.append({"from": po_id, "to": "WH-01"})


ONTOLOGY_PATH = Path(__file__).with_name("procurement_domain.yaml")


async def load_ontology(url: str, graph_name: str, ontology: Ontology) -> None:
    """The ontology, queryable with Cypher, in its own graph `<graph>__ontology` (kept out of the instance
    graph, whose discovered schema the planner reads)."""
    db = FalkorDB.from_url(url, socket_connect_timeout=5)
    try:
        name = f"{graph_name}__ontology"
        if name in await db.list_graphs():
            await db.select_graph(name).delete()
        graph = db.select_graph(name)
        classes = [
            {
                "name": n,
                "description": c.description,
                "key": c.key,
                "display": c.display,
                "properties": json.dumps(c.properties),
            }
            for n, c in ontology.classes.items()
        ]
        await graph.query("UNWIND $rows AS row CREATE (c:Class) SET c = row", {"rows": classes})
        rels = [
            {"type": r.type, "from": r.from_, "to": r.to, "description": r.description} for r in ontology.relationships
        ]
        await graph.query(
            "UNWIND $rows AS row MATCH (a:Class {name: row.from}), (b:Class {name: row.to}) "
            "CREATE (a)-[:RELATES {type: row.type, description: row.description}]->(b)",
            {"rows": rels},
        )
    finally:
        await db.aclose()


KEYS = {
    "Supplier": "supplier_id",
    "Product": "sku",
    "Warehouse": "warehouse_id",
    "PurchaseOrder": "po_number",
    "Invoice": "invoice_number",
    "Payment": "payment_id",
    "Account": "account_id",
}
BATCH = 500


async def empty_graph(db: FalkorDB, graph_name: str, *, replace: bool) -> Any | None:
    """The graph to load into: None when one is there already and `replace` is off (it is kept)."""
    if graph_name in await db.list_graphs():
        if not replace:
            return None
        await db.select_graph(graph_name).delete()
    return db.select_graph(graph_name)


async def load(url: str, graph_name: str, dataset: DemoDataset | None = None, *, replace: bool = False) -> bool:
    """Load the dataset into `graph_name` unless a graph is already there. Returns True when it loaded."""
    db = FalkorDB.from_url(url, socket_connect_timeout=5)
    try:
        graph = await empty_graph(db, graph_name, replace=replace)
        if graph is None:
            return False
        ds = dataset or generate()
        for label, key in KEYS.items():
            await graph.query(f"CREATE INDEX FOR (n:{label}) ON (n.{key})")
        await graph.query("CREATE INDEX FOR (n:Supplier) ON (n.name)")
        for label, rows in ds.nodes.items():
            for i in range(0, len(rows), BATCH):
                await graph.query(f"UNWIND $rows AS row CREATE (n:{label}) SET n = row", {"rows": rows[i : i + BATCH]})
        for (src, src_key, rel, dst, dst_key), edges in ds.edges.items():
            rows = [
                {"src": e["from"], "dst": e["to"], "props": {k: v for k, v in e.items() if k not in ("from", "to")}}
                for e in edges
            ]
            for i in range(0, len(rows), BATCH):
                await graph.query(
                    f"UNWIND $rows AS row MATCH (a:{src} {{{src_key}: row.src}}), (b:{dst} {{{dst_key}: row.dst}}) "
                    f"CREATE (a)-[r:{rel}]->(b) SET r = row.props",
                    {"rows": rows[i : i + BATCH]},
                )
        return True
    finally:
        await db.aclose()


def main() -> None:
    """`python -m embedded.demo_graph [--url URL] [--graph NAME] [--replace]`: load the demo graph and its
    ontology."""
    import argparse
    import asyncio

    p = argparse.ArgumentParser(prog="python -m embedded.demo_graph", description=main.__doc__)
    p.add_argument("--url", default="redis://127.0.0.1:6379")
    p.add_argument("--graph", default="procurement")
    p.add_argument("--replace", action="store_true", help="drop and reload an existing graph")
    args = p.parse_args()
    loaded = asyncio.run(load(args.url, args.graph, replace=args.replace))
    asyncio.run(load_ontology(args.url, args.graph, Ontology.load(ONTOLOGY_PATH)))
    print(
        f"graph '{args.graph}' at {shown_url(args.url)}: {'loaded' if loaded else 'already present, left as is'}; "
        f"ontology in '{args.graph}__ontology'"
    )


if __name__ == "__main__":
    main()
