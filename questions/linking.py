"""Schema linking by meaning: every content word of a question explained by a part of the schema (a label, a
relationship type, a property key, a stored value), by the names and figures it gives, or recorded as
unexplained. A word is linked by its spelling when it shares a stem with a schema word ("suppliers" and
Supplier), otherwise by meaning: its sentence vector (backends/sentence_encoder.py) close enough to a schema
part's description ("client" and Customer, "vendor" and Supplier), and where the vectors are not sure, by a
judge (tools/link_judge.py). What stays unexplained is what the agent did not understand, and an answer built
without it says so (confidence/evidence.py).

Nothing here knows a graph, a domain or a wording: the function words are English's closed classes and the
words that shape an answer (questions/answer_shape.py). Pure functions; the vectors come from a callable."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from questions.answer_shape import SHAPE_WORDS
from questions.asked_for import schema_words
from questions.named_terms import MIN_TOKEN, short_inflection, singular, word_forms

if TYPE_CHECKING:  # numpy is imported where words are linked: a worker that reads no question never loads it
    import numpy as np
    from numpy.typing import NDArray

TermKind = Literal["label", "relationship", "property", "value"]
Encode = Callable[[Sequence[str]], "NDArray[np.float32]"]

# The cosine similarity at which a word's meaning is taken to be a schema part's. all-MiniLM-L6-v2 puts
# synonyms at 0.5-0.8 ("client"/"customer" 0.61) and unrelated nouns at 0.2-0.4.
LINKED = 0.5
# A pair of adjacent content words is read as one phrase when it is this much closer than either word alone.
PHRASE_GAIN = 0.05
# A part described in its setting (a relationship with the labels it joins) is read a little below its own name,
# so that a noun is linked to the label it names rather than to a relationship one of whose ends it is.
CONTEXT_DISCOUNT = 0.05
# Below this, a link by meaning is not sure enough to stand alone ("state" is nearer Country, 0.58, than the
# Subdivision it means): a judge chooses among the nearest terms (tools/link_judge.py).
SURE = 0.65
# A judge's link is said again in the schema's words only when the part is among this many the vectors put
# nearest the word: on the demo graph the local model linked "placed" (with a supplier) to BILLS and
# "received" to PurchaseOrder, and said again those turned the question into another.
AGREED = 3
NEAR_KEPT = 6  # terms kept per word linked by meaning or unexplained, nearest first: a judge's candidates
MAX_WORDS = 40  # a question longer than this is linked on its first MAX_WORDS content words (time stays bounded)

# English's closed classes (determiners, pronouns, prepositions, conjunctions, auxiliaries, question words) and
# the verbs and adverbs that frame a request: they say how something is asked, never what about.
FUNCTION_WORDS = frozenset(
    """a an the this that these those there here some any each every all both either neither no none not nor
    only just also too very much many more most less least few fewer other another such same own than then
    i me my mine we us our ours you your yours he him his she her hers it its they them their theirs who whom
    whose which what when where why how whether if whereas while as at by for from in into onto of off on out
    over under up down to toward towards with within without about above below after before between among
    through during against across along around beyond via per upon behind near
    and or but so yet because although though
    is are was were be been being am do does did done doing have has had having can could may might must shall
    should will would
    please tell show give list name find get let know see want need like say says said look display return
    thing things one ones kind kinds sort type types something anything everything nothing someone anyone
    ever still already now yet again each altogether overall exactly really actually currently
    yes true false whole entire respective respectively alongside together
    """.split()
)

# Words that say how things in a graph are joined, in any graph: "connected to", "linked by", "the path between",
# "follow ... then ...", "which do you reach", "incoming". Linked when the schema spells them (a CONNECTED_TO
# relationship), otherwise neither linked nor unexplained: the walk's shape, not what it is about.
GRAPH_TALK = frozenset(
    """connect connected connecting connects connection connections link linked linking links path paths reach
    reached reaches reaching reachable follow followed following follows incoming outgoing start starting
    lie lies lying route routes relationship relationships hop hops step steps away directly indirectly""".split()
)

# Numbers spelled out are figures the question gives ("the three largest"), not what it is about.
NUMBER_WORDS = frozenset(
    """zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen
    seventeen eighteen nineteen twenty thirty forty fifty hundred thousand million billion dozen half
    first second third fourth fifth sixth seventh eighth ninth tenth last""".split()
)

_WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")


@dataclass(frozen=True)
class SchemaTerm:
    """A part of the schema a question's words may mean: a label, a relationship type (with the labels it joins),
    a property key (of `owner`, a label) or a stored value (of `owner`, "Label.key")."""

    kind: TermKind
    name: str
    owner: str = ""
    # A property of a relationship type (`owner` is the type): "times" of APPEARS_WITH, not of a label.
    of_relationship: bool = False

    @property
    def words(self) -> str:
        return self.name.lower() if self.kind == "value" else schema_words(self.name)

    def descriptions(self) -> tuple[str, ...]:
        """What the term is called on its own and in its setting: a relationship with the labels it joins, a
        property with its label."""
        if self.kind == "relationship":
            source, _, target = self.owner.partition("->")
            return (self.words, f"{schema_words(source)} {self.words} {schema_words(target)}")
        if self.kind == "property":
            return (self.words, f"{schema_words(self.owner)} {self.words}")
        return (self.words,)


@dataclass(frozen=True)
class Link:
    """The question's `words` read as `term`, by spelling, by meaning (`similarity`: the cosine, 1.0 for
    spelling) or by a model's judgement among the nearest terms (tools/link_judge.py)."""

    words: str
    term: SchemaTerm
    by: Literal["spelling", "meaning", "model"]
    similarity: float


