"""Code's first program on a natural question set, broken down by category, wording style, relationships
crossed and graph: reads bench/walk_recall.py's per-question ranks (a folder of <graph>.jsonl files) beside
the question files they came from, and prints the tables. No question text is printed.

    .venv/bin/python bench/natural_breakdown.py bench/results/natural-2026-12-04/heldout-code-only bench/kgqa/heldout
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _lines(folder: Path) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                found[record["id"]] = record
    return found


def _hops(q: dict[str, Any]) -> list[str]:
    return ["4 or more" if q["hops"] >= 4 else str(q["hops"])]


GROUPINGS: tuple[tuple[str, Callable[[dict[str, Any]], list[str]]], ...] = (
    ("category", lambda q: [q["category"]]),
    ("style", lambda q: list(q["styles"])),
    ("relationships crossed", _hops),
    ("graph", lambda q: [q["graph"]]),
)


def tables(ranks: dict[str, dict[str, Any]], questions: dict[str, dict[str, Any]]) -> str:
    out: list[str] = []
    for title, keys in GROUPINGS:
        tally: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
        for qid, rank in ranks.items():
            for key in keys(questions[qid]):
                t = tally[key]
                t[0] += 1
                t[1] += rank["rank"] == 1
                t[2] += rank["rank"] is not None and rank["rank"] <= 12
        out += [f"| {title} | questions | first right | right among 12 |", "|---|---|---|---|"]
        for key, (n, first, among) in sorted(tally.items(), key=lambda kv: (-kv[1][0], kv[0])):
            out.append(f"| {key} | {n} | {first} ({100 * first / n:.0f} %) | {among} |")
        out.append("")
    n = len(ranks)
    first = sum(r["rank"] == 1 for r in ranks.values())
    whole = [r for r in ranks.values() if not r["unexplained"]]
    whole_right = sum(r["rank"] == 1 for r in whole)
    out.append(
        f"all: {first} of {n} first right; every word explained: {whole_right} of {len(whole)}; "
        f"a word unexplained: {first - whole_right} of {n - len(whole)}"
    )
    return "\n".join(out)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("ranks", type=Path, help="a folder of bench/walk_recall.py --out files")
    p.add_argument("questions", type=Path, help="the folder of the question files they were made from")
    args = p.parse_args()
    print(tables(_lines(args.ranks), _lines(args.questions)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
