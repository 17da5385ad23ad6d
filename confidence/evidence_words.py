"""The evidence behind an answer in words a user can check: what the run measured ("the query returned 12
rows", "2 of 3 candidate queries agreed"), for the confidence line the calibrator writes. Only evidence that
is present is put in words, and never by its feature name (confidence/evidence.py FEATURES keeps the short
names the calibrator file uses); a feature with no words of its own here falls back to its FEATURES phrase.
Pure functions."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from confidence.evidence import FEATURES, MAX_HOPS_FEATURE

MAX_NAMES = 3  # names quoted in one phrase; the rest are counted ("and 2 more")
MAX_NAME_CHARS = 60  # a longer name or value is cut: the line is one line


@dataclass(frozen=True)
class StepFigures:
    """One supporting step's measured facts: its tool's signals (ConfidenceMetrics.signals), the names behind
    its counts (ConfidenceMetrics.names, e.g. "unused_names" -> the question's names the query ignores)."""

    signals: dict[str, float] = field(default_factory=dict)
    names: dict[str, list[str]] = field(default_factory=dict)
    retries: int = 0

    @property
    def graph(self) -> bool:
        return "rows" in self.signals


@dataclass(frozen=True)
class Figures:
    """What the run measured, for the words: the supporting steps, and the number of rows of the ranking an
    answer was read from (confidence/answer_fit.py), when there is one."""

    steps: list[StepFigures] = field(default_factory=list)
    ranked_rows: int = 0
    planned_steps: int = 0  # 0: not known (derived from the coverage feature by `phrase`)
    unexplained: list[str] = field(default_factory=list)  # the question's words the reading could not place
    unused: list[str] = field(default_factory=list)  # ... and those it placed where the query does not look

    def graph(self) -> list[StepFigures]:
        return [s for s in self.steps if s.graph]

    def names(self, signal: str) -> list[str]:
        return list(dict.fromkeys(n for s in self.graph() for n in s.names.get(signal, [])))

    def total(self, signal: str) -> int:
        return int(sum(s.signals.get(signal, 0.0) for s in self.graph()))


def _plural(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {one if count == 1 else (many or one + 's')}"


def _listed(items: list[str]) -> str:
    shown = items[:MAX_NAMES] + ([f"{len(items) - MAX_NAMES} more"] if len(items) > MAX_NAMES else [])
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"


def _quoted(names: list[str]) -> str:
    return _listed([f"'{n if len(n) <= MAX_NAME_CHARS else n[: MAX_NAME_CHARS - 3] + '...'}'" for n in names])


def _the_query(figures: Figures) -> str:
    return "the queries" if len(figures.graph()) > 1 else "the query"


def _a_query(figures: Figures) -> str:
    """For what one query of several may have done (aggregated, walked relationships)."""
    return "a query" if len(figures.graph()) > 1 else "the query"


def _step_score(v: float, f: Figures) -> str:
    return f"the weakest supporting step scored {v:.2f}" if len(f.steps) != 1 else f"the step scored {v:.2f}"


def _coverage(v: float, f: Figures) -> str:
    usable, planned = len(f.steps), f.planned_steps
    if not usable or not planned:
        return f"{v:.0%} of the planned steps gave a usable result"
    if usable >= planned:
        return (
            "the one planned step gave a usable result"
            if planned == 1
            else f"all {planned} planned steps gave a usable result"
        )
    return f"{usable} of {planned} planned steps gave a usable result"


def _graph_rows(v: float, f: Figures) -> str:
    return "the answer comes from rows of the knowledge graph"


def _empty_result(v: float, f: Figures) -> str:  # every query of the answer came back empty
    return f"{_the_query(f)} returned 0 rows"


def _absent_name(v: float, f: Figures) -> str:
    names = f.names("absent_names")
    if names:
        return (
            f"the question's name {_quoted(names)} is nowhere in the graph"
            if len(names) == 1
            else f"the question's names {_quoted(names)} are nowhere in the graph"
        )
    count = max(1, f.total("absent_names"))
    return f"{_plural(count, 'name')} in the question {'is' if count == 1 else 'are'} nowhere in the graph"


def _unmatched_value(v: float, f: Figures) -> str:
    names = f.names("unmatched_values")
    if names:
        return (
            f"{_the_query(f)} matched on the {'value' if len(names) == 1 else 'values'} {_quoted(names)} that the "
            "graph holds nowhere"
        )
    count = max(1, f.total("unmatched_values"))  # without names: perhaps stored, but not where it looked
    return f"{_the_query(f)} matched on {_plural(count, 'value')} the graph does not hold where it looked"


def _row_count(v: float, f: Figures) -> str:
    if f.graph():
        rows = f.total("rows")
        return f"{_the_query(f)} returned {_plural(rows, 'row')}" + (" in all" if len(f.graph()) > 1 else "")
    if v >= 1.0:  # the feature's scale ends at 999 rows (confidence/evidence.py)
        return "the query returned 999 rows or more"
    return f"the query returned {_plural(round(10 ** (3 * v) - 1), 'row')}"


def _truncated(v: float, f: Figures) -> str:
    return f"{_a_query(f)} returned more rows than were kept"


def _text_only(v: float, f: Figures) -> str:
    return "the answer comes from generated text, not from rows of the knowledge graph"


def _ungrounded_text(v: float, f: Figures) -> str:
    return f"only {1 - v:.0%} of a generated text's names and figures are in its evidence"


def _refusal(v: float, f: Figures) -> str:
    return "a tool said it does not know"


def _retries(v: float, f: Figures) -> str:
    subject = "the step" if len(f.steps) == 1 else "the steps"
    retries = sum(s.retries for s in f.steps)
    if not retries:  # not sent (a run started before they were): the feature counts up to 3
        if v >= 1.0:
            return f"{subject} needed 3 retries or more"
        retries = round(v * 3)
    return f"{subject} needed {_plural(retries, 'retry', 'retries')}"


def _disagreement(v: float, f: Figures) -> str:
    voted = [s.signals for s in f.graph() if s.signals.get("candidates", 1.0) > 1]
    if voted:  # the step whose candidates agreed least, as the feature takes it
        worst = min(voted, key=lambda s: s.get("agreement", 1.0))
        candidates = int(worst["candidates"])
        agreeing = round(worst.get("agreement", 1.0) * candidates)
        return f"only {agreeing} of {candidates} candidate queries agreed on the answer"
    return f"candidate queries disagreed ({v:.0%} of them returned another answer)"


def _form_disagrees(v: float, f: Figures) -> str:
    if v > 0:
        return "the query form returned another answer than the one given"
    return "the query form returned the answer given"


def _rewritten(v: float, f: Figures) -> str:
    return "the first draft of the answer stated something the results lack and was rewritten"


def _composed(v: float, f: Figures) -> str:
    return "the answer is the rows themselves as written answers did not check out against them"


def _declined(v: float, f: Figures) -> str:
    return "the answer says the results lack what was asked though rows came back"


def _reranked(v: float, f: Figures) -> str:
    return (
        "the written answer named another row than the query ranked first, or misstated their figures, and was "
        "replaced by the ranking"
    )


def _ranked_first(v: float, f: Figures) -> str:
    if f.ranked_rows > 1:
        return f"the answer names the first of the {f.ranked_rows} rows the query ranked"
    return "the answer names the row the query ranked first"


def _inadequate(v: float, f: Figures) -> str:
    return "the answer lacks the kind of thing asked for (a name for 'which', a figure for 'how many')"


def _partial_list(v: float, f: Figures) -> str:
    return "the answer names some of the rows the query returned and leaves others out"


def _unexplained_words(v: float, f: Figures) -> str:
    words = f.unexplained
    if not words:
        return f"{_plural(round(v), 'word')} of the question that nothing in the graph's schema explains"
    return f"the question's {_quoted(words)} {'matches' if len(words) == 1 else 'match'} nothing in the graph's schema"


def _unused_words(v: float, f: Figures) -> str:
    words = f.unused
    if not words:
        return f"{_plural(round(v), 'word')} of the question whose meaning the query does not use"
    return f"the query does not use what the question's {_quoted(words)} {'means' if len(words) == 1 else 'mean'}"


def _unused_name(v: float, f: Figures) -> str:
    names = f.names("unused_names")
    verb = "ignore" if len(f.graph()) > 1 else "ignores"
    if names:
        return (
            f"{_the_query(f)} {verb} the question's name {_quoted(names)}"
            if len(names) == 1
            else f"{_the_query(f)} {verb} the question's names {_quoted(names)}"
        )
    return f"{_the_query(f)} {verb} a name the question gives and the graph holds"


def _unused_figure(v: float, f: Figures) -> str:
    figures = f.names("unused_figures")
    verb = "leave" if len(f.graph()) > 1 else "leaves"
    if figures:
        return f"{_the_query(f)} {verb} out the question's figure{'s' if len(figures) > 1 else ''} {', '.join(figures)}"
    return f"{_the_query(f)} {verb} out a figure the question gives"


def _unasked_label(v: float, f: Figures) -> str:
    return (
        f"{_the_query(f)} never {'match' if len(f.graph()) > 1 else 'matches'} the kind of thing the question asks for"
    )


def _short_walk(v: float, f: Figures) -> str:
    return (
        f"{_the_query(f)} {'walk' if len(f.graph()) > 1 else 'walks'} the relationships the question spells "
        "out fewer times than it names them, misses a kind of thing it names, returns or ranks by only what it "
        "names, walks from two of its names apart, or joins two of them by fewer relationships than separate "
        "them"
    )


def _multi_step(v: float, f: Figures) -> str:
    return f"the plan took {f.planned_steps} steps" if f.planned_steps > 1 else "the plan took several steps"


def _aggregates(v: float, f: Figures) -> str:
    return f"{_a_query(f)} aggregates its rows (a count, sum, average, minimum or maximum)"


def _hops(v: float, f: Figures) -> str:
    walked = max((s.signals.get("hops", 0.0) for s in f.graph()), default=0.0) or v * MAX_HOPS_FEATURE
    hops = round(walked)
    more = " or more" if hops >= MAX_HOPS_FEATURE and not f.graph() else ""
    return f"{_a_query(f)} walks {_plural(hops, 'relationship')}{more}"


def _program_margin(v: float, f: Figures) -> str:
    if v >= 1:
        return "the query code chose led every other it could have run"
    return "the query code chose led the next it could have run " + ("not at all" if v <= 0 else "narrowly")


def _rivals_disagree(v: float, f: Figures) -> str:
    if v <= 0:
        return "no query ranked nearly as high as the one chosen gave another answer"
    return f"{v:.0%} of the queries ranked nearly as high as the one chosen gave another answer"


def _sureness(what: str) -> Callable[[float, Figures], str]:
    """How sure the model was of the words it wrote (confidence/token_evidence.py): their mean probability."""
    return lambda v, f: f"the model wrote {what} at {v:.0%} certainty per word on average"


def _least_sure(what: str) -> Callable[[float, Figures], str]:
    return lambda v, f: f"the model's least certain word in {what} was {v:.0%} likely"


WORDS: dict[str, Callable[[float, Figures], str]] = {
    "step_score": _step_score,
    "coverage": _coverage,
    "graph_rows": _graph_rows,
    "empty_result": _empty_result,
    "absent_name": _absent_name,
    "unmatched_value": _unmatched_value,
    "row_count": _row_count,
    "truncated": _truncated,
    "text_only": _text_only,
    "ungrounded_text": _ungrounded_text,
    "refusal": _refusal,
    "retries": _retries,
    "disagreement": _disagreement,
    "form_disagrees": _form_disagrees,
    "rewritten": _rewritten,
    "composed": _composed,
    "declined": _declined,
    "reranked": _reranked,
    "ranked_first": _ranked_first,
    "inadequate": _inadequate,
    "partial_list": _partial_list,
    "unused_name": _unused_name,
    "unexplained_words": _unexplained_words,
    "unused_words": _unused_words,
    "unused_figure": _unused_figure,
    "unasked_label": _unasked_label,
    "short_walk": _short_walk,
    "multi_step": _multi_step,
    "aggregates": _aggregates,
    "hops": _hops,
    "program_margin": _program_margin,
    "rivals_disagree": _rivals_disagree,
    "query_token_p": _sureness("its query"),
    "query_weakest_p": _least_sure("its query"),
    "answer_token_p": _sureness("the answer"),
    "answer_weakest_p": _least_sure("the answer"),
}


def phrase(name: str, features: dict[str, float], figures: Figures | None = None) -> str:
    """One present feature of an answer (`features`: confidence/evidence.py) in words, with the run's figures
    where it has them. A feature without words here (a newer one) reads as its FEATURES phrase, never as its
    name."""
    words, value = WORDS.get(name), features.get(name, 0.0)
    if words is None or not math.isfinite(value):
        return FEATURES.get(name, "other evidence")
    figures = figures or Figures()
    coverage = features.get("coverage", 0.0)
    if not figures.planned_steps and figures.steps and math.isfinite(coverage) and coverage > 0:
        figures = replace(figures, planned_steps=round(len(figures.steps) / coverage))
    return words(value, figures)


def listed(phrases: list[str]) -> str:
    """Phrases as one clause: "a, b and c"."""
    return phrases[0] if len(phrases) == 1 else f"{', '.join(phrases[:-1])} and {phrases[-1]}"
