"""Leaving one graph out (bench/kgqa_calibration.py): a graph's runs are never fitted on when it is the one
reported, whether they are runs reported on or older ones given only for fitting (`--fit-also`)."""

from __future__ import annotations

from typing import Any

import pytest

import bench.kgqa_calibration as calibration


def runs(graph: str, n: int, tag: str) -> list[dict[str, Any]]:
    return [
        {
            "dataset": graph,
            "tag": tag,
            "correct": i % 2 == 0,
            "confidence": 0.5,
            "evidence": {"coverage": 1.0, "step_score": 0.9 if i % 2 == 0 else 0.3},
        }
        for i in range(n)
    ]


def test_the_left_out_graph_is_fitted_on_neither_its_reported_runs_nor_its_older_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fitted_on: dict[str, set[tuple[str, str]]] = {}

    def graph_row(
        name: str,
        train: list[dict[str, Any]],
        test: list[dict[str, Any]],
        target: float,
        exclude: frozenset[str] = frozenset(),
    ) -> dict[str, Any]:
        fitted_on[name] = {(r["dataset"], r["tag"]) for r in train}
        return {"graph": name, "test": {(r["dataset"], r["tag"]) for r in test}}

    monkeypatch.setattr(calibration, "graph_row", graph_row)
    reported = {"a": runs("a", 4, "fresh"), "b": runs("b", 4, "fresh"), "c": runs("c", 4, "fresh")}
    older = {"a": runs("a", 4, "older"), "b": runs("b", 4, "older")}
    rows = calibration.leave_one_out(reported, 0.95, fit_also=older)
    assert fitted_on["a"] == {("b", "fresh"), ("c", "fresh"), ("b", "older")}
    assert fitted_on["c"] == {("a", "fresh"), ("b", "fresh"), ("a", "older"), ("b", "older")}
    assert all(row["test"] == {(row["graph"], "fresh")} for row in rows)  # reported on its fresh runs only
