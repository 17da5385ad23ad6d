"""Grounding: which things a question names, so they can be found in the graph before a query is
written. Names come from the question's own text (quoted strings, identifiers with digits, capitalised
phrases), minus the words of the graph's schema and of the calendar, which name kinds of things or
times, not things. Pure functions: the look-up itself is the graph backend's (backends/grounding.py).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from itertools import takewhile
from typing import Any

from contracts.query_path import Grounding
from contracts.redaction import REDACTED
from cypher.schema_repair import display_property
from cypher.text import STRING_PAIR, blank_strings, labelled_variables, unescaped
from questions.neighbourhood import entity_terms

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
    "today",
    "yesterday",
    "tomorrow",
}
_LEADING = ("the ", "a ", "an ")
MIN_TOKEN = 4  # words shorter than this are too common to find a name by


# Plurals no ending rule reads; "series" and "species" are their own singulars.
_IRREGULAR = {
    "people": "person",
    "persons": "person",
    "children": "child",
    "men": "man",
    "women": "woman",
    "mice": "mouse",
    "geese": "goose",
    "feet": "foot",
    "teeth": "tooth",
    "criteria": "criterion",
    "phenomena": "phenomenon",
    "series": "series",
    "species": "species",
}


def singular(word: str) -> str:
    """An English plural's singular, by its ending ("categories", "boxes", "branches", "orders") or as an
    irregular one ("people", "women")."""
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ses", "xes", "ches", "shes")):
        return word[:-2]
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def word_forms(word: str) -> tuple[str, ...]:
    """A schema word's singular, and the word without its last "s" where that differs ("uses": "us" by the
    rule for "buses", and "use")."""
    singular_form = singular(word)
    plain = word[:-1] if word.endswith("s") and not word.endswith("ss") else word
    return tuple(dict.fromkeys((singular_form, plain)))


def short_inflection(word: str, other: str) -> bool:
    """Whether one word is the other, shorter than MIN_TOKEN, with an English inflection ("use": "used",
    "uses", "using"): the stem is too short to compare by its first letters."""
    short, long = sorted((word, other), key=len)
    if len(short) >= MIN_TOKEN or len(short) < 3:
        return False
    forms = {short + "s", short + "d", short + "ed", short + "es", short + "ing"}
    if short.endswith("e"):
        forms.add(short[:-1] + "ing")
    return long in forms


def _known_words(vocabulary: set[str]) -> set[str]:
    """The schema's words, lower case with singulars, and the parts of its compound identifiers: a question
    says "area km2" for `area_km2` and "purchase order" for `PurchaseOrder`, and "km2" is no name."""
    parts = {p for v in vocabulary for p in re.split(r"[_\s]+|(?<=[a-z0-9])(?=[A-Z])", v) if p and p != v}
    words = {w.lower() for w in vocabulary | parts}
    return words | {singular(w) for w in words}


def _is_vocabulary(term: str, known: set[str]) -> bool:
    """A term made only of schema words (labels, relationship types, property keys; `known`, lower-cased,
    with singulars) or calendar words."""
    words = [w.lower() for w in term.replace("_", " ").split()]
    squashed = re.sub(r"[\s_-]", "", term.lower())
    return (
        squashed in known
        or singular(squashed) in known
        or all(w in known or singular(w) in known or w in _CALENDAR for w in words)
    )


def _only_at_sentence_start(term: str, question: str) -> bool:
    """A single capitalised word that only ever opens a sentence ("Summarize ...", "List ..."): English
    capitalises it anyway, so it is no evidence of a name."""
    if " " in term or any(c.isdigit() for c in term) or _all_capitals(term):
        return False
    spots = [m.start() for m in re.finditer(rf"\b{re.escape(term)}\b", question)]
    return bool(spots) and all(_opens_sentence(question, i) for i in spots)


def _all_capitals(word: str) -> bool:
    """A code written in capitals ("VNKT", "NZ"), which no sentence's opening explains."""
    return len(word) >= 2 and word.isupper()


def _opens_sentence(question: str, at: int) -> bool:
    """Whether only white space lies between `at` and the question's start or a sentence's end. Read back over
    the white space alone: copying the question up to each of a thousand mentions costs its length squared."""
    while at > 0 and question[at - 1].isspace():
        at -= 1
    return at == 0 or question[at - 1] in ".!?:;\n"


