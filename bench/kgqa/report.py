"""The metrics as Markdown, ready for BENCHMARKS.md, with the command that produced them."""

from __future__ import annotations

from bench.kgqa.metrics import HIGH_CONFIDENCE, Metrics


def _f(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f} %"


def markdown(m: Metrics, *, dataset: str, split: str, command: str, date: str) -> str:
    lines = [
        f"Command: `{command}` ({date}).",
        "",
        f"| dataset | split | questions | accuracy | AUROC | ECE (10 bins) | confidence >= {HIGH_CONFIDENCE}: n | "
        "its accuracy | answered without override | errors | answers lost | slow | recovered | twice | p50 s | p95 s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        f"| {dataset} | {split} | {m.n} | {_pct(m.accuracy)} | {_f(m.auroc)} | {_f(m.ece)} | {m.high_confidence_n} | "
        f"{_pct(m.high_confidence_accuracy)} | {_pct(m.no_override_share)} | {m.errors} | {m.lost} | {m.slow} | "
        f"{m.recovered} | {m.twice} | {_f(m.latency_p50, 1)} | {_f(m.latency_p95, 1)} |",
        "",
        "| category | questions | accuracy |",
        "|---|---|---|",
        *(f"| {c} | {n} | {_pct(acc)} |" for c, (n, acc) in m.per_category.items()),
    ]
    return "\n".join(lines)
