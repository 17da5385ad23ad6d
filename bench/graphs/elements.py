"""The chemical elements, their places in the periodic table, their isotopes and how those decay, and who found
each element and where, from the SQLite database the PyPI package `mendeleev` ships (MIT licence; the data
gathered from IUPAC, the CRC Handbook of Chemistry and Physics and NUBASE2020, as the package cites them). The
database is read directly, so the package's own dependencies are never imported. Kept: isotopes that are stable
or have a half-life of a second or more, and decay modes that were observed. The data spell some discoverers
several ways or by initials; each is one name here (DISCOVERERS).

Units are chosen so that every figure is stated within four decimals and stays below 1e18 (the question
generator rounds golds to four decimals and writes its bounds as 64-bit integers): kelvin for melting and
boiling points, kg/m3 for density, picometres for atomic radius, µg/kg (parts per billion) for abundance in the
Earth's crust, per cent for natural abundance, seconds for half-life. Not stored, for that reason: the crustal
abundances of radon, polonium and actinium (under 0.0001 µg/kg) and the 28 half-lives beyond 1e18 s (over
thirty billion years). Electronegativity is Pauling's.

    (:Element {name, symbol, atomic_number, atomic_weight, density, melting_point, boiling_point,
               electronegativity, atomic_radius, abundance_in_crust, discovery_year, electron_configuration,
               radioactive})
    (:Group {name, number, family})  (:Period {name, number})  (:Block {name})  (:Series {name})
    (:CrystalStructure {name, code})  (:DecayMode {name})  (:Discoverer {name})  (:Country {name})
    (:Isotope {name, mass_number, mass, natural_abundance, half_life_seconds, discovery_year, radioactive})
    (Element)-[:IN_GROUP]->(Group)  (Element)-[:IN_PERIOD]->(Period)  (Element)-[:IN_BLOCK]->(Block)
    (Element)-[:IN_SERIES]->(Series)  (Element)-[:HAS_CRYSTAL_STRUCTURE]->(CrystalStructure)
    (Element)-[:HAS_ISOTOPE]->(Isotope)-[:DECAYS_BY]->(DecayMode)
    (Element)-[:DISCOVERED_BY]->(Discoverer)  (Element)-[:DISCOVERED_IN]->(Country)
"""

from __future__ import annotations

import importlib.util
import re
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from bench.graphs.load import DatasetMissing, GraphData, ensure_package

PACKAGE, PINNED = "mendeleev", "mendeleev==1.3.0"