def mentions(question: str, vocabulary: set[str]) -> list[str]:
    """The names in a question that should exist in the graph, in the order they appear."""
    found: list[str] = []
    known = _known_words(vocabulary)
    question = question.replace(REDACTED, " ")  # a secret redacted from the question names nothing in the graph
    quoted = {q.lower() for q in re.findall(r"(?<!\w)[\"“']([^\"”']{2,60})[\"”'](?!\w)", question)}
    for term in entity_terms(question):
        if term.lower() not in quoted and _only_at_sentence_start(term, question):
            continue
        lowered = term.lower()
        for article in _LEADING:
            if lowered.startswith(article):
                term = term[len(article) :]
                break
        if term.replace(".", "").replace(",", "").isdigit() or _is_vocabulary(term, known):
            continue
        if not any(term.lower() in f.lower() for f in found):  # not again, nor a piece of an earlier name
            found.append(term)
    return found


MAX_PHRASE_WORDS = 6  # "Democratic Republic of the Congo" is one name, not "Republic of the Congo"
MAX_PHRASES = 400  # runs of words looked up at once: a long question's tail names nothing more
_WORD_AT = re.compile(r"[^\s,;:!?()\[\]{}\"“”|]+")  # a word as written; "|" stands for a redacted secret


def _word_runs(question: str) -> list[tuple[int, str]]:
    """The question's words as written, each with where it starts, with a redacted secret as a break ("|")."""
    text = question.replace(REDACTED, " | ")
    words: list[tuple[int, str]] = []
    for m in re.finditer(r"\||" + _WORD_AT.pattern, text):
        word = m.group().strip(".'’")
        if word:
            words.append((m.start(), word))
    return words


def said_phrases(question: str, vocabulary: set[str], plain_words: Collection[str] = ()) -> list[str]:
    """Runs of one to MAX_PHRASE_WORDS of the question's words, as written, that may be a stored name no
    capital marks ("s-block", "simple cubic", "Period 2") or whose capitals a lower-case word splits ("Bosnia
    and Herzegovina"): not made only of figures, nor only of schema or calendar words, and a single word only
    when it is long (MIN_TOKEN letters) or holds a digit or hyphen. A word opening a sentence with a capital
    starts a run only when it is not one of `plain_words` (lower case: the words English opens a request with,
    "Count the ...", "Which ...") and then as a single word of three letters too ("Tin isotopes: how many?").
    The graph says which are names (backends/grounding.py)."""
    text = question.replace(REDACTED, " | ")
    known = _known_words(vocabulary)
    words = _word_runs(question)
    phrases: dict[str, None] = {}
    for i, (at, first) in enumerate(words):
        opening = first[:1].isupper() and not _all_capitals(first) and _opens_sentence(text, at)
        if opening and (not plain_words or first.lower() in plain_words):
            continue  # "Count the ...": English capitalises a sentence's first word anyway, not all its letters
        for n in range(1, MAX_PHRASE_WORDS + 1):
            run = [w for _, w in words[i : i + n]]
            if len(run) < n or "|" in run or len(phrases) >= MAX_PHRASES:
                break
            figures = [w.replace(".", "").isdigit() for w in run]
            if all(figures) or all(_is_vocabulary(w, known) or w.lower() in _CALENDAR for w in run):
                continue
            shortest = MIN_TOKEN - 1 if opening else MIN_TOKEN
            if n == 1 and len(run[0]) < shortest and not re.search(r"[\d-]", run[0]):
                continue
            phrases.setdefault(" ".join(run))
            phrases.setdefault(owner(" ".join(run)))
    return list(phrases)


# Words after which a noun phrase begins: a determiner ("the euro", "which lanthanides") or a preposition ("pay
# in euros"). A lower-case word elsewhere ("while reading") is an ordinary word, not the place called Reading.
NOUN_OPENERS = frozenset(
    "the a an this these those which what whose any each every all no in on at of by for from with via".split()
)


OPENED_WORDS = 4  # lower-case words after an opener that may be one name ("alkaline earth metals")


def opened_phrases(question: str, vocabulary: set[str]) -> list[list[tuple[str, str]]]:
    """Where a determiner or a preposition opens a noun phrase written in lower case, the runs that may be a
    stored name said so ("the euro", "which alkaline earth metals", "in euros"): for each opening, (the form
    to look up, the run as written), longest first, each run as written and with its last word in the
    singular ("euros": "euro"); not one made only of schema words ("which elements"). For a question that
    writes its other names with capitals (one in lower case is compared in any case throughout)."""
    known = _known_words(vocabulary)
    words = [w for _, w in _word_runs(question)]
    found: list[list[tuple[str, str]]] = []
    for i, word in enumerate(words[:-1]):
        if word.lower() not in NOUN_OPENERS:
            continue
        after = words[i + 1 : i + 1 + OPENED_WORDS]
        lower = list(takewhile(lambda w: w[:1].islower() and w not in NOUN_OPENERS and w != "|", after))
        runs = [" ".join(lower[:n]) for n in range(len(lower), 0, -1)]
        runs = [run for run in runs if not _is_vocabulary(run, known) and len(run) >= MIN_TOKEN - 1]
        forms = [(form, run) for run in runs for form in dict.fromkeys((run, _singular_last(run)))]
        if forms:
            found.append(forms)
    return found


