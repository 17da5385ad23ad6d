"""Confidence as a probability: a logistic model from an answer's evidence features (confidence/evidence.py)
to the probability that the answer is right, fitted on labelled runs (`tg-confidence calibrate`) and shipped
as a small JSON file. Logistic rather than isotonic: a few hundred labelled runs and fifteen features are
too few for a step function per feature, and the weights explain themselves ("an empty graph result
lowered it"). Prediction is plain Python; fitting uses numpy (Newton's method with an L2 penalty)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from confidence.evidence import DIRECTION, FEATURES, MAY_BE_MISSING
from confidence.evidence_words import Figures, listed, phrase

FORMAT = 1
EXPLAINED = 3  # the features named in the reasoning: those that moved the score most
RANGE_SLACK = 0.1  # how far outside the fitted range a feature may be before the model is not trusted there
EXTRAPOLATES = {"row_count"}
# The most an answer whose evidence lies outside every labelled answer's is stated at.
UNSEEN_CEILING = 0.5
# The most an answer that declines (says the results lack what was asked, though rows came back) is stated
# at: whatever its evidence, it answers nothing, and the rows it was given answer something else.
DECLINED_CEILING = 0.3


# The same for an answer without the kind of thing asked for (a "which" answered by rows holding only figures):
# whatever else is true of it, it does not answer the question.
INADEQUATE_CEILING = 0.3
# And for a list answer naming some of the rows the query returned and not the others: either the answer left
# rows out or it corrected a query that returned too many; on the development runs 3 of 14 such answers were
# right, stated at 0.37-0.90.
PARTIAL_LIST_CEILING = 0.3
# And for an answer whose question has words the reading could not place (questions/linking.py): whatever the
# rows, they answer the question as it was read, and part of it was not understood. Said with the words.
UNEXPLAINED_CEILING = 0.45
# And for one with words the reading placed in parts of the schema the chosen query does not use ("ICAO code for
# LHR?" answered by the airport's name): it answers another question. On the natural development questions 9
# of 29 such answers were right (questions/unused_links.py).
UNUSED_CEILING = 0.4
CEILINGS = {
    "declined": (DECLINED_CEILING, "the answer says the results lack what was asked"),
    "inadequate": (INADEQUATE_CEILING, "the answer lacks what was asked for (a name, a figure)"),
    "partial_list": (PARTIAL_LIST_CEILING, "the answer names only some of the rows the query returned"),
    "unexplained_words": (UNEXPLAINED_CEILING, ""),  # the words: confidence/evidence_words.py
    "unused_words": (UNUSED_CEILING, ""),
}


def capped(
    probability: float | None, reasons: str, features: dict[str, float], figures: Figures | None = None
) -> tuple[float | None, str]:
    """The stated confidence after the rules no fitted weight may overrule (the ceilings above)."""
    for feature, (ceiling, why) in CEILINGS.items():
        if features.get(feature, 0.0) > 0:
            probability = min(ceiling, probability if probability is not None else 1.0)
            reasons = f"{reasons}; at most {ceiling:.2f}: {why or phrase(feature, features, figures)}"
    return probability, reasons


class CalibratorError(ValueError):
    """The calibrator file is missing, not JSON, or not a calibrator this code can use."""


@dataclass(frozen=True)
class Calibrator:
    weights: dict[str, float]
    bias: float
    # The training set's mean of each feature: "moved the score" is measured from a typical answer.
    means: dict[str, float] = field(default_factory=dict)
    trained_on: dict[str, Any] = field(default_factory=dict)
    # The lowest and highest value of each feature among the labelled answers: outside them the model would
    # extrapolate (a partial plan, a retry, a text-only answer it never saw), so it says so instead.
    ranges: dict[str, tuple[float, float]] = field(default_factory=dict)

    def outside(self, features: dict[str, float]) -> list[str]:
        """The features whose value lies clearly outside what the calibrator was fitted on (the row count, a
        bounded log scale with a small weight, is exempt)."""
        out = []
        for name, (low, high) in self.ranges.items():
            value = self.value(features, name)
            if name not in EXTRAPOLATES and (value < low - RANGE_SLACK or value > high + RANGE_SLACK):
                out.append(name)
        return out

    def unseen(self, features: dict[str, float]) -> list[str]:
        """`outside`, each with its value (for an operator: the features' own names)."""
        return [f"{name} {self.value(features, name):.2f}" for name in self.outside(features)]

    def value(self, features: dict[str, float], name: str) -> float:
        """A feature's value; one a run may lack (MAY_BE_MISSING) reads as the typical answer's when absent."""
        default = self.means.get(name, 0.0) if name in MAY_BE_MISSING else 0.0
        return features.get(name, default)

    def probability(self, features: dict[str, float]) -> float:
        z = self.bias + sum(w * self.value(features, name) for name, w in self.weights.items())
        return 1 / (1 + math.exp(-max(-30.0, min(30.0, z))))

    def state(
        self, features: dict[str, float], figures: Figures | None = None, evidence_score: float | None = None
    ) -> tuple[float | None, str]:
        """The answer's stated confidence and why: the probability (two decimals) with the evidence that
        moved it; evidence unlike any it was fitted on is read as the nearest it was, at most UNSEEN_CEILING
        and the run's `evidence_score` (when given).
        The one rule both the synthesis worker and the benchmark's offline restatement apply. `figures`: what
        the run measured, for the words (confidence/evidence_words.py)."""
        outside = self.outside(features)
        if outside:
            # Evidence unlike any labelled answer: read as the nearest value it was fitted on, and never vouched
            # for above UNSEEN_CEILING (the evidence score, often 0.9, stated wrong answers as sure: measured).
            present = [phrase(n, features, figures) for n in outside if features.get(n, 0.0) > 0]
            unlike = f": {listed(present)}" if present else ""
            nearest = {
                **features,
                **{n: min(max(self.value(features, n), self.ranges[n][0]), self.ranges[n][1]) for n in outside},
            }
            ceiling = min(UNSEEN_CEILING, evidence_score if evidence_score is not None else 1.0)
            probability, reasons = capped(
                round(min(ceiling, self.probability(nearest)), 2),
                f"partly calibrated (unlike every answer the calibrator was fitted on{unlike}, so read as the "
                f"nearest it was, at most {ceiling:.2f}): {self.explain(nearest, figures)}",
                features,
                figures,
            )
        else:
            probability, reasons = capped(
                round(self.probability(features), 2),
                f"calibrated: {self.explain(features, figures)}",
                features,
                figures,
            )
        return probability, reasons + self.escalation_note(probability)

    def escalation_note(self, probability: float | None) -> str:
        """Below the threshold chosen on held-out labelled runs (bench/kgqa_calibration.py), the answer is one a
        person should check: the answers above it were right at the target rate, with a stated guarantee."""
        threshold, target = self.trained_on.get("escalation_threshold"), self.trained_on.get("escalation_target")
        if probability is None or not _finite(threshold) or not _finite(target) or probability >= threshold:
            return ""
        return (
            f"; below {threshold:.2f}, the confidence above which answers were right {target:.0%} of the time on "
            "graphs left out of fitting: check this answer before relying on it"
        )

    def effects(self, features: dict[str, float]) -> dict[str, str]:
        """The present evidence that moved this answer's probability most from a typical answer's, each
        "raised" or "lowered", the largest move first (what `explain` puts in words)."""
        moves = sorted(
            (
                (w * (features.get(n, 0.0) - self.means.get(n, 0.0)), n)
                for n, w in self.weights.items()
                if features.get(n, 0.0) > 0
            ),
            key=lambda m: -abs(m[0]),
        )
        return {n: "raised" if move > 0 else "lowered" for move, n in moves[:EXPLAINED] if abs(move) > 0.05}

    def explain(self, features: dict[str, float], figures: Figures | None = None) -> str:
        """The evidence present in this answer that moved its probability most, compared with a typical
        answer, in words a user can check, with the run's figures where it has them ("the query returned 12
        rows"). Only what is there is named: the absence of something ("no empty result") tells a reader
        nothing they can check."""
        moved = self.effects(features)
        raised = [phrase(n, features, figures) for n, how in moved.items() if how == "raised"]
        lowered = [phrase(n, features, figures) for n, how in moved.items() if how == "lowered"]
        parts = ([f"raised because {listed(raised)}"] if raised else []) + (
            [f"lowered because {listed(lowered)}"] if lowered else []
        )
        return "; ".join(parts) or "its evidence is like a typical answer's"

    def to_json(self) -> str:
        return (
            json.dumps(
                {
                    "format": FORMAT,
                    "kind": "logistic",
                    "bias": round(self.bias, 6),
                    "weights": {n: round(w, 6) for n, w in self.weights.items()},
                    "means": {n: round(m, 6) for n, m in self.means.items()},
                    "ranges": {n: [round(lo, 6), round(hi, 6)] for n, (lo, hi) in self.ranges.items()},
                    "trained_on": self.trained_on,
                },
                indent=2,
            )
            + "\n"
        )

    @classmethod
    def from_json(cls, text: str) -> Calibrator:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CalibratorError(f"not JSON ({exc.msg} at line {exc.lineno})") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("kind") != "logistic":
            raise CalibratorError(f"not a format-{FORMAT} logistic calibrator")
        weights, means, bias = data.get("weights"), data.get("means", {}), data.get("bias")
        if not isinstance(weights, dict) or not isinstance(means, dict) or not _finite(bias):
            raise CalibratorError("weights, means and bias must be an object, an object and a number")
        unknown = sorted(set(weights) - set(FEATURES))
        if unknown:
            raise CalibratorError(f"unknown feature(s) {', '.join(unknown)}: fitted by a newer version?")
        if not all(_finite(v) for v in [*weights.values(), *means.values()]):
            raise CalibratorError("every weight and mean must be a finite number")
        ranges = data.get("ranges", {})
        if not isinstance(ranges, dict) or not all(
            isinstance(r, list) and len(r) == 2 and all(_finite(v) for v in r) for r in ranges.values()
        ):
            raise CalibratorError("ranges must map each feature to [lowest, highest]")
        return cls(
            weights={n: float(w) for n, w in weights.items()},
            bias=float(bias),
            means={n: float(m) for n, m in means.items()},
            trained_on=dict(data.get("trained_on") or {}),
            ranges={n: (float(r[0]), float(r[1])) for n, r in ranges.items()},
        )


def _finite(value: object) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def fit(
    samples: list[tuple[dict[str, float], bool]],
    l2: float = 1.0,
    trained_on: dict[str, Any] | None = None,
    iterations: int = 50,
    exclude: set[str] | frozenset[str] = frozenset(),
    signed: bool = True,
    absent_unknown: bool = False,
) -> Calibrator:
    """Logistic regression by Newton's method; the L2 penalty (not on the bias) keeps weights finite when a
    feature separates the labels perfectly, as small labelled sets often do. `signed`: each feature's weight
    keeps the sign evidence.DIRECTION gives it (held at 0 where the runs would give it the other).
    `absent_unknown`: a feature a run lacks was not recorded (runs of older code), not 0."""
    import numpy as np

    if len(samples) < 2 or len({label for _, label in samples}) < 2:
        raise CalibratorError("fitting needs at least one right and one wrong answer")
    # An excluded feature gets no weight and no range: it neither moves nor blocks a calibrated answer (for a
    # feature whose meaning changed after the labelled runs were recorded).
    names = [n for n in FEATURES if n not in exclude]
    x = np.array(
        [
            [features.get(n, math.nan if absent_unknown or n in MAY_BE_MISSING else 0.0) for n in names]
            for features, _ in samples
        ],
        dtype=float,
    )
    # A feature a run lacks is read as the mean of the runs that have it: one the run may lack (MAY_BE_MISSING),
    # or, with `absent_unknown`, one added after the run was recorded (today's code records every feature on
    # every run), which read as 0 would count an old run's short walk as none. One no run has gets no weight
    # and no range, like an excluded one.
    present = ~np.isnan(x)
    kept = present.any(axis=0)
    names = [n for n, keep in zip(names, kept, strict=True) if keep]
    x, present = x[:, kept], present[:, kept]
    x = np.where(present, x, np.nansum(x, axis=0) / np.maximum(present.sum(axis=0), 1))
    y = np.array([1.0 if label else 0.0 for _, label in samples])
    design = np.hstack([np.ones((len(x), 1)), x])
    penalty = l2 * np.eye(design.shape[1])
    penalty[0, 0] = 0.0
    signs = np.array([0, *(DIRECTION.get(n, 0) if signed else 0 for n in names)])
    beta = _signed_fit(design, y, penalty, signs, iterations)
    return Calibrator(
        weights={n: float(w) for n, w in zip(names, beta[1:], strict=True)},
        bias=float(beta[0]),
        means={n: float(m) for n, m in zip(names, x.mean(axis=0), strict=True)},
        ranges={n: (float(lo), float(hi)) for n, lo, hi in zip(names, x.min(axis=0), x.max(axis=0), strict=True)},
        trained_on=dict(trained_on or {}, samples=len(samples), right=int(y.sum())),
    )


def _gradient(design: Any, y: Any, penalty: Any, beta: Any) -> tuple[Any, Any]:
    """The predicted probabilities and the penalised log-loss gradient at `beta`."""
    import numpy as np

    p = 1 / (1 + np.exp(-np.clip(design @ beta, -30, 30)))
    return p, design.T @ (p - y) + penalty @ beta


def _newton(design: Any, y: Any, penalty: Any, free: Any, iterations: int) -> Any:
    """The penalised logistic fit over the `free` columns, the others' weights held at 0."""
    import numpy as np

    columns = np.flatnonzero(free)
    d, pen = design[:, columns], penalty[np.ix_(columns, columns)]
    beta = np.zeros(len(columns))
    for _ in range(iterations):
        p, gradient = _gradient(d, y, pen, beta)
        hessian = d.T @ (d * (p * (1 - p))[:, None]) + pen
        step = np.linalg.solve(hessian + 1e-9 * np.eye(len(beta)), gradient)
        beta -= step
        if np.max(np.abs(step)) < 1e-8:
            break
    full = np.zeros(design.shape[1])
    full[columns] = beta
    return full


def _signed_fit(design: Any, y: Any, penalty: Any, signs: Any, iterations: int) -> Any:
    """The fit with each weight of sign s (+1, -1; 0: free) on the side s allows: an active set, where a weight
    fitted the wrong way is held at 0, and one held whose loss gradient points the allowed way is freed again."""
    import numpy as np

    held = np.zeros(len(signs), dtype=bool)
    beta = _newton(design, y, penalty, ~held, iterations)
    for _ in range(2 * len(signs)):
        wrong = ~held & (signs * beta < 0)
        if wrong.any():
            held |= wrong
        else:
            pull = -_gradient(design, y, penalty, beta)[1]  # the way the loss falls fastest, per weight
            wants = held & (signs * pull > 1e-6)
            if not wants.any():
                break
            held[int(np.argmax(np.where(wants, np.abs(pull), 0.0)))] = False
        beta = _newton(design, y, penalty, ~held, iterations)
    while (wrong := ~held & (signs * beta < 0)).any():  # rounds used up (never seen): hold what is still wrong
        held |= wrong
        beta = _newton(design, y, penalty, ~held, iterations)
    return beta
