"""Judging an answer against its gold, from the text alone: the agent's own confidence line is cut off
first, so what is judged is what the answer claims. Strict on purpose: a non-answer is wrong, a list that
names things outside the answer set is wrong, and "does not exist" must be said, not implied.

Pure functions; bench/kgqa/questions.py describes the gold kinds."""

from __future__ import annotations

import re
import unicodedata
from datetime import date as Date
from typing import Any

from bench.kgqa.questions import Gold

_CONFIDENCE = re.compile(r"^\s*Confidence:\s*(?P<value>[01](?:\.\d+)?)?.*$", re.MULTILINE)

# A declared non-answer (the agent's own wording for "nothing usable", and the usual ones): always wrong.
_NON_ANSWER = re.compile(
    r"could not establish an answer|\bi (?:do not|dont) know\b|\b(?:cannot|can ?not|unable to) "
    r"answer\b|\bnot enough information\b|\binsufficient information\b"
)
# Saying that the asked-about thing does not exist.
_ABSENT = re.compile(
    r"\b(?:does|do|did|is|are|was|were) not (?:exist|appear|seem to exist)|\bdoesnt (?:exist|appear)|\bdont exist"
    r"|\bnot (?:exist|existing)\b|\bnon ?existent\b|\bno such\b|\bnot (?:been )?found\b"
    r"|\b(?:could ?not|couldnt|can ?not|cant|do not|dont|did not|didnt) (?:find|locate|be found)"
    r"|\bunable to (?:find|locate)\b|\b(?:isnt|wasnt|arent|werent) (?:found|listed|present|in the)\b"
    r"|\bthere (?:is|are|was|were) no\b|\bhas no record|\bhas nothing (?:named|called)|\bholds? no\b"
    r"|\bno (?:record|records|entry|entries|data|information|match|matches|results?|such entity)\b"
    r"|\bno (?:[a-z]+ ){0,3}(?:named|called|with the (?:name|code|id|number))\b"
    r"|\bnot (?:in|present in|listed in|recorded in|part of) the (?:knowledge )?(?:graph|data|database|records)"
    r"|\bis not (?:a |an )?(?:known|existing|valid|recognized|recognised)\b|\bunknown\b"
    r"|\b(?:is|are) absent\b|\bmissing from\b|\bnot present\b"
    r"|\bno(?: [a-z0-9]+){1,6} (?:was |were |is |are |could be |can be )?(?:found|located|exists?)\b"
    r"|\b(?:doesnt|does not|dont|do not) have any (?:record|records|data|information|entry|entries)\b"
)
_NUMBER_WORDS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve "
        "thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
}
_SCALE = {"thousand": 1e3, "million": 1e6, "millions": 1e6, "billion": 1e9, "billions": 1e9}
_ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_IDENTIFIER = re.compile(r"\b[A-Za-z]+-[A-Za-z0-9-]*\d[A-Za-z0-9-]*")  # PO-20240001, SKU-0007, WH-01
_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?!\.?\d)(?:\s*(thousand|millions?|billions?)\b)?")
_ORDINAL = re.compile(r"(?<=\d)(?:st|nd|rd|th)\b")  # 5th March -> 5 March
_MONTHS = [
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
]


def split_answer(text: str) -> tuple[str, float | None]:
    """The answer without its trailing "Confidence: ..." line, and that confidence (None when the line is
    missing or says "not scored")."""
    matches = list(_CONFIDENCE.finditer(text or ""))
    if not matches:
        return (text or "").strip(), None
    last = matches[-1]
    value = last.group("value")
    return text[: last.start()].strip(), float(value) if value is not None else None


def normalise(text: str) -> str:
    """Lower case, accents and punctuation gone, one space between words: 'São Tomé' == 'sao tome'."""
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    text = text.lower().replace("&", " and ").replace("'", "").replace("’", "")
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text).split())


def _is_code(name: str) -> bool:
    """Upper-case codes (currencies, ISO codes) match only in upper case: 'ALL' is Albania's lek, 'all' is not."""
    return name.isupper() and name.isalnum() and len(name) <= 4


def locate_names(text: str, names: list[str]) -> dict[str, int]:
    """Where each name first occurs in `text` as whole words (an offset into the normalised text; codes
    into the raw text), longest first, each occurrence used once: with 'Papua New Guinea' and 'Guinea' both
    asked, 'Papua New Guinea' alone finds only the first."""
    found: dict[str, int] = {}
    for code in (n for n in names if _is_code(n)):
        m = re.search(rf"(?<![A-Za-z0-9]){re.escape(code)}(?![A-Za-z0-9])", text)
        if m:
            found[code] = m.start()
    haystack = f" {normalise(text)} "
    for name in sorted((n for n in names if not _is_code(n)), key=lambda n: -len(normalise(n))):
        needle = normalise(name)
        if not needle:
            continue
        pattern = f" {needle} "
        at = haystack.find(pattern)
        if at >= 0:
            found[name] = at
            haystack = haystack.replace(pattern, " " + "\x00" * (len(pattern) - 2) + " ")  # offsets stay put
    return found


def find_names(text: str, names: list[str]) -> set[str]:
    return set(locate_names(text, names))


def extract_numbers(text: str) -> list[float]:
    """Every figure the text states: 1,234.50 / 4.2 / 3 million / twelve. Identifiers (PO-20240001) and
    ISO dates are not figures."""
    text = _IDENTIFIER.sub(" ", _ISO_DATE.sub(" ", text))
    values = []
    for m in _NUMBER.finditer(text):
        value = float(m.group(1).replace(",", "") + (m.group(2) or ""))
        values.append(value * _SCALE.get((m.group(3) or "").lower(), 1))
    if not values:  # "three suppliers"; only without digits, so "one of them has 4" is not a 1
        values = [float(_NUMBER_WORDS[w]) for w in normalise(text).split() if w in _NUMBER_WORDS]
    return values