def _singular_last(run: str) -> str:
    head, _, last = run.rpartition(" ")
    return f"{head} {singular(last)}".strip() if len(last) >= MIN_TOKEN else run


def owner(phrase: str) -> str:
    """A phrase without the possessive ending of its last word ("Napoleon's": "Napoleon"); as it is without one."""
    for ending in ("'s", "’s"):
        if phrase.endswith(ending) and len(phrase) > len(ending):
            return phrase[: -len(ending)]
    return phrase


def names_in_lower_case(question: str) -> bool:
    """Whether the question may write its names in lower case: it capitalises no word but its first (ids with
    digits aside: "PAY-00132"), as people typing fast do ("which country is lagos in"). Where it capitalises a
    name, its lower-case words are ordinary words ("discovered by Bo Lund while reading")."""
    words = [w for _, w in _word_runs(question)][1:]
    return not any(w[:1].isupper() and not any(c.isdigit() for c in w) for w in words)


def occurrences(question: str, stored: set[str], any_case: bool = False) -> list[str]:
    """The `stored` phrases the question says, in order, the longest at each place: "beta-plus-delayed proton
    emission" is one name, not "proton emission" as well (unless that is said on its own too). `any_case`:
    `stored` is in lower case, and a phrase is found whatever its case ("france" for France)."""
    words = [w for _, w in _word_runs(question)]
    said: list[str] = []
    i = 0
    while i < len(words):
        for n in range(MAX_PHRASE_WORDS, 0, -1):
            run = words[i : i + n]
            phrase = " ".join(run)
            if len(run) < n or "|" in run:
                continue
            # a stored name said as a possessive ("Napoleon's only scene partner?") is the name
            found = next((p for p in (phrase, owner(phrase)) if (p.lower() if any_case else p) in stored), None)
            if found is not None:
                if found not in said:
                    said.append(found)
                i += n
                break
        else:
            i += 1
    return said


# English endings that make an adjective of a place's or a group's name: "African" (Africa), "European"
# (Europe), "Vietnamese" (Vietnam), "Swedish" (Sweden), "Icelandic" (Iceland), "Iraqi" (Iraq), "Northern"
# (North). Longest first.
_ADJECTIVE_ENDINGS = ("ian", "ean", "ese", "ish", "ern", "ic", "an", "n", "i")
FORMED_EXTRA = 3  # letters a name may have past the stem its adjective keeps ("Ital-ian": "Ital-y")


def name_stems(mention: str) -> list[str]:
    """The stems a capitalised adjective keeps of the name it is formed from, longest first ("Western Asian":
    "Western Asia", "Western Asi"): a stored name that starts with one, and is at most FORMED_EXTRA letters
    longer, is the one the adjective names. None for a word that is no such adjective."""
    head, _, last = mention.rpartition(" ")
    if not last[:1].isupper() or not last.isalpha():
        return []
    stems = [last[: -len(ending)] for ending in _ADJECTIVE_ENDINGS if last.lower().endswith(ending)]
    prefix = f"{head} " if head else ""
    return list(dict.fromkeys(f"{prefix}{stem}" for stem in stems if len(stem) >= MIN_TOKEN - 1))


def name_tokens(mention: str) -> list[str]:
    """The words of a name long enough to find it by when the whole name is not stored as written."""
    return [w for w in mention.replace("-", " ").split() if len(w) >= MIN_TOKEN]


def ignored_names(step_arguments: list[str], grounding: Grounding) -> list[str]:
    """The names the question gives that the graph holds nowhere, when no step uses any of them (not the
    name, nor one of its longer words): such a plan answers some other question ("which country has the code
    ZQV" planned as a list of all countries) and its rows can only be weak evidence. Empty otherwise."""
    if not grounding.unmatched:
        return []
    used = "\n".join(step_arguments).lower()
    for name in grounding.unmatched:
        if name.lower() in used or any(word.lower() in used for word in name_tokens(name)):
            return []
    return list(grounding.unmatched)