@dataclass(frozen=True)
class Linking:
    links: tuple[Link, ...]
    unexplained: tuple[str, ...]  # content words nothing explains, in the question's order
    # For each word linked by meaning or unexplained, the terms nearest it with their cosines, nearest first.
    near: dict[str, tuple[tuple[SchemaTerm, float], ...]] = field(default_factory=dict)

    def undecided(self) -> tuple[str, ...]:
        """The words whose meaning the vectors do not settle: unexplained, or linked below SURE."""
        weak = [link.words for link in self.links if link.by == "meaning" and link.similarity < SURE]
        return tuple(w for w in self.near if w in weak or w in self.unexplained)

    def decided(self, judged: dict[str, SchemaTerm | None], framing: Iterable[str] = ()) -> Linking:
        """The linking with each `judged` word linked to the term a judge chose, or unexplained (None); the
        `framing` words (how the question is asked, not what about) explained by nothing and left out."""
        framed = set(framing)
        links = [link for link in self.links if link.words not in judged and link.words not in framed]
        links += [Link(word, term, "model", 1.0) for word, term in judged.items() if term is not None]
        unexplained = [
            w
            for w in self.near
            if w not in framed and ((w in self.unexplained and w not in judged) or (w in judged and judged[w] is None))
        ]
        return Linking(tuple(links), tuple(unexplained), self.near)


def schema_terms(
    nodes: Mapping[str, Collection[str]],
    rels: Iterable[tuple[str, str, str]],
    values: Iterable[tuple[str, str, str]] = (),
    rel_keys: Mapping[str, Collection[str]] | None = None,
) -> tuple[SchemaTerm, ...]:
    """The schema's parts as terms: each label, each (source, type, target) relationship, each label's property
    keys, each relationship type's (`rel_keys`), and `values` ((label, key, value) stored values worth
    linking: few distinct, text)."""
    terms: list[SchemaTerm] = [SchemaTerm("label", label) for label in sorted(nodes)]
    terms += [SchemaTerm("relationship", t, f"{a}->{b}") for a, t, b in sorted(set(rels))]
    terms += [SchemaTerm("property", key, label) for label in sorted(nodes) for key in sorted(nodes[label])]
    keyed = rel_keys or {}
    terms += [SchemaTerm("property", key, t, of_relationship=True) for t in sorted(keyed) for key in sorted(keyed[t])]
    terms += [SchemaTerm("value", value, f"{label}.{key}") for label, key, value in values]
    return tuple(dict.fromkeys(terms))


def content_words(text: str, spent: Iterable[str] = ()) -> list[str]:
    """The words of `text` that say what it is about (lower case, in order): not function or shape words, not
    figures, not `spent` words (those of the names and figures the question gives)."""
    spent_words = {w for phrase in spent for w in _WORD.findall(phrase.lower())}
    words = []
    for raw in _WORD.findall(text.lower()):
        word = re.sub(r"['’]s$", "", raw)
        if word in FUNCTION_WORDS or word in NUMBER_WORDS or word in spent_words:
            continue
        if singular(word) in SHAPE_WORDS or word in SHAPE_WORDS:
            continue
        if word.isdigit() or len(word) < 3:  # "s" of a possessive whose name was taken out, "id", "km"
            continue
        words.append(word)
    return words[:MAX_WORDS]


def shared_prefix(word: str, other: str) -> int:
    """How many first letters two words share."""
    shared = 0
    for a, b in zip(word, other, strict=False):
        if a != b:
            break
        shared += 1
    return shared


def stem_shared(word: str, other: str) -> bool:
    """Two words of one stem: equal on all but the last two letters of the shorter, and on MIN_TOKEN or more
    ("border"/"bordering", "supply"/"supplied")."""
    if word == other or short_inflection(word, other):
        return True
    return shared_prefix(word, other) >= max(MIN_TOKEN, min(len(word), len(other)) - 2)


def _spelled(word: str, terms: Sequence[SchemaTerm]) -> SchemaTerm | None:
    """The term one of whose words `word` spells: the one it spells most of ("counties" is County, not Country,
    though both share its stem), the first (labels, then relationships, properties, values) on a tie."""
    w = singular(word)
    best: tuple[int, SchemaTerm] | None = None
    for term in terms:
        parts = [form for part in term.words.split() if len(part) >= 2 for form in word_forms(part)]
        spelled = [shared_prefix(w, part) + (w == part) for part in parts if stem_shared(w, part)]
        if spelled and (best is None or max(spelled) > best[0]):
            best = (max(spelled), term)
    return best[1] if best else None


