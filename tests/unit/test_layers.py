"""No import climbs a layer: each top-level package imports only packages of the layers below it, and
workflow code only what is pure (docs/architecture.md, "Boundaries"). A package that needs something from
above it is a sign the thing lives in the wrong place: move it down, or pass it in."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Bottom to top. A package imports from layers strictly below its own, never from its own layer's others.
LAYERS: list[set[str]] = [
    {"contracts"},
    {"cypher"},
    {"questions"},
    {"confidence", "overrides", "actions"},
    {"planning"},
    {"service"},
    {"backends"},
    {"tools"},
    {"activities"},
    {"workflows"},
    {"embedded"},
    {"worker", "bridge", "chat"},
    {"cli"},
]
PURE = {"contracts", "cypher", "questions", "confidence", "overrides", "actions", "planning"}
ONLY = {"workflows": PURE}  # deterministic code: no I/O, so nothing that does any
LAYER = {package: level for level, packages in enumerate(LAYERS) for package in packages}


def imported_packages(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names & set(LAYER)


def climbing_imports() -> list[str]:
    found = []
    for package, level in LAYER.items():
        for path in sorted((ROOT / package).rglob("*.py")):
            for other in sorted(imported_packages(path) - {package}):
                allowed = ONLY.get(package)
                if LAYER[other] >= level or (allowed is not None and other not in allowed):
                    found.append(f"{path.relative_to(ROOT)} imports {other}")
    return found


def test_every_top_level_package_has_a_layer() -> None:
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests", "bench", "scripts"}
    assert packages == set(LAYER), packages ^ set(LAYER)


def test_no_import_climbs_a_layer() -> None:
    assert climbing_imports() == []