def unused_names(query: str, grounding: Grounding) -> list[str]:
    """The names the question gives that the graph holds (found as the name itself) and the query never uses:
    not the name, its stored value, nor one of its longer words. Such a query answers about everything of a
    kind ("the total of unpaid invoices" for "... of Globex Supply"), a sign its rows are not the answer."""
    used = query.lower()
    unused: list[str] = []
    for mention in dict.fromkeys(m.mention for m in grounding.matches if m.same_name()):
        stored = [m.value for m in grounding.matches if m.mention == mention and m.same_name()]
        words = [mention, *stored, *name_tokens(mention)]
        if not any(word.lower() in used for word in words):
            unused.append(mention)
    return unused


SHOWN_PROPERTIES = 12
VALUE_CHARS = 40


@dataclass(frozen=True)
class Neighbours:
    """An entity's neighbours along one relationship type and direction."""

    type: str
    outgoing: bool
    label: str
    count: int
    examples: list[dict[str, Any]]  # a few neighbours' properties


def _value(value: Any) -> str:
    if isinstance(value, str):
        shown = value if len(value) <= VALUE_CHARS else value[:VALUE_CHARS] + "..."
        return "'" + shown + "'"
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value[:3]) + (", ...]" if len(value) > 3 else "]")
    return str(value)


def _example_name(props: dict[str, Any]) -> str | None:
    key = display_property(list(props), "name")
    if key is None:
        key = next((k for k, v in props.items() if isinstance(v, str)), None)
    return None if key is None else _value(props[key])


def describe_entity(label: str, value: str, props: dict[str, Any], neighbours: list[Neighbours]) -> str:
    """One found entity as the planner reads it: its stored properties, then one line per relationship type
    and direction with the neighbours' label, their number and a few names (this shows which property or
    path holds an answer, and in which direction a relationship goes)."""
    shown = ", ".join(f"{k} = {_value(v)}" for k, v in list(props.items())[:SHOWN_PROPERTIES])
    lines = [f"- ({label} '{value}') has {shown}"]
    for n in neighbours:
        arrow = f"-[:{n.type}]->" if n.outgoing else f"<-[:{n.type}]-"
        names = [name for name in (_example_name(e) for e in n.examples) if name]
        more = ", ..." if n.count > len(names) else ""
        example = f": {', '.join(names)}{more}" if names else ""
        lines.append(f"  ({label} '{value}'){arrow}(:{n.label}) {n.count} node{'s' if n.count != 1 else ''}{example}")
    return "\n".join(lines)


def _node(label: str, props: dict[str, Any]) -> str:
    name = _example_name(props)
    return f"({label} {name})" if name else f"(:{label})"


def describe_connection(
    first: str, second: str, paths: list[tuple[list[str], list[dict[str, Any]], list[str]]], max_hops: int
) -> str:
    """How two found entities are connected, for the planner and the answer: the fewest relationships
    between them and the shortest connections (direction ignored), or that none of `max_hops` or fewer
    exists. `paths`: each shortest path's node labels, node properties and relationship types."""
    if not paths:
        return f"- {first} and {second}: no connection of {max_hops} relationships or fewer joins them"
    shown = []
    for labels, props, types in paths:
        hops = [_node(labels[0], props[0])]
        for rel_type, label, node in zip(types, labels[1:], props[1:], strict=True):
            hops.append(f"-[:{rel_type}]-{_node(label, node)}")
        shown.append("".join(hops))
    hops_apart = len(paths[0][2])
    return (
        f"- {first} and {second} are {hops_apart} relationship{'s' if hops_apart != 1 else ''} apart at the "
        f"fewest (shortest path length {hops_apart}), through: " + "; ".join(dict.fromkeys(shown))
    )


def describe_grounding(grounding: Grounding) -> str:
    """For the planner: each name as the graph stores it (label, property, value), and the names found
    nowhere. Empty when the question names nothing."""
    if not grounding.matches and not grounding.unmatched:
        return ""
    lines = []
    others = set(grounding.only_by_words())
    named = [m for m in grounding.matches if m.mention not in others]
    if named:
        lines.append("Names in the question, as the graph stores them (use these exact values):")
    for m in named:
        note = "" if m.how == "exact" else f" (the question says '{m.mention}')"
        lines.append(f"- {m.label}.{m.property} = '{m.value}'{note}")
    for mention in others:
        similar = ", ".join(f"{m.label}.{m.property} = '{m.value}'" for m in grounding.matches if m.mention == mention)
        lines.append(
            f"No stored value is or contains '{mention}'; only other names share a word with it ({similar}): "
            f"they are different things. Match '{mention}' as the question writes it; if it is not "
            "there, the answer is that it does not exist here."
        )
    if grounding.unmatched:
        lines.append(
            "Not found anywhere in the graph, not even in part: "
            + ", ".join(f"'{u}'" for u in grounding.unmatched)
            + ". If the question is about them, the answer is that they do not exist here."
        )
    if grounding.facts:
        lines.append(
            "What the graph stores about them (use it to pick the property or relationship that holds "
            "the answer; the query still reads the answer):"
        )
        lines += grounding.facts
    return "\n".join(lines)


