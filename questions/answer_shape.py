"""What shape of answer a question asks for, read from its English function words alone: a count ("how many"),
a total, an average, a largest or smallest figure, the thing with the largest or smallest figure, the things
that reach the most, the number of relationships between two things, a property's value, or names. Also the
property keys its words name ("the total population", "an area greater than 200000") and a comparison with a
figure it gives. Nothing here knows a graph or a domain: the words are English's, the keys the live schema's.

The shapes come out most likely first; a program for each is enumerated (cypher/programs.py), so a misreading
costs rank, not the answer. Pure functions."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from cypher.intent import COUNTING_COMPARATIVES, Contrast
from questions.asked_for import schema_words
from questions.figures import MAGNITUDES, figures_said
from questions.named_terms import singular

# Each cue is searched in the lower-cased question with its names taken out.
_PATH_LENGTH = re.compile(
    r"\b(?:fewest|least|minimum|smallest|shortest)\b.{0,30}\b(?:relationships?|steps?|hops?|links?|edges?)\b"
    r"|\bhow many\s+(?:relationships?|steps?|hops?|links?|edges?)\b.{0,40}\b(?:shortest|between)\b"
    r"|\bshortest\s+(?:path|route|connection|chain)\b.{0,30}\b(?:length|long|steps?|relationships?|hops?)\b"
    r"|\b(?:length|distance)\s+of\s+the\s+shortest\b"
)
_TWO_ENDS = re.compile(r"\bbetween\b|\bfrom\b.*\bto\b")  # a length is between two things
_COUNT = re.compile(r"\bhow many\b|\bnumber of\b|\bcount\b")
_SUM = re.compile(r"\b(?:total|sum|combined|altogether|in all)\b")
_AVERAGE = re.compile(r"\b(?:average|mean)\b")
# The superlatives of the comparatives below (a contrast of two): "the densest element", "the cheapest item".
_HIGH = re.compile(
    r"\b(?:highest|largest|biggest|greatest|most|maximum|max|top|longest|oldest|heaviest|densest|tallest|widest|"
    r"deepest|richest|hottest|warmest|costliest|priciest|busiest|fastest|latest)\b"
)
_LOW = re.compile(
    r"\b(?:lowest|smallest|least|fewest|minimum|min|shortest|youngest|lightest|earliest|soonest|cheapest|"
    r"poorest|coldest|coolest|narrowest|slowest)\b"
)
# A superlative over a count: "the most relationships", "the largest number of", "the fewest links".
_RANKED_BY_COUNT = re.compile(
    r"\b(?:most|fewest|least|largest number of|highest number of|smallest number of|lowest number of|"
    r"greatest number of|more|fewer)\b(?:\s+\w+){0,4}?\s+(?:relationships?|links?|connections?|\w+s|people|men|"
    r"women|children)\b"
)
# How many a ranking asks for: "the 3 highest", "top 5", "the five biggest", "the 5 time zones with the most".
_TOP = re.compile(
    r"\b(?:top\s+)?(\d{1,3}|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\s+(?:[\w-]+\s+){0,4}?"
    r"(?:with\s+the\s+)?(?:highest|largest|biggest|greatest|most|longest|oldest|heaviest|lowest|smallest|least|"
    r"fewest|shortest|youngest|lightest)\b"
)
MAX_TOP = 100  # more than this is no top-N
_THING_ASKED = re.compile(r"^\s*(?:which|who|whom|name|list|give|tell me which|find)\b|\bwhich\b")
_VALUE_ASKED = re.compile(r"^\s*(?:what|when|where|tell me the|give the|show the)\b")
_COMPARISONS = (
    (re.compile(r"\b(?:at least|no (?:less|fewer) than|or more)\b"), ">="),
    (re.compile(r"\b(?:at most|no more than|or (?:less|fewer))\b"), "<="),
    (re.compile(r"\b(?:greater|more|larger|higher|bigger|older|longer|over|above|exceeds?|exceeding|after)\b"), ">"),
    (re.compile(r"\b(?:less|fewer|smaller|lower|younger|shorter|under|below|before)\b"), "<"),
    (re.compile(r"\b(?:equal to|exactly|equals|just|only)\s+$"), "="),
)
_THRESHOLD = re.compile(r"\b(?:at least|at most|no (?:more|less|fewer) than|(?:more|less|fewer) than)\b")
_FIGURE_THEN_CUE = re.compile(r"\s+or\s+(more|less|fewer)\b")
# Small numbers people spell out after a comparison word ("at least two", "more than ten").
_SPELLED_NUMBERS = {
    w: str(n) for n, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())
} | {"twenty": "20", "thirty": "30", "forty": "40", "fifty": "50", "hundred": "100", "dozen": "12"}
# "the one coded LXA", "no one", "which one": a pronoun, no number.
_SPELLED = re.compile(
    r"(?<!\bthe )(?<!\bthis )(?<!\bthat )(?<!\bno )(?<!\bwhich )(?<!\beach )(?<!\bany )(?<!\bevery )"
    r"\b(?:" + "|".join(_SPELLED_NUMBERS) + r")\b"
)
# What may stand between a compared figure and the things it counts: "at least 4 of the events", "more than 3
# open invoices", "12 or more different languages".
_COUNT_FILLER = frozenset("of the other different distinct or more less fewer separate kinds kind types type".split())
COUNT_REACH = 4  # words after the figure the counted noun may come
# A question that asks for what lacks something: "no vendor offers", "aren't tied to any city", "never".
_NEGATED = re.compile(r"\b(?:no|not|never|without|nobody|none|nothing|lack|lacks|lacking|missing)\b|n't\b")
_NOT_NEGATION = re.compile(r"\bno (?:more|less|fewer|longer)\b|\bnot only\b")
# A comparative that sets two named things against each other ("which has more people, A or B", "is A bigger
# than B", "was A found before B"), with the side that wins: the larger measure, or the smaller.
_CONTRAST_HIGH = re.compile(
    r"\b(?:more|greater|larger|bigger|higher|heavier|denser|longer|later|after|taller|wider|deeper|richer|"
    r"hotter|warmer|costlier|pricier|older|busier|faster)\b"
)
_CONTRAST_LOW = re.compile(
    r"\b(?:fewer|less|smaller|lower|lighter|shorter|earlier|sooner|before|younger|cheaper|poorer|colder|"
    r"cooler|narrower|slower)\b"
)
_AGED = frozenset({"older", "younger"})
_WHETHER = re.compile(r"^\W*(?:is|are|was|were|does|do|did|has|have|had|can|could|will|would)\b")
_EITHER = re.compile(r"\bor\b")
# How two named things combine: what both reach, what one reaches and the other does not, what joins them.
_COMBINES = (
    ("shared", re.compile(r"\b(?:both|share[sd]?|sharing|in common|also|as well as|each of|the same)\b")),
    ("excluded", re.compile(r"\b(?:not|n't|but not|unlike|except|excluding|without|other than|only)\b|n't\b")),
    (
        "connection",
        # "how is A connected to B", "how are A and B related": a how-question of being joined; "which X is A
        # connected to through R" asks what A reaches, not what joins it to another.
        re.compile(
            r"\b(?:connects?|connecting|links?|linking|linked|joins?|joining|between|through which)\b|"
            r"^\W*how\b.*\b(?:connected|related|tied)\b"
        ),
    ),
)


def form_cued(word: str, kind: str) -> bool:
    """Whether `word` is one of the cues for a program form: a comparison ("greater"), or a way two named things
    combine ("share": shared, "except": excluded, "links": connection)."""
    if kind == "comparison":
        return any(cue.fullmatch(word) for cue, _ in _COMPARISONS)
    return any(cue.fullmatch(word) for name, cue in _COMBINES if name == kind)


# A noun shares a relationship's stem on this many letters: "deliveries" and DELIVER_TO, "orders" and ORDERED.
REL_STEM = 5
# The words of relationship types that join, not name, what is done ("in", "to", "has"): no stem to share.
_JOINING_WORDS = frozenset("in to of by on at for from has have is with".split())
# The words that say what shape of answer is asked, never what it is about: none of them hints a label or a
# relationship type ("count" is no sign of a Country, nor "number" of a PhoneNumber).
SHAPE_WORDS = frozenset(
    "count number many total sum combined average mean highest largest biggest greatest most maximum lowest "
    "smallest least fewest minimum list name give tell show find relationship step hop link edge shortest "
    "fewest longest oldest youngest".split()
)


@dataclass(frozen=True)
class AnswerShape:
    """The answers (cypher/intent.py's ANSWERS and `path_length`) the question may ask for, most likely first;
    the property keys its words name, in order; a comparison (operator, figure) with a figure it gives."""

    answers: tuple[str, ...]
    keys: tuple[str, ...]
    comparison: tuple[str, str] | None
    combines: tuple[str, ...] = ()  # walk kinds its words ask of two named things: shared, excluded, connection
    # The noun whose things the compared figure counts ("at least 4 languages": "languages"), "" when it
    # compares a property.
    counted: str = ""
    negated: bool = False  # its words ask for what lacks something ("no supplier", "never", "without")
    denied: str = ""  # the words after the first that denies ("no vendor offers": "vendor offers")
    contrast: Contrast | None = None  # two named things set against each other (cypher/intent.py)
    # The comparative word of a contrast ("bigger", "more"): a key sharing its stem is the measure ("denser":
    # density); only "more", "fewer" and "less" can count things.
    contrasted_by: str = ""
    stated: tuple[tuple[str, str], ...] = ()  # (key, figure) a figure after a key's word gives: "code 06037"
    ranked_by: str = ""  # the plural a ranking counts: "airports" of "the time zones with the most airports"
    top: int = 0  # how many a ranking asks for ("the 3 highest"); 0: not said
    whether: bool = False  # it opens as a yes or no question ("does A border B", "is A in B") and contrasts nothing
    # The key the whole sentence means when its words name none ("how high": elevation_ft), from the sentence
    # vectors (questions/meant_keys.py); set by the caller that has them.
    meant: tuple[str, ...] = ()


def named_keys(text: str, keys: Sequence[str]) -> tuple[str, ...]:
    """The property keys whose words the text uses ("population", "area code" for `area_code`), in the
    order the text first does, the longer first where two start together ("mass number": `mass_number`, then
    `mass`); a key of several words needs them all, in order. A first word that asks for a shape is the
    question's verb ("Name the ...", "List ..."), never a key; another may be ("ICAO code for LHR?")."""
    words = _after_verb([singular(w) for w in re.findall(r"[a-z0-9]+", text.lower())])
    joined = " " + " ".join(words) + " "
    found: list[tuple[int, int, str]] = []
    for key in keys:
        parts = [singular(w) for w in schema_words(key).split()]
        phrase = " ".join(parts)
        at = joined.find(" " + phrase + " ") if phrase else -1
        if at >= 0:
            found.append((at, -len(phrase), key))
        elif len(parts) >= 3 and (spread := _spread(words, parts)) is not None:
            found.append((len(" ".join(words[:spread])) + 1, -len(phrase), key))
    return tuple(key for _, _, key in sorted(found))


def _after_verb(words: list[str]) -> list[str]:
    """The words after a first word that asks for a shape of answer ("name", "list", "count"); all of them
    when the first word is another ("population of France?")."""
    return words[1:] if words and words[0] in SHAPE_WORDS else words


KEY_SPREAD = 6  # words a key of several words may be spread over ("lead time on Solvent Pro, in days")


def _spread(words: Sequence[str], parts: Sequence[str]) -> int | None:
    """Where the key's words are said in order, its first two together, within KEY_SPREAD words ("lead time
    ... in days" for `lead_time_days`): the index of its first word, else None."""
    for i in range(len(words) - 1):
        if words[i : i + 2] != list(parts[:2]):
            continue
        at, j = i + 2, 2
        while j < len(parts) and at < min(len(words), i + KEY_SPREAD + len(parts)):
            j += words[at] == parts[j]
            at += 1
        if j == len(parts):
            return i
    return None


STATED_REACH = 2  # words between a key's word and the figure it states ("FIPS code 06037", "number 74")


def stated_figures(text: str, keys: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """(key, figure) for each figure the text gives right after a word of a key, with no comparison word
    between: "the FIPS code 06037" states `fips`, "number 74" states each key ending in "number". The graph
    says which key holds it; a compared figure ("population over 5 million") is comparison_at's."""
    found: list[tuple[str, str]] = []
    words = {key: {singular(w) for w in schema_words(key).split()} for key in keys}
    for start, _, figure in figures_said(text):
        # A first word asking for a shape is the question's verb ("Name the 3 ..."), never a key.
        before = _after_verb([singular(w) for w in re.findall(r"[a-z0-9]+", text[:start])])[-STATED_REACH - 1 :]
        if not before or any(cue.search(" ".join(before)) for cue, _ in _COMPARISONS):
            continue
        said = set(before)
        # Keys said whole ("fips") before keys one of whose words is said ("code" of `area_code`).
        whole = [key for key in keys if words[key] and words[key] <= said]
        for key in whole or [key for key in keys if words[key] & said]:
            if (key, figure) not in found:
                found.append((key, figure))
    return tuple(found)


def _compared_figures(text: str) -> list[tuple[int, int, str]]:
    """Each figure with its place: digits (a magnitude word applied), and small numbers spelled out."""
    spelled = [(m.start(), m.end(), _SPELLED_NUMBERS[m.group()]) for m in _SPELLED.finditer(text)]
    return sorted([*figures_said(text), *spelled])


def comparison_at(text: str) -> tuple[str, str, int] | None:
    """(operator, figure, where the figure ends) for "greater than 200000", "at least 3", "before 1990", "over
    100 million"; the comparison word must come before the figure, within a few words."""
    for start, end, figure in _compared_figures(text):
        before = text[max(0, start - 40) : start]
        for cue, operator in _COMPARISONS:
            if cue.search(before):
                return operator, figure, end
        after = _FIGURE_THEN_CUE.match(text, end)  # "12 or more languages", "3 or fewer"
        if after is not None:
            return (">=" if after.group(1) == "more" else "<="), figure, after.end()
    return None


def comparison(text: str) -> tuple[str, str] | None:
    """(operator, figure) of comparison_at."""
    found = comparison_at(text)
    return None if found is None else found[:2]


def _thing_word(word: str, label_words: set[str], rel_words: set[str] | frozenset[str]) -> bool:
    """A plural noun that names a kind of thing the schema has, or what one of its relationships does."""
    nouns = {singular(word), word[:-1]}
    if nouns & (label_words | {"relationship", "link", "connection"}):
        return True
    return any(len(w) >= REL_STEM and n[:REL_STEM] == w[:REL_STEM] for n in nouns for w in rel_words)


def counted_after(
    text: str, end: int, label_words: set[str], rel_words: set[str] | frozenset[str], keys: Sequence[str] = ()
) -> str:
    """The noun after a compared figure (ending at `end`) that names the things counted ("4 languages", "7 of
    the events", "3 open invoices"); "" when the figure is a property's ("100 million inhabitants")."""
    key_words = {singular(w) for key in keys for w in schema_words(key).split()}
    if text[:end].split()[-1:] and text[:end].split()[-1] in MAGNITUDES:
        return ""  # "100 million people": a measure said in round words, not things a graph holds one by one
    after: list[str] = re.findall(r"[a-z]+", text[end:])
    one = text[:end].split()[-1:] in (["1"], ["one"])  # "just one other family": a count of one is singular
    for word in after[:COUNT_REACH]:
        if word in _COUNT_FILLER:
            continue
        if (singular(word) == word and not one) or singular(word) in key_words:
            continue  # a count of things is a plural; a property's own word is no kind of thing
        if _thing_word(word, label_words, rel_words):
            return word
    return ""


def contrast_at(text: str) -> tuple[Contrast, str, int] | None:
    """The contrast of two things the words set against each other, its comparative word and where that word
    ends: asked yes or no when the question opens as one and says "than" (or "before"/"after"), asked which
    when it offers a choice ("A or B"). None with a figure compared: "more than 30" is a threshold."""
    if comparison_at(text) is not None:
        return None
    found = sorted(
        (m.start(), m.end(), m.group(), cue is _CONTRAST_HIGH)
        for cue in (_CONTRAST_HIGH, _CONTRAST_LOW)
        for m in cue.finditer(text)
    )
    if not found:
        return None
    _, end, word, higher = found[0]
    whether = bool(_WHETHER.search(text)) and bool(re.search(r"\bthan\b|\bbefore\b|\bafter\b", text))
    if not whether and not _EITHER.search(text):
        return None
    return Contrast(whether, higher, word in _AGED), word, end


DENIED_REACH = 6  # words after a denial that may say what is lacked


def denial(text: str) -> tuple[bool, str]:
    """Whether the words ask for what lacks something (not "no more than", "not only"), and the words after
    the first that denies: what is lacked is said there."""
    plain = _NOT_NEGATION.sub(" ", text)
    found = _NEGATED.search(plain)
    if found is None:
        return False, ""
    return True, " ".join(re.findall(r"[a-z]+", plain[found.end() :])[:DENIED_REACH])


def without_key_phrases(text: str, keys: Sequence[str]) -> str:
    """The text without the phrases of the keys it names in two words or more: "the mass number of" reads a
    property, not a count, and "discovery year" hints no DISCOVERED_BY."""
    for key in keys:
        parts = schema_words(key).split()
        if len(parts) > 1:
            text = re.sub(r"\b" + r"\s+".join(re.escape(p) + "s?" for p in parts) + r"\b", " ", text)
    return text


def _counts_things(text: str, label_words: set[str], rel_words: frozenset[str] | set[str] = frozenset()) -> bool:
    """A superlative over a count: "the most relationships", "the largest number of", "the most countries"
    (a kind of thing the schema has), "the most deliveries" (what a relationship the schema has, DELIVER_TO,
    does), not "the largest population"."""
    for found in _RANKED_BY_COUNT.finditer(text):
        plural = found.group().split()[-1]  # "movies": singular() reads "movy", so its stem is tried too
        if "number of" in found.group() or _thing_word(plural, label_words, rel_words):
            return True
    return False


def _names_kind(after: str, label_words: set[str]) -> bool:
    """Whether the word after a superlative is a label's word ("densest element", "highest airports")."""
    following = after.split()[:1]
    return bool(following) and singular(following[0].strip("?.,;:!")) in label_words


def answer_shape(
    question: str,
    keys: Sequence[str],
    asks_for_thing: bool,
    labels: Sequence[str] = (),
    rel_types: Sequence[str] = (),
) -> AnswerShape:
    """The shapes `question` (its names taken out) may ask for; `keys`: every property key of the schema;
    `asks_for_thing`: the question names a label after "which"/"what" (it wants things, not a figure);
    `labels`, `rel_types`: the schema's labels and relationship types."""
    text = " ".join(question.lower().split())
    label_words = {singular(w) for label in labels for w in schema_words(label).split()}
    rel_words = {w for t in rel_types for w in schema_words(t).split() if w not in _JOINING_WORDS}
    named = named_keys(text, keys)
    compared_at = comparison_at(text)
    compared = None if compared_at is None else compared_at[:2]
    counted = "" if compared_at is None else counted_after(text, compared_at[2], label_words, rel_words, named)
    thing = asks_for_thing or bool(_THING_ASKED.search(text))
    shapes: list[str] = []
    if _PATH_LENGTH.search(text) and _TWO_ENDS.search(text):
        shapes.append("path_length")
    high, low = _HIGH.search(text), _LOW.search(text)
    # "highest population" ranks by a key the question names; "the most relationships" ranks by a count.
    # "at least 100 cities" is a threshold, no ranking by a count
    by_count = _counts_things(_THRESHOLD.sub(" ", text) if compared else text, label_words, rel_words)
    if _SUM.search(text):
        shapes.append("sum")
    if _AVERAGE.search(text):
        shapes.append("average")
    if (high or low) and not compared:
        first_high = high is not None and (low is None or high.start() < low.start())
        # "the densest element": a superlative of a kind of thing asks for the thing, not its figure
        said = high if first_high else low
        thing = thing or (said is not None and _names_kind(text[said.end() :], label_words))
        if by_count:
            shapes += ["most_connected", "least_connected"][:: 1 if first_high else -1]
        ranked = ["highest", "lowest"] if first_high else ["lowest", "highest"]
        extreme = ["max", "min"] if first_high else ["min", "max"]
        top = _top(text)  # "the 3 biggest": several things, never one figure
        shapes += [*ranked, *extreme] if thing or top else [*extreme, *ranked]
    if _COUNT.search(without_key_phrases(text, named)) and not by_count and "path_length" not in shapes:
        shapes.insert(0, "count")  # "how many", "the number of": a count before any figure it might rank
    if _AVERAGE.search(text) and _COUNT.search(text) and not by_count:
        shapes.insert(0, "average_reached")  # "on average, how many counties does a state have"
    if named and _VALUE_ASKED.search(text) and not shapes:
        shapes.append("value")
    shapes.append("names")
    if "value" not in shapes:
        shapes.append("value")
    if "count" not in shapes:
        shapes.append("count")
    combines = tuple(
        kind
        for kind, cue in _COMBINES
        if cue.search(text) and not (kind == "connection" and "path_length" in shapes)  # "between": a length
    )
    negated, denied = denial(text)
    contrasted = contrast_at(text)
    contrast, contrasted_by = (None, "") if contrasted is None else contrasted[:2]
    if contrasted is not None and contrasted_by in COUNTING_COMPARATIVES:
        counted = counted_after(text, contrasted[2], label_words, rel_words, named)
    whether = contrast is None and bool(_WHETHER.search(text))
    return AnswerShape(
        tuple(dict.fromkeys(shapes)),
        named,
        compared,
        combines,
        counted,
        negated,
        denied,
        contrast,
        contrasted_by,
        stated_figures(text, keys) if compared is None else (),
        whether=whether,
        top=_top(text) if (high or low) and not compared else 0,
        ranked_by=_ranked_by(text, label_words, rel_words) if by_count else "",
    )


def _ranked_by(text: str, label_words: set[str], rel_words: frozenset[str] | set[str]) -> str:
    """The plural a superlative over a count counts ("airports" of "with the most airports")."""
    for found in _RANKED_BY_COUNT.finditer(text):
        plural = found.group().split()[-1]
        if _thing_word(plural, label_words, rel_words):
            return plural
    return ""


def _top(text: str) -> int:
    """How many a ranking asks for, from "the 3 highest", "top five", "the 5 time zones with the most"."""
    found = _TOP.search(text)
    if found is None:
        return 0
    said = found.group(1)
    number = int(said) if said.isdigit() else int(_SPELLED_NUMBERS[said])
    return number if 1 < number <= MAX_TOP else 0