MIN_FIGURE = 1e-4  # the least that four decimals state
MIN_HALF_LIFE_S = 1.0
MAX_HALF_LIFE_S = 1e18
YEAR_S = 31_556_926  # the data's year: 365.2422 days
HALF_LIFE_UNIT_S = {
    "ysec": 1e-24,
    "zsec": 1e-21,
    "asec": 1e-18,
    "psec": 1e-12,
    "nsec": 1e-9,
    "usec": 1e-6,
    "msec": 1e-3,
    "sec": 1.0,
    "minute": 60.0,
    "hour": 3_600.0,
    "day": 86_400.0,
    "year": YEAR_S,
    "kyear": YEAR_S * 1e3,
    "Myear": YEAR_S * 1e6,
    "Gyear": YEAR_S * 1e9,
    "Tyear": YEAR_S * 1e12,
    "Pyear": YEAR_S * 1e15,
    "Eyear": YEAR_S * 1e18,
    "Zyear": YEAR_S * 1e21,
    "Yyear": YEAR_S * 1e24,
}
CRYSTAL_STRUCTURES = {
    "SC": "simple cubic",
    "FCC": "face-centred cubic",
    "BCC": "body-centred cubic",
    "HEX": "hexagonal",
    "RHL": "rhombohedral",
    "TET": "tetragonal",
    "ORC": "orthorhombic",
    "MCL": "monoclinic",
    "DIA": "diamond",
    "CUB": "cubic",
}
DECAY_MODES = {  # NUBASE notation; a nucleus' own symbol ("14C", "24Ne") is a cluster decay
    "A": "alpha decay",
    "B-": "beta-minus decay",
    "B+": "beta-plus decay",
    "EC": "electron capture",
    "EC+B+": "beta-plus decay",
    "e+": "positron emission",
    "2B-": "double beta-minus decay",
    "2B+": "double beta-plus decay",
    "SF": "spontaneous fission",
    "p": "proton emission",
    "2p": "two-proton emission",
    "3p": "three-proton emission",
    "n": "neutron emission",
    "2n": "two-neutron emission",
    "3n": "three-neutron emission",
    "4n": "four-neutron emission",
    "B-n": "beta-delayed neutron emission",
    "B-p": "beta-minus-delayed proton emission",
    "B+p": "beta-plus-delayed proton emission",
    "B-A": "beta-minus-delayed alpha emission",
    "B+A": "beta-plus-delayed alpha emission",
    "B+pA": "beta-delayed proton and alpha emission",
    "B-d": "beta-delayed deuteron emission",
    "B-t": "beta-delayed triton emission",
    "B-SF": "beta-minus-delayed fission",
    "B+SF": "beta-plus-delayed fission",
}
CLUSTER = re.compile(r"\d+[A-Z][a-z]?")
# The discoverers as the data write them (after splitting a list), to one name each; absent: kept as written.
DISCOVERERS = {
    "A. Crawford": "Adair Crawford",
    "A. Ghiorso": "Albert Ghiorso",
    "A.Ghiorso": "Albert Ghiorso",
    "A.A.Bussy": "Antoine Bussy",
    "A.C.Wohl": "Arthur Wahl",
    "A.E.Larsh": "Almon Larsh",
    "A.F.Fourcory": "Antoine Fourcroy",
    "Antoine J. Balard": "Antoine Balard",
    "Argonne": "Argonne National Laboratory",
    "Baron Rayleigh": "Lord Rayleigh",
    "C.D. Coryell": "Charles Coryell",
    "C.F. Aver von Welsbach": "Carl Auer von Welsbach",
    "D.R.Corson": "Dale Corson",
    "E.M. McMillan": "Edwin McMillan",
    "E.M.McMillan": "Edwin McMillan",
    "E.Segré": "Emilio Segrè",
    "Émillo Segrè": "Emilio Segrè",
    "Fausto": "Fausto de Elhuyar",
    "Fredrich Ernst Dorn": "Friedrich Ernst Dorn",
    "Fredrich Soddy": "Frederick Soddy",
    "Fredrich Stromeyer": "Friedrich Stromeyer",
    "Fredrich Wöhler": "Friedrich Wöhler",
    "G. Kirchoff": "Gustav Kirchhoff",
    "Gustov Kirchoff": "Gustav Kirchhoff",
    "G.T.Seaborg": "Glenn Seaborg",
    "H.V.Collet-Descoltils": "Hippolyte-Victor Collet-Descotils",
    "Heavy Ion Research Laboratory (HIRL)": "GSI Helmholtz Centre for Heavy Ion Research",
    "J. Berzelius": "Jöns Berzelius",
    "J.A. Marinsky": "Jacob Marinsky",
    "J.L. Gay-Lussac": "Joseph Louis Gay-Lussac",
    "J.L. Soret": "Jacques-Louis Soret",
    "J.W.Kennedy": "Joseph Kennedy",
    "Joseph Priestly": "Joseph Priestley",
    "K.R.MacKenzie": "Kenneth MacKenzie",
    "K.Street Jr.": "Kenneth Street Jr.",
    "L.E. Glendenin": "Lawrence Glendenin",
    "L.J. Thénard": "Louis Jacques Thénard",
    "L.N.Vauquelin": "Louis Vauquelin",
    "L.O.Morgan": "Leon Morgan",
    "Los Alamos": "Los Alamos National Laboratory",
    "M. Klaproth": "Martin Klaproth",
    "M. W. Travers": "Morris Travers",
    "M.W. Travers": "Morris Travers",
    "Nils Langet": "Nils Langlet",
    "P.H. Abelson": "Philip Abelson",
    "P.T.Cleve": "Per Theodor Cleve",
    "Pierre": "Pierre Curie",
    "R. Bunsen": "Robert Bunsen",
    "R.A.James": "Ralph James",
    "R.M.Latimer": "Robert Latimer",
    "S.G.Tompson": "Stanley Thompson",
    "S.Tenant": "Smithson Tennant",
    "Smithson Tenant": "Smithson Tennant",
    "Sir H. Davy": "Humphry Davy",
    "Sir Humphrey Davy": "Humphry Davy",
    "Sir William Crookes": "William Crookes",
    "Sir William Ramsay": "William Ramsay",
    "Sir William Ramsey": "William Ramsay",
    "Soviet Nuclear Research": "Joint Institute for Nuclear Research",
    "T. Richter": "Theodor Richter",
    "T.Sikkeland": "Torbjørn Sikkeland",
    "U of Calif": "University of California, Berkeley",
    "U. of Cal at Berkeley": "University of California, Berkeley",
    "W. von Hisinger": "Wilhelm Hisinger",
}
NOT_DISCOVERERS = {"", "et al", "Known to the ancients", "Known to the ancients."}
LABELS = (
    "Element",
    "Group",
    "Period",
    "Block",
    "Series",
    "CrystalStructure",
    "Isotope",
    "DecayMode",
    "Discoverer",
    "Country",
)
LIST_SEPARATOR = re.compile(r"\s*[,;/]\s*|\s+and\s+")