# Possessive (`*+`, `++`): a run of spaces is not tried in every split between `\s*\w*\s*` (time linear in
# the query, which comes from the model).
_INLINE_NODE = re.compile(r"\(\s*+\w*+\s*+:\s*+`?(\w++)`?\s*+\{([^{}]*+)\}")
_PROPERTY_EQUALS = re.compile(r"\b(\w++)\.(\w++)\s*+=\s*+'((?:[^'\\]++|\\.)*+)'")


def named_lookups(query: str) -> list[tuple[str, str, str]]:
    """(label, property, value) for each place the query matches a labelled node's property to a string:
    `(s:Supplier {name: 'X'})` and `s.name = 'X'` with `s` bound to a label."""
    bound = labelled_variables(blank_strings(query))
    found: list[tuple[str, str, str]] = []
    for node in _INLINE_NODE.finditer(query):
        found += [(node.group(1), prop, unescaped(value)) for prop, value in STRING_PAIR.findall(node.group(2))]
    for variable, prop, value in _PROPERTY_EQUALS.findall(query):
        if variable in bound:
            found.append((bound[variable], prop, unescaped(value)))
    return list(dict.fromkeys(found))


def property_comparisons(query: str) -> list[tuple[str, str, str, str]]:
    """(variable, label, property, value) for each `v.prop = 'value'` with `v` bound to a label."""
    bound = labelled_variables(blank_strings(query))
    return [
        (variable, bound[variable], prop, unescaped(value))
        for variable, prop, value in _PROPERTY_EQUALS.findall(query)
        if variable in bound
    ]


def move_comparison(query: str, variable: str, prop: str, value: str, to_variable: str) -> str:
    """The query with `variable.prop = 'value'` compared on `to_variable` instead."""
    literal = re.escape(value).replace("'", "\\\\?'")
    pattern = re.compile(rf"\b{re.escape(variable)}\.{re.escape(prop)}(?=\s*=\s*'{literal}')")
    return pattern.sub(f"{to_variable}.{prop}", query)


def misplaced_name(label: str, prop: str, value: str, grounding: Grounding) -> str | None:
    """Where grounding found `value`, said for the step's reasoning, when it found it and not at label.prop
    (the caller confirms against the graph that label.prop does not hold it)."""
    elsewhere = [
        m for m in grounding.matches if m.value.lower() == value.lower() and (m.label, m.property) != (label, prop)
    ]
    if not elsewhere:
        return None
    where = " and ".join(dict.fromkeys(f"{m.label}.{m.property}" for m in elsewhere))
    return (
        f"no {label} has {prop} = '{value}'; the graph stores '{elsewhere[0].value}' as {where}: match it there "
        "(with that label, and the relationships the schema gives that label)"
    )


def relabel(query: str, label: str, prop: str, value: str, stored_as: str) -> str | None:
    """The query with the node that looks `value` up as `label.prop` relabelled `stored_as` (the one label
    grounding found the value under, on the same property); None when that node cannot be told apart. The
    relationships around it are then the schema check's to correct."""
    literal = re.escape(value).replace("'", "\\\\?'")
    inline = re.compile(
        rf"(\(\s*+\w*+\s*+:\s*+)`?{re.escape(label)}`?"
        rf"(\s*\{{[^{{}}]*\b{re.escape(prop)}\s*:\s*'{literal}')",
        re.IGNORECASE,
    )
    found = list(inline.finditer(query))
    if len(found) == 1:
        m = found[0]
        return f"{query[: m.start()]}{m.group(1)}{stored_as}{m.group(2)}{query[m.end() :]}"
    compared = re.findall(rf"\b(\w+)\.{re.escape(prop)}\s*=\s*'{literal}'", query, re.IGNORECASE)
    if len(set(compared)) != 1:
        return None
    binding = re.compile(rf"(\(\s*{re.escape(compared[0])}\s*:\s*)`?{re.escape(label)}`?(?=[\s){{])")
    if len(binding.findall(blank_strings(query))) != 1:
        return None
    return binding.sub(lambda m: m.group(1) + stored_as, query, count=1)
