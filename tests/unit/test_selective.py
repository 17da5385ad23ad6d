"""The escalation threshold with a guarantee, and the risk-coverage curve (bench/kgqa/selective.py)."""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET

from bench.kgqa.selective import choose_threshold, error_upper_bound, risk_coverage, svg_curve


def test_the_error_bound_is_clopper_pearson() -> None:
    assert abs(error_upper_bound(0, 59, 0.05) - 0.0495) < 0.001  # "the rule of three": about 3/n
    assert abs(error_upper_bound(5, 100, 0.05) - 0.1023) < 0.001  # one-sided 95 %
    assert error_upper_bound(0, 0, 0.1) == 1.0 and error_upper_bound(4, 4, 0.1) == 1.0


def test_the_threshold_answers_alone_only_where_the_rate_is_bounded() -> None:
    rng = random.Random(1)
    # confidence that carries information: above 0.8 right 99 % of the time, below it a coin toss
    scores = [rng.random() for _ in range(2000)]
    right = [rng.random() < (0.99 if s > 0.8 else 0.5) for s in scores]
    chosen = choose_threshold(scores, right, target=0.95)
    assert chosen.value is not None and 0.75 <= chosen.value <= 0.9
    assert chosen.bound <= 0.05 and chosen.answered > 300
    # confidence that carries none: no threshold can promise 95 %
    assert choose_threshold(scores, [rng.random() < 0.7 for _ in scores], target=0.95).value is None


def test_risk_falls_as_coverage_narrows_to_the_most_confident() -> None:
    scores = [i / 100 for i in range(100)]
    right = [s > 0.3 for s in scores]
    curve = risk_coverage(scores, right, points=10)
    assert curve[0][:2] == (0.1, 0.0) and abs(curve[-1][1] - 0.31) < 1e-9
    assert [round(c, 1) for c, _, _ in curve] == [round(0.1 * i, 1) for i in range(1, 11)]
    ET.fromstring(svg_curve({"all": curve}, "t"))  # a well-formed image