def build() -> GraphData:
    ensure_package(PACKAGE, PINNED)
    with closing(sqlite3.connect(f"{database().as_uri()}?mode=ro", uri=True)) as db:
        db.row_factory = sqlite3.Row
        elements = db.execute("SELECT * FROM elements ORDER BY atomic_number").fetchall()
        groups = db.execute("SELECT group_id, name FROM groups ORDER BY group_id").fetchall()
        series = dict(db.execute("SELECT id, name FROM series").fetchall())
        transitions = db.execute("SELECT atomic_number, melting_point, boiling_point FROM phasetransitions").fetchall()
        isotopes = [
            i
            for i in db.execute(
                "SELECT id, atomic_number, mass_number, mass, abundance, half_life, half_life_unit, is_radioactive, "
                "discovery_year FROM isotopes ORDER BY atomic_number, mass_number"
            )
            if not i["is_radioactive"] or half_life_s(i) >= MIN_HALF_LIFE_S
        ]
        decays = db.execute(
            "SELECT isotope_id, mode FROM isotopedecaymodes WHERE is_allowed_not_observed IS NOT 1 ORDER BY id"
        ).fetchall()

    data = GraphData(keys=dict.fromkeys(LABELS, "name"))
    name = {e["atomic_number"]: e["name"] for e in elements}
    data.nodes["Element"] = [element(e, transitions) for e in elements]
    data.nodes["Group"] = [
        {"name": f"Group {g['group_id']}", "number": g["group_id"], **({"family": g["name"]} if g["name"] else {})}
        for g in groups
    ]
    data.link(
        "Element", "IN_GROUP", "Group", [(e["name"], f"Group {e['group_id']}") for e in elements if e["group_id"]]
    )
    periods = sorted({e["period"] for e in elements})
    data.nodes["Period"] = [{"name": f"Period {p}", "number": p} for p in periods]
    data.link("Element", "IN_PERIOD", "Period", [(e["name"], f"Period {e['period']}") for e in elements])
    data.nodes["Block"] = [{"name": f"{b}-block"} for b in sorted({e["block"] for e in elements})]
    data.link("Element", "IN_BLOCK", "Block", [(e["name"], f"{e['block']}-block") for e in elements])
    data.nodes["Series"] = [{"name": n} for n in sorted(series.values())]
    data.link("Element", "IN_SERIES", "Series", [(e["name"], series[e["series_id"]]) for e in elements])
    structures = sorted({e["lattice_structure"] for e in elements if e["lattice_structure"]})
    data.nodes["CrystalStructure"] = [{"name": CRYSTAL_STRUCTURES[c], "code": c} for c in structures]
    data.link(
        "Element",
        "HAS_CRYSTAL_STRUCTURE",
        "CrystalStructure",
        [(e["name"], CRYSTAL_STRUCTURES[e["lattice_structure"]]) for e in elements if e["lattice_structure"]],
    )

    isotope_name = {i["id"]: f"{name[i['atomic_number']]}-{i['mass_number']}" for i in isotopes}
    data.nodes["Isotope"] = [isotope(isotope_name[i["id"]], i) for i in isotopes]
    data.link(
        "Element", "HAS_ISOTOPE", "Isotope", [(name[i["atomic_number"]], isotope_name[i["id"]]) for i in isotopes]
    )
    modes = [
        (isotope_name[d["isotope_id"]], mode)
        for d in decays
        if d["isotope_id"] in isotope_name and (mode := decay_mode(d["mode"]))
    ]
    data.nodes["DecayMode"] = [{"name": m} for m in sorted({m for _, m in modes})]
    data.link("Isotope", "DECAYS_BY", "DecayMode", modes)

    found_by = [(e["name"], person) for e in elements for person in discoverers(e["discoverers"])]
    data.nodes["Discoverer"] = [{"name": p} for p in sorted({p for _, p in found_by})]
    data.link("Element", "DISCOVERED_BY", "Discoverer", found_by)
    found_in = [(e["name"], place) for e in elements for place in split(e["discovery_location"])]
    data.nodes["Country"] = [{"name": c} for c in sorted({c for _, c in found_in})]
    data.link("Element", "DISCOVERED_IN", "Country", found_in)
    return data


