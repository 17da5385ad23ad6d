"""Two runs of the same labelled questions side by side: how many each got right, by kind of question and
by graph, with the errors and the median answer time. Questions are matched by their graph and text, so a
run of a subset compares with the matching part of a larger run.

    .venv/bin/python bench/kgqa_compare.py --before bench/results/kgqa-public/dev-seed1/results-*.jsonl \
        --after bench/results/kgqa-public/dev-seed1-routes/multi-hop-path/results-*.jsonl

Only questions present in both runs are counted; each run is judged again by the current judge."""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.kgqa import results

Key = tuple[str, str]


def load(paths: list[Path]) -> dict[Key, dict[str, Any]]:
    records: dict[Key, dict[str, Any]] = {}
    for path in paths:
        judged, _ = results.rejudge(results.read(path))
        records.update({(r.get("dataset") or "?", r["question"]): r for r in judged})
    return records


def table(before: dict[Key, dict[str, Any]], after: dict[Key, dict[str, Any]], by: str) -> list[str]:
    shared = sorted(before.keys() & after.keys())
    counts: Counter[tuple[str, str]] = Counter()
    for key in shared:
        group = after[key]["category"] if by == "kind" else key[0]
        for name in (group, "all"):
            counts[(name, "n")] += 1
            counts[(name, "before")] += bool(before[key]["correct"])
            counts[(name, "after")] += bool(after[key]["correct"])
    names = [*sorted({name for name, _ in counts} - {"all"}), "all"]
    lines = [f"| {by} | questions | right before | right after |", "|---|---|---|---|"]
    lines += [
        f"| {name} | {counts[(name, 'n')]} | {counts[(name, 'before')]} | {counts[(name, 'after')]} |" for name in names
    ]
    return lines


def summary(before: dict[Key, dict[str, Any]], after: dict[Key, dict[str, Any]]) -> str:
    shared = before.keys() & after.keys()

    def errors(run: dict[Key, dict[str, Any]]) -> int:
        return sum(bool(run[k].get("error")) for k in shared)

    def median_s(run: dict[Key, dict[str, Any]]) -> float:
        return statistics.median(float(run[k]["seconds"]) for k in shared)

    return (
        f"{len(shared)} questions in both runs; errors {errors(before)} -> {errors(after)}; median answer time "
        f"{median_s(before):.1f} s -> {median_s(after):.1f} s"
    )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--before", type=Path, nargs="+", required=True, help="the earlier run's results files")
    p.add_argument("--after", type=Path, nargs="+", required=True, help="the later run's results files")
    args = p.parse_args()
    before, after = load(args.before), load(args.after)
    if not before.keys() & after.keys():
        print("error: the two runs share no question", file=sys.stderr)
        return 2
    print("\n".join(table(before, after, "kind")))
    print()
    print("\n".join(table(before, after, "graph")))
    print()
    print(summary(before, after))
    return 0


if __name__ == "__main__":
    sys.exit(main())
