"""Does the answer state what the question asks for? Two checks the name-and-figure check
(confidence/answer_check.py) cannot make, since a wrong answer can be made of true values:
- adequacy: a "how many" is answered with a number, a "which" or "who" with a name (not with a duration);
- faithfulness to a ranking: a superlative question ("which supplier has the most orders") is answered with
  the row the query ranked first, not with another row that is also in the results;
- completeness of a list: a question asking for every match ("which countries border X", "list the ...")
  answered with some of the rows the query returned and not the others is doubted (not rewritten: on the
  development runs the left-out rows were as often the writer's correction of a wrong query as an omission).
Pure functions. Nothing here knows a graph, a label or a domain: only English question words and the shape
of the rows."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from confidence.answer_check import SPELLED_NUMBERS, compose_from_rows, show_value, states_row_figure

# The rows of a graph result that carry this key were ordered by the query (tools/graph_query.py).
ORDERED_KEY = "ordered_by"
MAX_RANKED_SHOWN = 5
# A list question's rows up to this many are all named by a complete answer; a longer list is summarised by any
# writer, and its answer is not held to naming each.
MAX_LISTED = 25

_SUPERLATIVES = {
    "most",
    "least",
    "fewest",
    "top",
    "maximum",
    "minimum",
    "highest",
    "lowest",
    "largest",
    "smallest",
    "biggest",
    "greatest",
    "longest",
    "shortest",
    "best",
    "worst",
    "oldest",
    "newest",
    "youngest",
    "earliest",
    "latest",
    "cheapest",
    "dearest",
    "heaviest",
    "lightest",
    "busiest",
    "richest",
    "poorest",
    "tallest",
    "deepest",
    "widest",
    "narrowest",
    "fastest",
    "slowest",
    "costliest",
}
# Words ending in -est that are no superlative ("which requests are the latest" still has "latest").
_NOT_SUPERLATIVE = {
    "interest",
    "forest",
    "west",
    "request",
    "test",
    "rest",
    "guest",
    "nest",
    "chest",
    "contest",
    "protest",
    "suggest",
    "digest",
    "arrest",
    "honest",
    "modest",
    "manifest",
    "harvest",
    "invest",
    "quest",
    "crest",
    "earnest",
    "northwest",
    "southwest",
    "midwest",
    "pest",
    "vest",
    "zest",
    "priest",
    "conquest",
    "inquest",
    "behest",
    "unrest",
    "attest",
    "detest",
    "infest",
    "molest",
    "divest",
    "ingest",
    "congest",
    "jest",
    "wrest",
}
_COUNT = re.compile(r"\bhow\s+many\b|\bnumber\s+of\b|\bcount\s+(?:of|the)\b", re.IGNORECASE)
_AMOUNT = re.compile(
    r"\bhow\s+(?:much|long|large|big|old|far|tall|high|heavy|populous)\b"
    r"|\b(?:total|average|mean|sum|combined)\b",
    re.IGNORECASE,
)
_NAME = re.compile(r"\b(?:which|who|whom|whose)\b|^\s*(?:name|list)\b", re.IGNORECASE)
_SPELLED = "|".join(SPELLED_NUMBERS)
_DIGITS = re.compile(r"(?<![\w.])[-+]?\d[\d,]*(?:\.\d+)?")
_FIGURE = re.compile(rf"{_DIGITS.pattern}|\b(?:{_SPELLED})\b", re.IGNORECASE)
_RANKED_SPELLED = "|".join(word for word, n in SPELLED_NUMBERS.items() if n > 1)  # "the three largest"
_K = re.compile(
    rf"\b(?:top|first)\s+(\d+|{_RANKED_SPELLED})\b"
    rf"|\b(\d+|{_RANKED_SPELLED})\s+(?:\w+\s+){{0,4}}?"
    r"(?:most|least|fewest|\w+est)\b",
    re.IGNORECASE,
)


def superlative(question: str) -> bool:
    """The question asks for the top (or bottom) of a ranking: a superlative word in lower case (a name such as
    "Budapest" is capitalised; "interest" is no superlative)."""
    for word in re.findall(r"\b[a-z]+\b", question):
        if word in _SUPERLATIVES or (len(word) >= 6 and word.endswith("est") and word not in _NOT_SUPERLATIVE):
            return True
    return False


def ranked_count(question: str) -> int:
    """How many rows of the ranking the question asks for: "the three largest", "top 5"; one otherwise."""
    match = _K.search(question)
    if not match:
        return 1
    word = (match.group(1) or match.group(2)).lower()
    return int(word) if word.isdigit() else SPELLED_NUMBERS.get(word, 1)


# "list ...", "name the ...", "which countries ...", "what airports ...", "who are ...": the question asks for
# every match. A singular "which country" asks for one; a word ending in -ss, -us or -is is no plural.
_LIST = re.compile(
    r"^\s*(?:list|name)\b"
    r"|\b(?:which|what)\s+(?:of\s+the\s+)?(?!(?:was|has|does|its|this|yes)\b)[a-z]+(?<![sui])s\b"
    r"|\b(?:who|what)\s+(?:are|were)\b"
    r"|^\s*of\s+the\s+[a-z]+s\b[^?]*?,\s*which\b",  # "Of the countries linked to X, which have ..."
    re.IGNORECASE,
)


def asks_for_list(question: str) -> bool:
    return bool(_LIST.search(question))


def asks_for_number(question: str) -> bool:
    return bool(_COUNT.search(question) or _AMOUNT.search(question))


def asks_for_name(question: str) -> bool:
    return bool(_NAME.search(question))


@dataclass(frozen=True)
class Ranking:
    columns: list[str]
    rows: list[list[Any]]

    def names(self, row: list[Any]) -> list[str]:
        """The texts of a row: what an answer names it by."""
        return [str(v) for v in row if isinstance(v, str) and len(v.strip()) >= 2]

    def figures(self, row: list[Any]) -> list[Any]:
        return [v for v in row if isinstance(v, (int, float)) and not isinstance(v, bool)]

    def leaders(self, k: int) -> list[list[Any]]:
        """The first k rows, and every later row tied with the k-th on all its figures (a tie shares the rank)."""
        if len(self.rows) <= k:
            return list(self.rows)
        last = self.figures(self.rows[k - 1])
        tied = [row for row in self.rows[k:] if last and self.figures(row) == last]
        return [*self.rows[:k], *tied]


def listing(outputs: list[str]) -> Ranking | None:
    """The one graph result with rows (ordered or not) when there is exactly one: the list a list question's
    answer is held to; None otherwise (which result the answer lists is not known)."""
    found: list[Ranking] = []
    for output in outputs:
        data = _parsed(output)
        if data is None:
            continue
        rows = [row for row in data.get("rows", []) if isinstance(row, list)]
        if rows:
            found.append(Ranking([str(c) for c in data.get("columns", [])], rows))
    return found[0] if len(found) == 1 else None


def unnamed_rows(answer: str, listed: Ranking) -> list[list[Any]]:
    """The rows the answer names by none of their varying texts (a text every row shares, such as the region
    all the listed countries are in, names no row in particular); [] when no column varies."""
    columns = range(max((len(row) for row in listed.rows), default=0))
    varying = [
        c for c in columns if len({row[c] for row in listed.rows if c < len(row) and isinstance(row[c], str)}) > 1
    ]
    lowered = answer.lower()

    def named(row: list[Any]) -> bool:
        texts = [row[c] for c in varying if c < len(row) and isinstance(row[c], str) and len(row[c].strip()) >= 2]
        return not texts or any(t.lower() in lowered for t in texts)

    return [row for row in listed.rows if not named(row)] if varying else []


def ranking(outputs: list[str]) -> Ranking | None:
    """The one graph result whose rows the query ordered, its first row holding a name; None when there is none
    or more than one (which order would be the answer's is not known)."""
    found: list[Ranking] = []
    for output in outputs:
        data = _parsed(output)
        if data is None:
            continue
        rows = [row for row in data.get("rows", []) if isinstance(row, list)]
        if data.get(ORDERED_KEY) and rows and any(isinstance(v, str) for v in rows[0]):
            found.append(Ranking([str(c) for c in data.get("columns", [])], rows))
    return found[0] if len(found) == 1 else None


def names_leaders(answer: str, ranked: Ranking, k: int) -> bool:
    """The answer names each of the first k rows (or a row tied with them)."""
    lowered = answer.lower()
    leaders = ranked.leaders(k)
    named = [row for row in leaders if any(n.lower() in lowered for n in ranked.names(row))]
    return len(named) >= min(k, len(ranked.rows))


def misstates_leaders(answer: str, ranked: Ranking, k: int) -> bool:
    """The answer states figures, but none of some leading row's own ("A, B and C ... each has 135" when the
    rows say 135, 56 and 31); each of the first k rows holding figures must have one of them stated (a row's
    other figures may go unsaid). An answer that gives no figure is not held to them."""
    written = [float(m.group().replace(",", "")) for m in _DIGITS.finditer(answer)]

    def stated(value: float) -> bool:
        return any(abs(value - w) <= max(0.5, abs(value) * 0.005) for w in written)

    leaders = [ranked.figures(row) for row in ranked.leaders(k)]
    return bool(written) and any(figures and not any(stated(float(v)) for v in figures) for figures in leaders)


def ranked_answer(question: str, ranked: Ranking) -> str:
    """The answer a ranking gives, read from its rows: the first k (and ties), then the next few for context."""
    k = ranked_count(question)
    leaders = ranked.leaders(k)

    def shown(row: list[Any]) -> str:
        names = ranked.names(row)
        rest = [
            f"{c}: {show_value(v)}" for c, v in zip(ranked.columns, row, strict=False) if show_value(v) not in names
        ]
        return f"{', '.join(names)}" + (f" ({'; '.join(rest)})" if rest else "")

    first = "; ".join(shown(r) for r in leaders)
    lead = "first" if len(leaders) == 1 else f"the first {len(leaders)}"
    answer = f"{first}: {lead} of the {len(ranked.rows)} rows the query ranked."
    following = ranked.rows[len(leaders) : len(leaders) + MAX_RANKED_SHOWN]
    if following:
        answer += " Next: " + "; ".join(shown(r) for r in following) + "."
    return answer


def stated_figure(answer: str) -> bool:
    return bool(_FIGURE.search(answer))


def stated_name(answer: str, outputs: list[str]) -> bool | None:
    """Whether the answer names a text value of the graph rows; None when the rows hold no text at all (a
    "which" answered by a query that returned only figures: nothing in them names what was asked)."""
    texts = {
        str(v).strip().lower()
        for output in outputs
        for row in _rows(output)
        for v in row
        if isinstance(v, str) and len(v.strip()) >= 2
    }
    if not texts:
        return None
    lowered = answer.lower()
    return any(t in lowered for t in texts)


@dataclass(frozen=True)
class Fit:
    """What the answer states against what was asked. `ranked_first`: the question ranks, the query ordered its
    rows and the answer names the first; `inadequate`: it lacks the kind of thing asked for; `partial_list`: a
    list question's answer names some of the rows the query returned and leaves others out."""

    ranked_first: bool
    inadequate: bool
    partial_list: bool = False

    def features(self) -> dict[str, float]:
        return {
            "ranked_first": float(self.ranked_first),
            "inadequate": float(self.inadequate),
            "partial_list": float(self.partial_list),
        }


def refit(question: str, answer: str, outputs: list[str]) -> tuple[str, str] | None:
    """The answer the rows give when the written one does not state what was asked, with how it was made:
    ("ranked", ...) when a superlative's answer does not name the row the query ranked first; ("restated", ...)
    when a list answer names some of the rows and leaves others out, a "which" names no text of the rows, or
    a "how many" states no figure, though the rows hold one, or states another than the one row of figures.
    None when the written answer stands."""
    ranked = ranking(outputs) if superlative(question) else None
    if ranked is not None and (
        not names_leaders(answer, ranked, ranked_count(question))
        or misstates_leaders(answer, ranked, ranked_count(question))
    ):
        return "ranked", ranked_answer(question, ranked)
    graph_results = [o for o in outputs if _parsed(o) is not None]
    if not graph_results or not any(_rows(o) for o in graph_results):
        return None
    if leaves_rows_out(question, answer, outputs):
        return "restated", compose_from_rows(question, outputs)
    if asks_for_number(question):
        # a count may be the number of rows; an amount must be a figure in them
        figures = [
            v
            for o in graph_results
            for row in _rows(o)
            for v in row
            if isinstance(v, (int, float)) and not isinstance(v, bool)
        ]
        holds_figure = bool(_COUNT.search(question)) or bool(figures)
        if holds_figure and not stated_figure(answer):
            return "restated", compose_from_rows(question, outputs)
        if states_row_figure(answer, graph_results) is False:  # "1 relationship" when the row says 3
            return "restated", compose_from_rows(question, outputs)
        return None
    if (
        superlative(question)
        and not asks_for_name(question)
        and _only_figures(graph_results)  # a row that names the thing ranked ("China", 1411778724) is answered so
        and states_row_figure(answer, graph_results) is False
    ):
        return "restated", compose_from_rows(question, outputs)  # "the highest population is" another figure
    if asks_for_name(question) and stated_name(answer, graph_results) is False:
        return "restated", compose_from_rows(question, outputs)
    return None


def fit(question: str, answer: str, outputs: list[str]) -> Fit:
    graph_results = [o for o in outputs if _parsed(o) is not None]
    ranked = ranking(outputs) if superlative(question) else None
    ranked_first = ranked is not None and names_leaders(answer, ranked, ranked_count(question))
    inadequate = False
    if graph_results:  # a text answer (a completion, a prompt) is not judged by the rows' shape
        if asks_for_number(question) and not stated_figure(answer):
            inadequate = True
        elif asks_for_name(question) and not asks_for_number(question) and stated_name(answer, graph_results) is None:
            inadequate = _only_figures(graph_results)
    return Fit(
        ranked_first=ranked_first, inadequate=inadequate, partial_list=leaves_rows_out(question, answer, outputs)
    )


def leaves_rows_out(question: str, answer: str, outputs: list[str]) -> bool:
    """A list question ("which countries ...", "list the ...") whose answer names some rows of the one graph
    result and not others; a superlative (its ranking is checked instead), a count, or a list too long to name
    in full is not held to it."""
    if not asks_for_list(question) or superlative(question) or asks_for_number(question):
        return False
    listed = listing(outputs)
    if listed is None or not 1 < len(listed.rows) <= MAX_LISTED:
        return False
    lowered = answer.lower()
    names_some = any(name.strip().lower() in lowered for row in listed.rows for name in listed.names(row))
    return names_some and bool(unnamed_rows(answer, listed))


def _only_figures(outputs: list[str]) -> bool:
    """Some rows came back and none holds any text: a "which" cannot be answered from them."""
    rows = [row for output in outputs for row in _rows(output)]
    return bool(rows) and not any(isinstance(v, str) for row in rows for v in row)


def _parsed(output: str) -> dict[str, Any] | None:
    try:
        data = json.loads(output)
    except (json.JSONDecodeError, TypeError):
        return None
    return data if isinstance(data, dict) and "rows" in data else None


def _rows(output: str) -> list[list[Any]]:
    data = _parsed(output)
    return [row for row in (data or {}).get("rows", []) if isinstance(row, list)]