def database() -> Path:
    """The package's bundled database, found without importing the package (which imports pandas and more)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        raise DatasetMissing(f"{PACKAGE} is not installed: `.venv/bin/pip install {PINNED}`")
    return Path(spec.origin).parent / "elements.db"


def element(row: sqlite3.Row, transitions: list[sqlite3.Row]) -> dict[str, Any]:
    own = [t for t in transitions if t["atomic_number"] == row["atomic_number"]]
    return present(
        {
            "name": row["name"],
            "symbol": row["symbol"],
            "atomic_number": row["atomic_number"],
            "atomic_weight": row["atomic_weight"],
            "density": scaled(row["density"], 1e3),  # from g/cm3
            "melting_point": agreed(own, "melting_point"),
            "boiling_point": agreed(own, "boiling_point"),
            "electronegativity": row["en_pauling"],
            "atomic_radius": row["atomic_radius"],
            "abundance_in_crust": scaled(row["abundance_crust"], 1e3),  # from mg/kg
            "discovery_year": row["discovery_year"],
            "electron_configuration": row["electronic_configuration"],
            "radioactive": bool(row["is_radioactive"]),
        }
    )


def agreed(transitions: list[sqlite3.Row], column: str) -> float | None:
    """A phase transition's temperature when the element's allotropes agree on it (as mendeleev's own does),
    rounded: the data converted it from Celsius."""
    values = {t[column] for t in transitions}
    value = values.pop() if len(values) == 1 else None
    return round(value, 3) if value is not None else None


def isotope(name: str, row: sqlite3.Row) -> dict[str, Any]:
    half_life = half_life_s(row)
    return present(
        {
            "name": name,
            "mass_number": row["mass_number"],
            "mass": row["mass"],
            "natural_abundance": row["abundance"],
            "half_life_seconds": half_life if 0 < half_life <= MAX_HALF_LIFE_S else None,
            "discovery_year": row["discovery_year"],
            "radioactive": bool(row["is_radioactive"]),
        }
    )


def half_life_s(row: sqlite3.Row) -> float:
    """In seconds; 0 when none is known (a stable isotope's)."""
    return float(row["half_life"] * HALF_LIFE_UNIT_S[row["half_life_unit"]]) if row["half_life"] is not None else 0.0


def scaled(value: float | None, factor: float) -> float | None:
    """`value` in a unit `factor` times smaller, when four decimals can state it."""
    return round(value * factor, 6) if value is not None and value * factor >= MIN_FIGURE else None


def decay_mode(code: str) -> str | None:
    return DECAY_MODES.get(code) or ("cluster decay" if CLUSTER.fullmatch(code) else None)


def discoverers(raw: str | None) -> list[str]:
    found = (DISCOVERERS.get(part, part) for part in split(raw) if part not in NOT_DISCOVERERS)
    return list(dict.fromkeys(found))


def split(raw: str | None) -> list[str]:
    """A list the data write in one text: "A, B and C", "England/France"."""
    return [part.strip() for part in LIST_SEPARATOR.split(raw or "") if part.strip()]


def present(properties: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in properties.items() if v is not None}
