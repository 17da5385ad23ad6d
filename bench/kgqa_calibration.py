"""Leave one graph out: for each graph, fit the confidence calibrator on the labelled runs of the other graphs,
state the left-out graph's confidences with it, and report accuracy, AUROC, ECE, the answers stated at 0.9 or
more, and the escalation threshold chosen on the other graphs (bench/kgqa/selective.py) as it fares on the
left-out one; then the mean and the worst graph, each evidence feature's own AUROC and what it adds to the
calibrator, and the risk-coverage curve.

    .venv/bin/python bench/kgqa_calibration.py results-*.jsonl [--target 0.95] [--svg curve.svg]
        [--write-calibrator service/calibrator.json] [--fit-also older-runs-*.jsonl]

Each results file is a bench/kgqa.py run; its records name their graph (`dataset`). Runs that ended in an error
or recorded no evidence count as wrong at confidence 0 (as the benchmark's own metrics count them)."""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.kgqa import results
from bench.kgqa.metrics import auroc, expected_calibration_error
from bench.kgqa.selective import choose_threshold, risk_coverage, svg_curve
from confidence.calibrator import Calibrator, CalibratorError, fit
from confidence.evidence import FEATURES, MAY_BE_MISSING
from service.calibrator_file import CalibratorFile

HIGH = 0.9


def usable(record: dict[str, Any]) -> bool:
    return bool((record.get("evidence") or {}).get("coverage")) and not record.get("error")


def fitted(records: list[dict[str, Any]], exclude: frozenset[str] = frozenset()) -> Calibrator:
    samples = [(r["evidence"], bool(r["correct"])) for r in records if usable(r)]
    # The runs come from several versions of the code: a feature one lacks was added after it was recorded.
    return fit(samples, trained_on={"runs": len(samples)}, exclude=exclude, absent_unknown=True)


def stated(records: list[dict[str, Any]], calibrator: Calibrator) -> tuple[list[float], list[bool]]:
    restated, _ = results.recalibrate(records, calibrator)
    scores = [0.0 if r.get("error") or r.get("confidence") is None else float(r["confidence"]) for r in restated]
    return scores, [bool(r.get("correct")) and not r.get("error") for r in restated]


def graph_row(
    name: str,
    train: list[dict[str, Any]],
    test: list[dict[str, Any]],
    target: float,
    exclude: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    calibrator = fitted(train, exclude)
    scores, right = stated(test, calibrator)
    train_scores, train_right = stated(train, calibrator)
    threshold = choose_threshold(train_scores, train_right, target)
    high = [r for s, r in zip(scores, right, strict=True) if s >= HIGH]
    answered = (
        [r for s, r in zip(scores, right, strict=True) if s >= threshold.value] if threshold.value is not None else []
    )
    return {
        "graph": name,
        "n": len(test),
        "accuracy": sum(right) / len(test),
        "auroc": auroc(scores, right),
        "ece": expected_calibration_error(scores, right),
        "high_share": len(high) / len(test),
        "high_accuracy": sum(high) / len(high) if high else None,
        "threshold": threshold.value,
        "coverage": len(answered) / len(test),
        "answered_accuracy": sum(answered) / len(answered) if answered else None,
        "spread": statistics.pstdev(scores),
        "scores": scores,
        "right": right,
    }


def baseline_rows(
    by_graph: dict[str, list[dict[str, Any]]], calibrator: Calibrator, target: float
) -> list[dict[str, Any]]:
    """Each graph's runs stated by a calibrator fitted elsewhere (the shipped one): the figures to beat."""
    rows = []
    for name, test in sorted(by_graph.items()):
        scores, right = stated(test, calibrator)
        high = [r for s, r in zip(scores, right, strict=True) if s >= HIGH]
        rows.append(
            {
                "graph": name,
                "n": len(test),
                "accuracy": sum(right) / len(test),
                "auroc": auroc(scores, right),
                "ece": expected_calibration_error(scores, right),
                "high_share": len(high) / len(test),
                "high_accuracy": sum(high) / len(high) if high else None,
                "threshold": None,
                "coverage": 0.0,
                "answered_accuracy": None,
                "spread": statistics.pstdev(scores),
                "scores": scores,
                "right": right,
            }
        )
    return rows


def leave_one_out(
    by_graph: dict[str, list[dict[str, Any]]],
    target: float,
    exclude: frozenset[str] = frozenset(),
    fit_also: dict[str, list[dict[str, Any]]] | None = None,
) -> list[dict[str, Any]]:
    """Each graph's runs stated by a calibrator fitted on the other graphs' runs (and their `fit_also` runs: an
    older set of questions fitted on, never reported on)."""
    rows = []
    for name, test in sorted(by_graph.items()):
        train = [
            r for source in (by_graph, fit_also or {}) for other, rs in source.items() if other != name for r in rs
        ]
        rows.append(graph_row(name, train, test, target, exclude))
    return rows


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f} %"


