"""How well the stated confidence tells right from wrong, drawn as people in the field read it: a reliability
diagram (stated confidence in ten bins against the share right in each, with how many answers each bin holds)
and a coverage-accuracy curve (for each threshold on the stated confidence, the share of questions answered at
or above it and the share of those that were right). One line per set of results; SVG, and PNG rasterised by
Debian's Chromium (the browser the UI tests use), so nothing beyond the project's own setup is needed.

    .venv/bin/python bench/calibration_plots.py --set held-out 'r/results-*.jsonl' --set development 'd/*.jsonl' \
        --out docs/benchmarks/natural-calibration

writes natural-calibration-reliability.{svg,png} and natural-calibration-coverage.{svg,png}. A results line is
bench/kgqa.py's: `confidence` (stated) and `correct`.
"""

from __future__ import annotations

import argparse
import glob
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

BINS = 10
THRESHOLDS = [i / 20 for i in range(21)]  # 0.00, 0.05, ... 1.00
WIDTH, HEIGHT, MARGIN = 560, 420, 56
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e")

Scored = list[tuple[float, bool]]  # (stated confidence, right)


def read_scored(patterns: Sequence[str]) -> Scored:
    scored: Scored = []
    for pattern in patterns:
        for path in sorted(glob.glob(pattern)):
            for line in Path(path).read_text(encoding="utf-8").splitlines():
                if line.strip():
                    record = json.loads(line)
                    if record.get("confidence") is not None:
                        scored.append((float(record["confidence"]), bool(record.get("correct"))))
    return scored


def reliability(scored: Scored) -> list[tuple[float, float, int]]:
    """(mean stated, share right, answers) per non-empty bin of stated confidence."""
    bins: list[Scored] = [[] for _ in range(BINS)]
    for confidence, right in scored:
        bins[min(int(confidence * BINS), BINS - 1)].append((confidence, right))
    return [(sum(c for c, _ in b) / len(b), sum(r for _, r in b) / len(b), len(b)) for b in bins if b]


def coverage(scored: Scored) -> list[tuple[float, float, float]]:
    """(threshold, share answered at or above it, share of those right); the share right is left out (nan)
    where nothing is answered."""
    points = []
    for t in THRESHOLDS:
        kept = [r for c, r in scored if c >= t]
        points.append((t, len(kept) / len(scored), sum(kept) / len(kept) if kept else float("nan")))
    return points


def _frame(title: str, x_label: str, y_label: str) -> list[str]:
    w, h = WIDTH - 2 * MARGIN, HEIGHT - 2 * MARGIN
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" font-family="sans-serif" '
        'font-size="12"><rect width="100%" height="100%" fill="white"/>',
        f'<text x="{WIDTH / 2}" y="22" text-anchor="middle" font-size="14">{title}</text>',
        f'<rect x="{MARGIN}" y="{MARGIN}" width="{w}" height="{h}" fill="none" stroke="#444"/>',
        f'<text x="{WIDTH / 2}" y="{HEIGHT - 14}" text-anchor="middle">{x_label}</text>',
        f'<text x="16" y="{HEIGHT / 2}" text-anchor="middle" transform="rotate(-90 16 {HEIGHT / 2})">{y_label}</text>',
    ]
    for i in range(6):
        v = i / 5
        parts.append(f'<text x="{_x(v)}" y="{HEIGHT - MARGIN + 16}" text-anchor="middle">{v:.1f}</text>')
        parts.append(f'<text x="{MARGIN - 6}" y="{_y(v) + 4}" text-anchor="end">{v:.1f}</text>')
        parts.append(f'<line x1="{MARGIN}" x2="{WIDTH - MARGIN}" y1="{_y(v)}" y2="{_y(v)}" stroke="#eee"/>')
    return parts


def _x(v: float) -> float:
    return MARGIN + v * (WIDTH - 2 * MARGIN)


def _y(v: float) -> float:
    return HEIGHT - MARGIN - v * (HEIGHT - 2 * MARGIN)