def _close(found: float, expected: float, gold: Gold) -> bool:
    if gold.get("integer"):
        return abs(found - expected) < 1e-9
    return abs(found - expected) <= float(gold.get("rel_tol", 0.005)) * max(abs(expected), 1e-9)


def _number_ok(text: str, gold: Gold) -> bool:
    expected = float(gold["value"])
    if expected == 0 and re.search(r"\b(?:no|none|zero)\b", normalise(text)):
        return True
    return any(_close(v, expected, gold) for v in extract_numbers(text))


def _spellings(item: str | list[str]) -> list[str]:
    return [item] if isinstance(item, str) else list(item)


def _names_ok(text: str, gold: Gold) -> bool:
    """Every expected name (any one with `match` "any") and no distractor; for a ranking (`topk`) the
    distractors only count when named before the last of the expected names."""
    items = [_spellings(i) for i in gold["items"]]
    distractors = list(gold.get("distractors", []))
    where = locate_names(text, [n for spellings in items for n in spellings] + distractors)
    firsts = [min((where[n] for n in spellings if n in where), default=None) for spellings in items]
    wrong = [where[d] for d in distractors if d in where]
    if gold["kind"] == "topk":
        return all(f is not None for f in firsts) and all(w > max(f for f in firsts if f is not None) for w in wrong)
    if wrong:
        return False
    return any(f is not None for f in firsts) if gold.get("match") == "any" else all(f is not None for f in firsts)


def _date_spellings(iso: str) -> list[str]:
    d = Date.fromisoformat(iso)
    month, short = _MONTHS[d.month - 1], _MONTHS[d.month - 1][:3]
    return [f"{m} {day} {d.year}" for m in (month, short) for day in (d.day, f"{d.day:02d}")] + [
        f"{day} {m} {d.year}" for m in (month, short) for day in (d.day, f"{d.day:02d}")
    ]


def _date_ok(text: str, gold: Gold) -> bool:
    iso = str(gold["value"])
    if iso in text:
        return True
    d = Date.fromisoformat(iso)
    if re.search(rf"\b0?{d.month}/0?{d.day}/{d.year}\b", text):
        return True
    words = " " + " ".join(_ORDINAL.sub("", normalise(text)).split()) + " "
    return any(f" {s} " in words for s in _date_spellings(iso))


def says_absent(text: str) -> bool:
    return bool(_ABSENT.search(normalise(text)))


def is_non_answer(text: str) -> bool:
    return not text.strip() or bool(_NON_ANSWER.search(normalise(text)))


def _absent_ok(text: str, gold: Gold) -> bool:
    if not says_absent(text):
        return False
    if find_names(text, list(gold.get("distractors", []))):
        return False  # a real entity offered in the invented one's place
    if gold.get("forbid_numbers") and any(v != 0 for v in extract_numbers(text)):
        return False  # a figure for something that does not exist
    return not any(re.search(p, text) for p in gold.get("forbid_patterns", []))


# The first word that says yes or no: "No: A supplies 7, B 8", "A does not supply more than B", "Yes, it does".
_YES_NO = re.compile(r"\b(yes|true|correct|indeed|no|not|false|neither|never|none|nor)\b")


def _boolean_ok(text: str, gold: Gold) -> bool:
    m = _YES_NO.search(normalise(text).replace("doesnt", "does not").replace("isnt", "is not"))
    return m is not None and (m.group(1) in ("yes", "true", "correct", "indeed")) == bool(gold["value"])


def _judge(text: str, gold: Gold) -> bool:
    kind = gold["kind"]
    if kind == "boolean":
        return _boolean_ok(text, gold)
    if kind == "all":
        return all(_judge(text, part) for part in gold["parts"])
    if kind == "number":
        return _number_ok(text, gold)
    if kind in ("names", "topk"):
        return _names_ok(text, gold)
    if kind == "date":
        return _date_ok(text, gold)
    if kind == "absent":
        return _absent_ok(text, gold)
    raise ValueError(f"unknown gold kind {kind!r}")


def is_correct(answer_text: str | None, gold: Gold) -> bool:
    """Whether the answer (its "Confidence: ..." line cut off) gives the gold answer; a non-answer never does."""
    body, _ = split_answer(answer_text or "")
    if is_non_answer(body):
        return False
    return _judge(body, gold)


def numbers_in(question: str) -> list[float]:
    """The figures a question states itself (a gold figure among them would be found by an echo)."""
    return extract_numbers(question)


def echoes(question: str, gold: Gold) -> bool:
    """True when an answer could pass by repeating the question: the gold figure or name is in it."""
    if gold["kind"] == "all":
        return any(echoes(question, p) for p in gold["parts"])
    if gold["kind"] == "number":
        return any(_close(v, float(gold["value"]), gold) for v in numbers_in(question))
    if gold["kind"] in ("names", "topk"):
        return bool(find_names(question, [n for item in gold["items"] for n in _spellings(item)]))
    return False


def without_question_names(question: str, gold: Gold) -> dict[str, Any]:
    """The gold with every distractor the question itself names removed: repeating the question is no error."""
    if gold["kind"] == "all":
        return {**gold, "parts": [without_question_names(question, p) for p in gold["parts"]]}
    if "distractors" not in gold:
        return gold
    named = find_names(question, list(gold["distractors"]))
    return {**gold, "distractors": [d for d in gold["distractors"] if d not in named]}