def _num(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def table(rows: list[dict[str, Any]], target: float) -> str:
    lines = [
        f"| graph (left out) | n | accuracy | AUROC | ECE | stated >= {HIGH} (share, right) | threshold for "
        f"{target:.0%} | answered without a human (share, right) | spread (sd) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['graph']} | {r['n']} | {_pct(r['accuracy'])} | {_num(r['auroc'])} | {_num(r['ece'])} | "
            f"{_pct(r['high_share'])}, {_pct(r['high_accuracy'])} | {_num(r['threshold'])} | "
            f"{_pct(r['coverage'])}, {_pct(r['answered_accuracy'])} | {_num(r['spread'])} |"
        )

    def summary(label: str, pick: Any) -> str:
        keys = ("accuracy", "auroc", "ece", "high_share", "high_accuracy", "coverage", "answered_accuracy")
        values = {k: [r[k] for r in rows if r[k] is not None] for k in keys}
        v = {k: (pick(k, vs) if vs else None) for k, vs in values.items()}
        return (
            f"| **{label}** | {sum(r['n'] for r in rows)} | {_pct(v['accuracy'])} | {_num(v['auroc'])} | "
            f"{_num(v['ece'])} | {_pct(v['high_share'])}, {_pct(v['high_accuracy'])} | | "
            f"{_pct(v['coverage'])}, {_pct(v['answered_accuracy'])} | |"
        )

    lines.append(summary("mean", lambda k, vs: statistics.mean(vs)))
    lines.append(summary("worst graph", lambda k, vs: max(vs) if k == "ece" else min(vs)))
    return "\n".join(lines)


def signals(
    by_graph: dict[str, list[dict[str, Any]]],
    target: float,
    base: float | None,
    fit_also: dict[str, list[dict[str, Any]]] | None = None,
) -> str:
    """Each feature alone (its AUROC over every run with evidence, as it points) and the leave-one-graph-out
    mean AUROC lost when the calibrator is fitted without it."""
    records = [r for rs in by_graph.values() for r in rs if usable(r)]
    right = [bool(r["correct"]) for r in records]
    lines = ["| evidence | runs where present | AUROC alone | mean AUROC without it (gain) |", "|---|---|---|---|"]
    for name in FEATURES:
        if name in MAY_BE_MISSING:  # judged over the runs that have it (the LLM server gave log-probabilities)
            pairs = [
                (float(r["evidence"][name]), ok) for r, ok in zip(records, right, strict=True) if name in r["evidence"]
            ]
        else:
            pairs = [(float(r["evidence"].get(name, 0.0)), ok) for r, ok in zip(records, right, strict=True)]
        present = sum(v > 0 for v, _ in pairs)
        alone = auroc([v for v, _ in pairs], [ok for _, ok in pairs]) if present else None
        try:
            without = [
                r["auroc"]
                for r in leave_one_out(by_graph, target, frozenset({name}), fit_also)
                if r["auroc"] is not None
            ]
        except CalibratorError:
            without = []
        mean_without = statistics.mean(without) if without else None
        gain = f" ({base - mean_without:+.3f})" if base is not None and mean_without is not None else ""
        lines.append(f"| {name} | {present} | {_num(alone)} | {_num(mean_without, 3)}{gain} |")
    return "\n".join(lines)


def _by_graph(paths: list[Path], golds: dict[Any, Any]) -> dict[str, list[dict[str, Any]]]:
    """The runs of these results files by graph, each judged again with the current judge (and `golds`)."""
    by_graph: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for path in paths:
        records = [{**r, "gold": golds.get((r.get("dataset"), r["question"]), r["gold"])} for r in results.read(path)]
        judged, changed = results.rejudge(records)
        if changed:
            print(f"note: {changed} verdict(s) of {path} changed with the current judge and golds", file=sys.stderr)
        for r in judged:
            by_graph[r.get("dataset") or path.stem].append(r)
    return by_graph


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", type=Path, nargs="+")
    p.add_argument("--target", type=float, default=0.95, help="share of unattended answers that must be right")
    p.add_argument(
        "--questions",
        type=Path,
        nargs="*",
        default=None,
        help="judge against these question files' golds (the generator's current ones), by graph and text",
    )
    p.add_argument("--baseline", type=Path, default=None, help="a calibrator to report first, as it states these runs")
    p.add_argument("--svg", type=Path, default=None, help="write the risk-coverage curves here")
    p.add_argument("--write-calibrator", type=Path, default=None, help="fit on every run and write the calibrator")
    p.add_argument(
        "--fit-also",
        type=Path,
        nargs="*",
        default=[],
        help="more results files to fit on (by graph: never when their graph is left out) but not report "
        "on, e.g. an earlier question set's runs when the figures are a fresh set's",
    )
    args = p.parse_args()
    golds: dict[str, Any] = {}
    for path in args.questions or []:
        from bench.kgqa_questions import read

        graph, questions = read(path)
        golds.update({(graph, q.text): q.gold for q in questions})
    by_graph = _by_graph(args.results, golds)
    fit_also = _by_graph(args.fit_also, golds)
    if len(by_graph) < 2:
        print("error: leaving one graph out needs runs on two graphs or more", file=sys.stderr)
        return 2
    if args.baseline:
        print(f"Stated by {args.baseline} (fitted on none of these runs):\n")
        print(table(baseline_rows(by_graph, CalibratorFile(args.baseline).current(), args.target), args.target))
        print("\nEach graph left out of fitting:\n")
    if fit_also:
        fitted_only = sum(map(len, fit_also.values()))
        print(f"Fitted also on {fitted_only} runs reported nowhere ({len(args.fit_also)} files).\n")
    rows = leave_one_out(by_graph, args.target, fit_also=fit_also)
    print(table(rows, args.target))
    mean_auroc = statistics.mean(r["auroc"] for r in rows if r["auroc"] is not None)
    print()
    print(signals(by_graph, args.target, mean_auroc, fit_also))
    pooled_scores = [s for r in rows for s in r["scores"]]
    pooled_right = [x for r in rows for x in r["right"]]
    curve = risk_coverage(pooled_scores, pooled_right)
    print("\n| coverage | error rate of the answered | lowest confidence answered |\n|---|---|---|")
    for coverage, risk, lowest in curve:
        print(f"| {coverage:.0%} | {risk:.1%} | {lowest:.2f} |")
    if args.svg:
        curves = {"all graphs": curve, **{r["graph"]: risk_coverage(r["scores"], r["right"]) for r in rows}}
        args.svg.write_text(svg_curve(curves, "Risk and coverage, each graph left out of fitting"), encoding="utf-8")
        print(f"\nwrote {args.svg}")
    if args.write_calibrator:
        every = [r for source in (by_graph, fit_also) for rs in source.values() for r in rs]
        calibrator = fitted(every)
        scores, right = stated(every, calibrator)
        threshold = choose_threshold(scores, right, args.target)
        calibrator = Calibrator(
            calibrator.weights,
            calibrator.bias,
            calibrator.means,
            {
                **calibrator.trained_on,
                "graphs": sorted({*by_graph, *fit_also}),
                "escalation_threshold": threshold.value,
                "escalation_target": args.target,
            },
            calibrator.ranges,
        )
        args.write_calibrator.write_text(calibrator.to_json(), encoding="utf-8")
        print(f"wrote {args.write_calibrator} (threshold {threshold.value} for {args.target:.0%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
