"""Verifying an answer against the results it was written from: every name and figure it states must be
found in those results (or in the question). What is not found was invented, and the answer is rewritten
or composed from the rows directly (activities/synthesis.py). Pure functions."""

from __future__ import annotations

import json
import re
from typing import Any

# A figure stands alone: the digits of an id ("SUP-015") or of a date's month and day are no figure, so an
# answer stating "15 suppliers" is not supported by a row holding SUP-015.
_ALONE = r"(?<![\w.])(?<!\w-)"
_NUMBER = re.compile(rf"{_ALONE}[-+]?\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?(?![\w])|{_ALONE}[-+]?\d+(?:\.\d+)?(?![\w])")
_WORD = re.compile(r"\b[A-Z][\w&'\-]*")
# Capitalised words that say how, not what: sentence openers, connectives, and the answer's own frame.
_FRAME = {
    "the",
    "a",
    "an",
    "in",
    "on",
    "of",
    "for",
    "and",
    "or",
    "to",
    "from",
    "by",
    "with",
    "it",
    "its",
    "there",
    "this",
    "these",
    "those",
    "they",
    "their",
    "each",
    "all",
    "no",
    "not",
    "none",
    "yes",
    "total",
    "based",
    "according",
    "however",
    "also",
    "both",
    "here",
    "confidence",
    "i",
    "we",
    "our",
    "is",
    "are",
    "was",
    "were",
    "has",
    "have",
    "had",
    "as",
    "at",
    "but",
    "so",
    "than",
    "then",
    "that",
    "which",
    "who",
    "what",
    "when",
    "where",
    "how",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "first",
    "second",
    "third",
    "last",
    "top",
    "most",
    "least",
    "only",
    "overall",
    "together",
    "between",
    "among",
    "after",
    "before",
    "since",
    "until",
    "while",
    "if",
    "because",
    "therefore",
    "thus",
    "note",
    "sorry",
    "unfortunately",
    "answer",
    "result",
    "results",
    "data",
    "graph",
    "knowledge",
    "database",
}
_CALENDAR = {
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
}
SMALL = 1  # "0" and "1" need no support (none, one); any other figure must come from the results
_LIST_MARKER = re.compile(r"^\s*\d+[.)]\s", re.MULTILINE)
COMPOSED_ROWS = 20
TEXT_CHARS = 800


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _decimals(text: str) -> int:
    return len(text.split(".", 1)[1]) if "." in text else 0


def _supported_number(claim: str, known: list[float], small_free: bool = True) -> bool:
    value = _number(claim)
    if small_free and value.is_integer() and abs(value) <= SMALL:
        return True
    tolerance = 0.5 * 10 ** -_decimals(claim) + 1e-9  # "4.3" stands for anything that rounds to it
    return any(abs(value - k) <= tolerance or abs(value - round(k, _decimals(claim))) <= 1e-9 for k in known)


def unsupported_claims(
    answer: str, evidence: str, vocabulary: set[str] | None = None, outputs: list[str] | None = None
) -> list[str]:
    """The names (capitalised words) and figures in `answer` that `evidence` does not contain, in order.
    `vocabulary`: words that may always appear (the schema's labels and properties). `outputs`: the step
    results; when they are one row of figures (an aggregate), even "0" and "1" must come from them: an
    answer that counts the rows ("1 supplier") instead of reading the value is wrong."""
    small_free = not is_single_aggregate(outputs or [])
    haystack = evidence.lower()
    allowed = {w.lower() for w in (vocabulary or set())} | _FRAME | _CALENDAR
    figures = evidence
    if not small_free:  # the row count is not the answer: only the row's own values (and the question) count
        for output in outputs or []:
            parsed = _rows(output)
            figures = figures.replace(output, json.dumps(parsed[1]) if parsed else output)
    known = [_number(n) for n in _NUMBER.findall(figures)] + computed_figures(outputs or [])
    missing: list[str] = []
    for match in _NUMBER.finditer(_LIST_MARKER.sub(" ", answer)):
        if not _supported_number(match.group(0), known, small_free):
            missing.append(match.group(0))
    for match in _WORD.finditer(answer):
        word = match.group(0).strip("'-")
        lowered = word.lower()
        singular = lowered[:-1] if lowered.endswith("s") else lowered
        if len(word) < 2 or lowered in allowed or singular in allowed or lowered in haystack:
            continue
        missing.append(word)
    return list(dict.fromkeys(missing))


def computed_figures(outputs: list[str]) -> list[float]:
    """What an answer may compute from rows it was given: the total and the mean of each column whose every
    value is a number ("on average, how many people live in a country of X" over one row per country)."""
    figures: list[float] = []
    for output in outputs:
        parsed = _rows(output)
        if parsed is None or len(parsed[1]) < 2:
            continue
        rows = [row for row in parsed[1] if isinstance(row, list)]
        for column in range(min((len(row) for row in rows), default=0)):
            values = [row[column] for row in rows]
            if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
                figures += [float(sum(values)), sum(values) / len(values)]
    return figures


def is_single_aggregate(outputs: list[str]) -> bool:
    """The results are graph rows, one row in all, holding at least one figure (count, sum, average...)."""
    parsed = [_rows(o) for o in outputs]
    if not parsed or any(p is None for p in parsed):
        return False
    rows = [row for p in parsed if p is not None for row in p[1]]
    return len(rows) == 1 and any(isinstance(v, (int, float)) and not isinstance(v, bool) for v in rows[0])


