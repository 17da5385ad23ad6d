"""`tg-confidence calibrate`: fit the confidence calibrator from labelled runs and write it where the
synthesis worker reads it (taken up without a restart).

Labels come from two places:
  - labelled runs: JSON lines with the run's `evidence` and whether its answer was `correct` (what
    bench/kgqa.py writes); only the `calibration` split unless --split all, so reported questions stay unseen;
  - the audit trail: a human's override decision is a label, "accept" (the weak result was good enough to
    answer from) a right answer and "abort" a wrong one.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from cli.errors import UNREACHABLE_OR_BAD_INPUT, error
from confidence.calibrator import CalibratorError, fit
from confidence.evidence import FEATURES
from service.calibrator_file import CalibratorFile
from service.flags import config_from_args

Sample = tuple[dict[str, float], bool]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "calibrate",
        parents=[common],
        help="fit the confidence calibrator from labelled runs",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("runs", nargs="*", type=Path, help="labelled runs (JSON lines with evidence and correct)")
    p.add_argument(
        "--split",
        choices=("calibration", "all"),
        default="calibration",
        help="which labelled runs to learn from (default: the calibration split only)",
    )
    p.add_argument("--audit", type=Path, default=None, help="the audit trail (default: the configured audit_path)")
    p.add_argument("--no-audit", action="store_true", help="ignore the human decisions in the audit trail")
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        help="where to write the calibrator (default: the configured calibrator_path, else the shipped one)",
    )
    p.add_argument("--l2", type=float, default=1.0, help="weight penalty (larger: flatter, more cautious)")
    p.add_argument("--dry-run", action="store_true", help="fit and report; write nothing")
    p.add_argument(
        "--exclude",
        nargs="+",
        default=[],
        metavar="FEATURE",
        help="features to leave out of the fit (no weight, no range), e.g. one whose definition changed "
        "after the labelled runs were recorded",
    )


def _json_lines(path: Path) -> list[dict[str, Any]]:
    records = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{n}: not JSON ({exc.msg})") from None
        if isinstance(record, dict):
            records.append(record)
    return records


def _features(record: dict[str, Any]) -> dict[str, float] | None:
    """A record's evidence, if it holds usable evidence (an answer that had at least one supporting step)."""
    evidence = record.get("evidence")
    if not isinstance(evidence, dict) or not evidence.get("coverage"):
        return None
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in evidence.values()):
        return None
    return {str(k): float(v) for k, v in evidence.items()}


def labelled_samples(records: list[dict[str, Any]], split: str) -> list[Sample]:
    samples = []
    for r in records:
        features = _features(r)
        if features is None or not isinstance(r.get("correct"), bool) or r.get("error"):
            continue
        if split != "all" and r.get("split") != split:
            continue
        samples.append((features, r["correct"]))
    return samples


def audit_samples(records: list[dict[str, Any]]) -> list[Sample]:
    """The runs a human decided: the last accept or abort of a run labels its evidence."""
    samples = []
    for r in records:
        decisions = [(s.get("override") or {}).get("decision") for s in r.get("execution") or [] if isinstance(s, dict)]
        final = [d for d in decisions if d in ("accept", "abort")]
        features = _features(r)
        if final and features is not None:
            samples.append((features, final[-1] == "accept"))
    return samples


def _brier(samples: list[Sample], predict: Any) -> float:
    return sum((predict(f) - float(y)) ** 2 for f, y in samples) / len(samples)


async def calibrate(args: argparse.Namespace) -> int:
    return fit_and_write(args)


def fit_and_write(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    unknown = sorted(set(args.exclude) - set(FEATURES))
    if unknown:
        return error(
            f"unknown feature(s) to exclude: {', '.join(unknown)} (known: {', '.join(FEATURES)})",
            UNREACHABLE_OR_BAD_INPUT,
        )
    samples: list[Sample] = []
    sources: list[str] = []
    try:
        for path in args.runs:
            found = labelled_samples(_json_lines(path), args.split)
            samples += found
            sources.append(f"{path.name}: {len(found)}")
        audit = args.audit or Path(config.audit_path).expanduser()
        if not args.no_audit and audit.exists():
            found = audit_samples(_json_lines(audit))
            samples += found
            sources.append(f"audit decisions: {len(found)}")
    except (OSError, ValueError) as exc:
        return error(f"cannot read the labelled runs: {exc}", UNREACHABLE_OR_BAD_INPUT)
    print(f"{len(samples)} labelled answer(s), {sum(y for _, y in samples)} right ({'; '.join(sources) or 'none'})")
    try:
        calibrator = fit(
            samples,
            l2=args.l2,
            exclude=set(args.exclude),
            trained_on={
                "sources": sources,
                "split": args.split,
                "fitted": time.strftime("%Y-%m-%d"),
                "l2": args.l2,
                **({"excluded": sorted(args.exclude)} if args.exclude else {}),
            },
        )
    except CalibratorError as exc:
        return error(f"cannot fit: {exc}", UNREACHABLE_OR_BAD_INPUT)
    print(
        f"Brier score on these answers: {_brier(samples, lambda f: f.get('step_score', 0.0)):.3f} with the "
        f"evidence score alone, {_brier(samples, calibrator.probability):.3f} calibrated (in-sample)"
    )
    for name, weight in sorted(calibrator.weights.items(), key=lambda w: -abs(w[1])):
        print(f"  {name:<16} {weight:+.3f}")
    print(f"  {'(bias)':<16} {calibrator.bias:+.3f}")
    if args.dry_run:
        return 0
    out = args.out or CalibratorFile(config.calibrator_path or None).path
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_text(calibrator.to_json(), encoding="utf-8")
    tmp.replace(out)  # the worker never reads a half-written file
    print(f"written to {out}")
    return 0