def link_question(text: str, terms: Sequence[SchemaTerm], encode: Encode | None, spent: Iterable[str] = ()) -> Linking:
    """Every content word of `text` linked to a term, or unexplained. `spent`: the names and figures the
    question gives (explained already). Without `encode`, words are linked by spelling only."""
    words = content_words(text, spent)
    links: list[Link] = []
    open_words: list[tuple[int, str]] = []
    for i, word in enumerate(words):
        term = _spelled(word, terms)
        if term is not None:
            links.append(Link(word, term, "spelling", 1.0))
        elif word not in GRAPH_TALK:
            open_words.append((i, word))
    if not open_words or encode is None or not terms:
        return Linking(tuple(links), tuple(w for _, w in open_words))
    descriptions = [(term, d, i > 0) for term in terms for i, d in enumerate(term.descriptions())]
    term_vectors = encode([d for _, d, _ in descriptions])
    import numpy as np

    discount = np.array([CONTEXT_DISCOUNT if in_context else 0.0 for _, _, in_context in descriptions])
    # Pairs of adjacent open words may mean one part together ("support rep"); a word the schema spells is never
    # paired with its neighbour, which would only borrow its meaning ("warehouse received" reads as Warehouse).
    open_at = dict(open_words)
    pairs = [(i, f"{w} {open_at[i + 1]}") for i, w in open_words if i + 1 in open_at]
    phrases = [w for _, w in open_words] + [p for _, p in pairs]
    similarity = encode(phrases) @ term_vectors.T - discount
    best = {
        phrase: (float(row.max()), descriptions[int(row.argmax())][0])
        for phrase, row in zip(phrases, similarity, strict=True)
    }
    unexplained: list[str] = []
    near: dict[str, tuple[tuple[SchemaTerm, float], ...]] = {}
    used: set[int] = set()
    for i, word in open_words:
        if i in used:
            continue
        score, term = best[word]
        if i + 1 in open_at:
            phrase = f"{word} {open_at[i + 1]}"
            p_score, p_term = best[phrase]
            if p_score >= LINKED and p_score >= max(score, best[open_at[i + 1]][0]) + PHRASE_GAIN:
                score, term, word = p_score, p_term, phrase
                used.add(i + 1)
        if score >= LINKED:
            links.append(Link(word, term, "meaning", round(score, 3)))
        else:
            unexplained.append(word)
        near[word] = _nearest(similarity[phrases.index(word)], [t for t, _, _ in descriptions])
        used.add(i)
    return Linking(tuple(links), tuple(unexplained), near)


def _nearest(row: NDArray[np.float32], owners: Sequence[SchemaTerm]) -> tuple[tuple[SchemaTerm, float], ...]:
    """The NEAR_KEPT terms nearest a phrase (by their nearest description), nearest first."""
    nearest: dict[SchemaTerm, float] = {}
    for k in (-row).argsort():
        nearest.setdefault(owners[int(k)], round(float(row[k]), 3))
        if len(nearest) == NEAR_KEPT:
            break
    return tuple(nearest.items())


def _said_as(term: SchemaTerm, word: str) -> str:
    """The term's words in the place of `word`: a label in the plural where the word was plural."""
    said = term.words
    last = word.split()[-1]
    if term.kind == "label" and singular(last) != last and singular(said) == said:
        said += "s"
    return said


def _agreed(link: Link, linking: Linking) -> bool:
    """A judge's link the sentence vectors agree with: not a relationship (a small model picks the wrong one of
    a verb's joins, and the walk's own evidence reads verbs), and among the AGREED parts nearest the word."""
    nearest = [term for term, _ in linking.near.get(link.words, ())][:AGREED]
    return link.term.kind != "relationship" and link.term in nearest


def canonical_question(question: str, linking: Linking) -> str:
    """The question with each word linked by meaning or by a judge said as the schema says it ("Which clients
    ..." -> "Which customers ..."), so that every later reading, which matches the schema's own words, reads the
    question as the links do. Words linked by spelling, names and everything else stay as they are; a
    relationship the question spells already is not said twice."""
    text = question
    spelled = {link.term for link in linking.links if link.by == "spelling"}
    for link in linking.links:
        if link.by == "spelling" or (link.term.kind == "relationship" and link.term in spelled):
            continue
        if link.by == "model" and not _agreed(link, linking):
            continue  # the judge's link explains the word; only one the vectors agree with is said again
        said = _said_as(link.term, link.words)
        if link.term.kind == "property":
            # The key's words beside the word, not in its place: "older than 30" must still compare, "how high"
            # still asks how much ("how elevation high").
            said = f"{said} {link.words}"
        pattern = r"\b" + r"\s+".join(re.escape(w) for w in link.words.split()) + r"\b"
        last = said.split()[-1]
        # "sent to" read as ISSUED_TO is "issued to", not "issued to to"
        pattern += rf"(?:\s+{re.escape(last)}\b)?"
        text = re.sub(pattern, said, text, count=1, flags=re.IGNORECASE)
    return text