# Small numbers as an answer or a question spells them ("no invoices", "the three largest").
SPELLED_NUMBERS = {
    "zero": 0, "no": 0, "none": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
    "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip
_SPELLED_FIGURE = re.compile(rf"\b(?:{'|'.join(SPELLED_NUMBERS)})\b", re.IGNORECASE)


def states_row_figure(answer: str, outputs: list[str]) -> bool | None:
    """For one row of figures (an aggregate: a count, a total, a distance), whether the answer states one of
    them, as digits (rounded as written) or a small number spelled out; None for any other results."""
    if not is_single_aggregate(outputs):
        return None
    row = next(row for output in outputs if (parsed := _rows(output)) for row in parsed[1])
    values = [float(v) for v in row if isinstance(v, (int, float)) and not isinstance(v, bool)]
    written = [m.group(0) for m in _NUMBER.finditer(_LIST_MARKER.sub(" ", answer))]
    if any(_supported_number(figure, values, small_free=False) for figure in written):
        return True
    return any(float(SPELLED_NUMBERS[m.group(0).lower()]) in values for m in _SPELLED_FIGURE.finditer(answer))


def holds_nothing(rows: list[list[Any]]) -> bool:
    """No rows, or the one row an aggregate returns over nothing matched (every value 0, null or empty):
    `count(o)` of a supplier that does not exist is [[0]], not an answer about it."""
    if not rows:
        return True
    return len(rows) == 1 and all(value in (0, None, "", [], {}) for value in rows[0])


# An answer that says the results lack what was asked ("X is not listed in the results", "the data does not
# show ...", "cannot be determined"): said about the evidence, not about the things in it, so "PO-1 does not
# include a pump" is no decline.
_EVIDENCE = r"(?:the\s+)?(?:query\s+)?(?:results?|data|rows|information|records|graph|output|evidence)"
_DECLINE = re.compile(
    rf"\bnot\s+(?:listed|found|shown|included|present|mentioned|provided|given|specified|available)\s+in\s+{_EVIDENCE}"
    rf"|\b{_EVIDENCE}\s+(?:do|does|did)\s+not\s+(?:contain|include|show|list|mention|provide|specify|indicate|say)"
    r"|\b(?:cannot|can\s*not|could\s+not|unable\s+to|not\s+possible\s+to)\s+(?:be\s+)?(?:determined?|identif\w*|answer\w*)"
    r"|\bno\s+(?:information|data|details)\s+(?:about|on|regarding|for|is|are|was)\b",
    re.IGNORECASE,
)


def declines(answer: str, outputs: list[str]) -> bool:
    """The answer says the results do not hold what was asked, though some graph result holds rows: the
    rows answer another question (or the writer missed them), so the answer is no answer."""
    if not _DECLINE.search(answer):
        return False
    parsed = [_rows(o) for o in outputs]
    return any(p is not None and not holds_nothing(p[1]) for p in parsed)


def absence_answer(outputs: list[str]) -> str | None:
    """The answer when every result is an empty graph result (or an aggregate over nothing) and some name the
    question asks about exists nowhere in the graph: it says so, and nothing else (a written answer here
    invents, or answers as if the thing existed: "X does not have a capital"). None otherwise."""
    parsed = [_rows(o) for o in outputs]
    if not parsed or any(p is None or not holds_nothing(p[1]) for p in parsed):
        return None
    absent = list(dict.fromkeys(a for p in parsed if p is not None for a in p[2]))
    if not absent:
        return None
    names = ", ".join(f"'{a}'" for a in absent)
    return (
        f"The knowledge graph has nothing named {names}: no stored value is or contains "
        f"{'that name' if len(absent) == 1 else 'those names'}, so there is no such entity to answer about."
    )


def compose_from_rows(question: str, outputs: list[str]) -> str:
    """An answer made of the results themselves, for when the written one cannot be verified: what the
    graph returned, or plainly that it returned nothing (and which names exist nowhere)."""
    parts: list[str] = []
    for output in outputs:
        parsed = _rows(output)
        if parsed is None:  # a text result: it is its own evidence
            parts.append(output.strip()[:TEXT_CHARS])
            continue
        columns, rows, absent = parsed
        if absent:
            names = ", ".join(f"'{a}'" for a in absent)
            parts.append(f"The knowledge graph has nothing named {names}, so there is no such entity to answer about.")
        elif not rows:
            parts.append("The knowledge graph holds no records that match the question.")
        else:
            lines = [
                "; ".join(f"{c}: {show_value(v)}" for c, v in zip(columns, row, strict=False))
                for row in rows[:COMPOSED_ROWS]
            ]
            # How many rows came back is said: for "how many ..." over a list of distinct things, it is the answer.
            shown = f", the first {COMPOSED_ROWS} shown" if len(rows) > COMPOSED_ROWS else ""
            parts.append(
                f"From the knowledge graph, {len(rows)} row{'s' if len(rows) != 1 else ''}{shown}:\n"
                + "\n".join(f"- {line}" for line in lines)
            )
    return "\n\n".join(parts) or "The results do not answer the question."


def _rows(output: str) -> tuple[list[str], list[list[Any]], list[str]] | None:
    try:
        data = json.loads(output)
    except (json.JSONDecodeError, TypeError):
        return None
    if not isinstance(data, dict) or "rows" not in data:
        return None
    absent = data.get("names_not_in_the_graph", data.get("absent")) or []  # "absent" in older results
    return [str(c) for c in data.get("columns", [])], list(data["rows"]), [str(a) for a in absent]


def show_value(value: Any) -> str:
    """A row value as an answer writes it (lists and maps as JSON)."""
    return json.dumps(value, default=str) if isinstance(value, (dict, list)) else str(value)
