"""When to answer without a human, with a guarantee: the lowest confidence threshold at which the answers given
without a human are right at a rate the operator sets, chosen on held-out labelled runs so that the rate holds
with high probability on new questions from the same source (selective classification with guaranteed risk,
Geifman and El-Yaniv 2017: a binomial upper bound on the error among answered, over a few candidate thresholds
with the failure probability split between them). And the risk-coverage curve that shows the trade."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

DELTA = 0.1  # the chance the guarantee fails for the chosen threshold
CANDIDATES = 20  # thresholds tried (the failure probability is split between them)


def _binomial_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p)."""
    if p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 1.0 if k >= n else 0.0
    total = 0.0
    for i in range(k + 1):
        total += math.exp(
            math.lgamma(n + 1)
            - math.lgamma(i + 1)
            - math.lgamma(n - i + 1)
            + i * math.log(p)
            + (n - i) * math.log1p(-p)
        )
    return min(1.0, total)


def error_upper_bound(errors: int, n: int, delta: float) -> float:
    """The Clopper-Pearson upper bound on an error rate seen as `errors` of `n`, holding with probability
    1 - delta: the largest p under which that few errors would still be seen with probability delta."""
    if n == 0:
        return 1.0
    if errors >= n:
        return 1.0
    low, high = errors / n, 1.0
    for _ in range(60):
        mid = (low + high) / 2
        if _binomial_cdf(errors, n, mid) > delta:
            low = mid
        else:
            high = mid
    return high


@dataclass(frozen=True)
class Threshold:
    value: float | None  # None: no threshold reaches the rate on this data (ask a human every time)
    target: float  # the share of answers given without a human that must be right
    answered: int  # calibration answers at or above it
    errors: int  # of those, wrong
    bound: float  # the upper bound on their error rate


def choose_threshold(
    scores: Sequence[float],
    right: Sequence[bool],
    target: float = 0.95,
    delta: float = DELTA,
    candidates: int = CANDIDATES,
) -> Threshold:
    """The lowest of `candidates` thresholds (quantiles of the scores) whose answers' error rate is bounded by
    1 - target with probability 1 - delta (the failure probability split between the candidates, so the
    guarantee holds for whichever passes)."""
    pairs = sorted(zip(scores, right, strict=True), reverse=True)
    levels = (
        sorted(
            {round(pairs[min(len(pairs) - 1, int(len(pairs) * q / candidates))][0], 4) for q in range(candidates)},
            reverse=True,
        )
        if pairs
        else []
    )
    share = delta / max(1, len(levels))
    best = Threshold(None, target, 0, 0, 1.0)
    for level in levels:  # every candidate is tested (the union bound covers picking any): the lowest that passes
        chosen = [r for s, r in pairs if s >= level]
        errors = sum(not r for r in chosen)
        bound = error_upper_bound(errors, len(chosen), share)
        if bound <= 1 - target:
            best = Threshold(level, target, len(chosen), errors, bound)
    return best


def risk_coverage(scores: Sequence[float], right: Sequence[bool], points: int = 10) -> list[tuple[float, float, float]]:
    """(coverage, error rate among the answered, lowest confidence answered) when only the most confident
    `coverage` share is answered, at `points` evenly spaced coverages."""
    pairs = sorted(zip(scores, right, strict=True), key=lambda p: -p[0])
    curve = []
    for i in range(1, points + 1):
        k = max(1, round(len(pairs) * i / points))
        taken = pairs[:k]
        curve.append((k / len(pairs), sum(not r for _, r in taken) / k, taken[-1][0]))
    return curve


def svg_curve(
    curves: dict[str, list[tuple[float, float, float]]], title: str, width: int = 560, height: int = 360
) -> str:
    """The risk-coverage curves as an SVG image (no plotting library): coverage across, error rate up."""
    left, bottom, top, right = 60, 40, 40, 150
    plot_w, plot_h = width - left - right, height - top - bottom
    colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]

    def x(c: float) -> float:
        return left + c * plot_w

    def y(r: float) -> float:
        return top + plot_h - min(1.0, r / 0.6) * plot_h  # error rates up to 60 %

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
        'font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{left}" y="20" font-size="14">{title}</text>',
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" stroke="black"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" stroke="black"/>',
    ]
    for tick in range(0, 11, 2):
        c = tick / 10
        parts.append(f'<text x="{x(c) - 8:.0f}" y="{top + plot_h + 16}">{tick * 10}%</text>')
    for r in (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6):
        parts.append(f'<text x="{left - 40}" y="{y(r) + 4:.0f}">{r * 100:.0f}%</text>')
        parts.append(f'<line x1="{left}" y1="{y(r):.1f}" x2="{left + plot_w}" y2="{y(r):.1f}" stroke="#eee"/>')
    parts.append(f'<text x="{left + plot_w / 2 - 60:.0f}" y="{height - 6}">coverage (answered without a human)</text>')
    parts.append(f'<text x="12" y="{top - 10}">error rate of the answered</text>')
    for i, (name, curve) in enumerate(curves.items()):
        colour = colours[i % len(colours)]
        points = " ".join(f"{x(c):.1f},{y(r):.1f}" for c, r, _ in curve)
        parts.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>')
        parts.append(f'<text x="{left + plot_w + 10}" y="{top + 16 * i + 10}" fill="{colour}">{name}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
