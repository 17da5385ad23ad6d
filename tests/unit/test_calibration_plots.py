"""The calibration plots' figures (bench/calibration_plots.py): the reliability bins and the coverage curve a
reader takes the stated confidence's worth from."""

from __future__ import annotations

import math

from bench.calibration_plots import coverage, reliability, reliability_svg

SCORED = [(0.95, True), (0.92, False), (0.97, True), (0.3, False), (0.35, True), (1.0, True)]


def test_each_bin_gives_its_mean_stated_confidence_its_share_right_and_its_size() -> None:
    bins = reliability(SCORED)
    assert [n for _, _, n in bins] == [2, 4]  # 0.3-0.4 and 0.9-1.0 (1.0 falls in the last bin)
    low, high = bins
    assert math.isclose(low[0], 0.325) and low[1] == 0.5
    assert math.isclose(high[0], (0.95 + 0.92 + 0.97 + 1.0) / 4) and high[1] == 0.75


def test_a_higher_threshold_answers_fewer_and_says_how_many_of_those_were_right() -> None:
    by_threshold = {t: (answered, right) for t, answered, right in coverage(SCORED)}
    assert by_threshold[0.0] == (1.0, 4 / 6)
    assert by_threshold[0.9] == (4 / 6, 0.75)
    answered, right = by_threshold[1.0]
    assert answered == 1 / 6 and right == 1.0


def test_the_diagram_names_each_set_with_its_size() -> None:
    svg = reliability_svg({"held-out": SCORED, "development": SCORED[:2]})
    assert "held-out (6 answers)" in svg and "development (2 answers)" in svg