def _legend(parts: list[str], names: Sequence[str], counts: Sequence[int]) -> None:
    for i, (name, n) in enumerate(zip(names, counts, strict=True)):
        y = MARGIN + 16 + 16 * i
        parts.append(f'<rect x="{MARGIN + 10}" y="{y - 9}" width="10" height="10" fill="{COLOURS[i % len(COLOURS)]}"/>')
        parts.append(f'<text x="{MARGIN + 26}" y="{y}">{name} ({n} answers)</text>')


def reliability_svg(sets: dict[str, Scored]) -> str:
    parts = _frame("Reliability: stated confidence against the share right", "stated confidence", "share right")
    parts.append(f'<line x1="{_x(0)}" y1="{_y(0)}" x2="{_x(1)}" y2="{_y(1)}" stroke="#999" stroke-dasharray="4"/>')
    for i, scored in enumerate(sets.values()):
        colour = COLOURS[i % len(COLOURS)]
        points = reliability(scored)
        parts.append(
            f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="'
            + " ".join(f"{_x(c):.1f},{_y(r):.1f}" for c, r, _ in points)
            + '"/>'
        )
        for c, r, n in points:  # a dot's area says how many answers the bin holds
            radius = 2 + 8 * (n / max(len(scored), 1)) ** 0.5
            parts.append(f'<circle cx="{_x(c):.1f}" cy="{_y(r):.1f}" r="{radius:.1f}" fill="{colour}" opacity="0.6"/>')
    _legend(parts, list(sets), [len(s) for s in sets.values()])
    return "\n".join([*parts, "</svg>"])


def coverage_svg(sets: dict[str, Scored]) -> str:
    parts = _frame("Coverage and accuracy by stated-confidence threshold", "threshold on stated confidence", "share")
    for i, scored in enumerate(sets.values()):
        colour = COLOURS[i % len(COLOURS)]
        points = coverage(scored)
        answered = " ".join(f"{_x(t):.1f},{_y(a):.1f}" for t, a, _ in points)
        right = " ".join(f"{_x(t):.1f},{_y(r):.1f}" for t, _, r in points if r == r)  # nan: nothing answered
        parts.append(
            f'<polyline fill="none" stroke="{colour}" stroke-width="2" stroke-dasharray="5" points="{answered}"/>'
        )
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{right}"/>')
    _legend(parts, list(sets), [len(s) for s in sets.values()])
    parts.append(
        f'<text x="{WIDTH - MARGIN - 6}" y="{HEIGHT - MARGIN - 8}" text-anchor="end">solid: share right of those '
        "answered; dashed: share answered</text>"
    )
    return "\n".join([*parts, "</svg>"])


def rasterised(svg: Path, png: Path) -> None:
    """The SVG drawn to a PNG of its own size by headless Chromium."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        raise RuntimeError("no chromium on PATH: scripts/setup.sh installs Debian's")
    with tempfile.TemporaryDirectory(prefix="tgca-plot-") as profile:
        subprocess.run(
            [
                browser,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                f"--user-data-dir={profile}",
                f"--window-size={WIDTH},{HEIGHT}",
                f"--screenshot={png.resolve()}",
                svg.resolve().as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--set", nargs="+", action="append", metavar=("NAME", "RESULTS"), required=True)
    p.add_argument("--out", type=Path, required=True, help="path prefix of the files written")
    p.add_argument("--no-png", action="store_true", help="write the SVGs only")
    args = p.parse_args()
    sets = {name: read_scored(patterns) for name, *patterns in args.set}
    empty = [name for name, scored in sets.items() if not scored]
    if empty:
        p.error(f"no scored results in: {', '.join(empty)}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for kind, svg in (("reliability", reliability_svg(sets)), ("coverage", coverage_svg(sets))):
        path = args.out.parent / f"{args.out.name}-{kind}.svg"
        path.write_text(svg, encoding="utf-8")
        if not args.no_png:
            rasterised(path, path.with_suffix(".png"))
        print(f"wrote {path}" + ("" if args.no_png else f" and {path.with_suffix('.png').name}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
