"""Questions over the countries graph (bench/kgqa/countries_data.py), every gold answer computed from the
derived graph the loader writes: borders, regions and subregions, languages and currencies (as codes),
provinces, capitals, populations and areas."""

from __future__ import annotations

import random
from collections import deque

from bench.kgqa import questions as g
from bench.kgqa.countries_data import CountryGraph, read
from bench.kgqa.generate import Made, Maker, build
from bench.kgqa.questions import Question

SEED = 7_3166
QUOTAS = {
    "lookup": 12,
    "one-hop": 11,
    "count": 11,
    "aggregation": 11,
    "multi-hop": 10,
    "path": 10,
    "filter": 10,
    "non-existent": 12,
}
# Two-letter language codes that are also English words ("it", "is", "no"): an answer could name them by
# accident, so no question expects them.
WORDLIKE_CODES = {
    "am",
    "an",
    "as",
    "at",
    "be",
    "by",
    "do",
    "go",
    "he",
    "hi",
    "if",
    "in",
    "is",
    "it",
    "me",
    "my",
    "no",
    "of",
    "on",
    "or",
    "so",
    "to",
    "up",
    "us",
    "we",
}
INVENTED = [
    "Veltrania",
    "Republic of Ostravia",
    "North Eldoria",
    "Kingdom of Marivel",
    "Zandoria",
    "Bracovia",
    "Federated States of Lunaris",
    "Quorvia",
    "Isles of Tessaly",
    "Grand Duchy of Halvenia",
    "Drusmark",
    "Norvalia",
]


def _distance(graph: CountryGraph, start: str, goal: str, limit: int = 6) -> int | None:
    """Fewest border crossings from one country to another over land (breadth-first), None when unreachable."""
    seen, todo = {start}, deque([(start, 0)])
    while todo:
        node, d = todo.popleft()
        if node == goal:
            return d
        if d < limit:
            for nxt in sorted(graph.borders[node] - seen):
                seen.add(nxt)
                todo.append((nxt, d + 1))
    return None


class Makers:
    def __init__(self, c: CountryGraph) -> None:
        self.c = c
        self.all_names = [c.name(i) for i in c.countries]
        self.with_borders = sorted(i for i, b in c.borders.items() if b)
        self.regions = sorted(set(c.region.values()))
        self.subregions = sorted(set(c.subregion.values()))
        self.capitals = sorted({str(x["capital"]) for x in c.countries.values() if x.get("capital")})
        self.currency_codes = sorted({x for cs in c.currencies.values() for x in cs})

    def pick(self, rng: random.Random, pool: list[str] | None = None, need: str | None = None) -> str:
        pool = pool or sorted(self.c.countries)
        choices = [i for i in pool if need is None or self.c.countries[i].get(need)]
        return rng.choice(choices)

    def nm(self, iso3: str) -> list[str]:
        """A country's accepted spellings: its name in the graph and the source's longer alternatives."""
        return [self.c.name(iso3), *self.c.alt_names.get(iso3, [])]

    def in_subregion(self, s: str) -> list[str]:
        return sorted(i for i, x in self.c.subregion.items() if x == s)

    def in_region(self, r: str) -> list[str]:
        return sorted(i for i, x in self.c.region.items() if x == r)

    # lookup -----------------------------------------------------------------------------------------------
    def capital(self, rng: random.Random) -> Made | None:
        i = self.pick(rng, need="capital")
        cap = str(self.c.countries[i]["capital"])
        if "/" in cap:
            return None
        return Made(
            ("What is the capital of {x}?", "Which city is the capital of {x}?", "Name the capital city of {x}."),
            g.name(cap, self.capitals),
            {"x": self.c.name(i)},
        )

    def population(self, rng: random.Random) -> Made:
        i = self.pick(rng, need="population")
        return Made(
            ("What is the population of {x}?", "How many people live in {x}?", "How many inhabitants does {x} have?"),
            g.number(self.c.countries[i]["population"]),
            {"x": self.c.name(i)},
        )

    def area(self, rng: random.Random) -> Made:
        i = self.pick(rng, need="area")
        return Made(
            ("What is the area of {x}?", "How large is {x} in square kilometres?"),
            g.number(self.c.countries[i]["area"]),
            {"x": self.c.name(i)},
        )

    def iso3(self, rng: random.Random) -> Made:
        i = self.pick(rng)
        return Made(
            ("What is the ISO alpha-3 code of {x}?", "Which three-letter ISO code does {x} have?"),
            g.name(i),
            {"x": self.c.name(i)},
        )

    def demonym(self, rng: random.Random) -> Made:
        i = self.pick(rng, need="demonym")
        return Made(
            ("What is the demonym of {x}?", "What are the people of {x} called?"),
            g.name(str(self.c.countries[i]["demonym"])),
            {"x": self.c.name(i)},
        )

    # one-hop ----------------------------------------------------------------------------------------------
    def neighbours(self, rng: random.Random) -> Made | None:
        i = self.pick(rng, self.with_borders)
        if len(self.c.borders[i]) > 6:
            return None
        return Made(
            (
                "Which countries border {x}?",
                "What are the neighbouring countries of {x}?",
                "List the countries that share a border with {x}.",
            ),
            g.names([self.nm(b) for b in sorted(self.c.borders[i])], distractors=self.all_names),
            {"x": self.c.name(i)},
        )

    def currency(self, rng: random.Random) -> Made | None:
        i = self.pick(rng)
        codes = self.c.currencies.get(i, [])
        if not 1 <= len(codes) <= 2:
            return None
        return Made(
            ("Which currency does {x} use? Give the code.", "What is the currency code of {x}?"),
            g.names(list(codes), distractors=self.currency_codes),
            {"x": self.c.name(i)},
        )

    def region(self, rng: random.Random) -> Made | None:
        i = self.pick(rng)
        if i not in self.c.region:
            return None
        return Made(
            ("Which region is {x} in?", "In what world region does {x} lie?"),
            g.name(self.c.region[i], self.regions),
            {"x": self.c.name(i)},
        )

    def subregion(self, rng: random.Random) -> Made | None:
        i = self.pick(rng)
        if i not in self.c.subregion:
            return None
        return Made(
            ("Which subregion does {x} belong to?", "What subregion is {x} part of?"),
            g.name(self.c.subregion[i], self.subregions),
            {"x": self.c.name(i)},
        )

    def languages(self, rng: random.Random) -> Made | None:
        i = self.pick(rng)
        codes = self.c.languages.get(i, [])
        if not 1 <= len(codes) <= 3 or WORDLIKE_CODES & set(codes):
            return None
        return Made(
            ("Which language codes are listed for {x}?", "What languages does {x} speak? Give the codes."),
            g.names(list(codes)),
            {"x": self.c.name(i)},
        )

    # count ------------------------------------------------------------------------------------------------
    def neighbour_count(self, rng: random.Random) -> Made:
        i = self.pick(rng, self.with_borders)
        return Made(
            ("How many countries border {x}?", "How many neighbouring countries does {x} have?"),
            g.count(len(self.c.borders[i])),
            {"x": self.c.name(i)},
        )

    def subregion_count(self, rng: random.Random) -> Made:
        s = rng.choice(self.subregions)
        return Made(
            ("How many countries are in {s}?", "How many countries belong to the subregion {s}?"),
            g.count(len(self.in_subregion(s))),
            {"s": s},
        )

    def region_count(self, rng: random.Random) -> Made:
        r = rng.choice(self.regions)
        return Made(
            ("How many countries are in the region {r}?", "Count the countries of {r}."),
            g.count(len(self.in_region(r))),
            {"r": r},
        )

    def province_count(self, rng: random.Random) -> Made | None:
        i = self.pick(rng)
        n = len(self.c.provinces.get(i, []))
        if not 2 <= n <= 60:
            return None
        return Made(
            ("How many provinces does {x} have?", "How many provinces or states are listed for {x}?"),
            g.count(n),
            {"x": self.c.name(i)},
        )

    def currency_users(self, rng: random.Random) -> Made | None:
        code = rng.choice(self.currency_codes)
        n = sum(code in cs for cs in self.c.currencies.values())
        if n < 2:
            return None
        return Made(
            ("How many countries use the currency {k}?", "In how many countries is {k} the currency?"),
            g.count(n),
            {"k": code},
        )

    def language_speakers(self, rng: random.Random) -> Made | None:
        code = rng.choice(sorted({x for ls in self.c.languages.values() for x in ls}))
        n = sum(code in ls for ls in self.c.languages.values())
        if n < 2:
            return None
        return Made(
            ("How many countries list the language code '{k}'?", "In how many countries is language '{k}' spoken?"),
            g.count(n),
            {"k": code},
        )

    # aggregation ------------------------------------------------------------------------------------------
    def _best(self, pool: list[str], prop: str, k: int = 1) -> list[str] | None:
        scored = sorted(((self.c.countries[i][prop], i) for i in pool if self.c.countries[i].get(prop)), reverse=True)
        if len(scored) <= k or scored[k - 1][0] == scored[k][0]:
            return None
        return [i for _, i in scored[:k]]

    def most_populous_in_subregion(self, rng: random.Random) -> Made | None:
        s = rng.choice(self.subregions)
        best = self._best(self.in_subregion(s), "population")
        if best is None:
            return None
        return Made(
            ("Which country in {s} has the largest population?", "What is the most populous country of {s}?"),
            g.topk([self.nm(best[0])], [self.c.name(i) for i in self.in_subregion(s)]),
            {"s": s},
        )

    def largest_in_subregion(self, rng: random.Random) -> Made | None:
        s = rng.choice(self.subregions)
        best = self._best(self.in_subregion(s), "area")
        if best is None:
            return None
        return Made(
            ("Which country in {s} has the largest area?", "What is the biggest country by area in {s}?"),
            g.topk([self.nm(best[0])], [self.c.name(i) for i in self.in_subregion(s)]),
            {"s": s},
        )

    def subregion_population(self, rng: random.Random) -> Made:
        s = rng.choice(self.subregions)
        total = sum(self.c.countries[i].get("population", 0) for i in self.in_subregion(s))
        return Made(
            ("What is the total population of the countries in {s}?", "How many people live in {s} altogether?"),
            g.number(total),
            {"s": s},
        )

    def top3_populous_in_region(self, rng: random.Random) -> Made | None:
        r = rng.choice(self.regions)
        best = self._best(self.in_region(r), "population", 3)
        if best is None:
            return None
        return Made(
            (
                "Which three countries in {r} have the largest populations?",
                "Name the 3 most populous countries of {r}.",
            ),
            g.topk([self.nm(i) for i in best], [self.c.name(i) for i in self.in_region(r)]),
            {"r": r},
        )

    def most_neighbours_in_region(self, rng: random.Random) -> Made | None:
        r = rng.choice(self.regions)
        counts = sorted(((len(self.c.borders[i]), i) for i in self.in_region(r)), reverse=True)
        if len(counts) < 2 or counts[0][0] == counts[1][0]:
            return None
        return Made(
            ("Which country in {r} borders the most countries?", "What country of {r} has the most neighbours?"),
            g.topk([self.nm(counts[0][1])], [self.c.name(i) for i in self.in_region(r)]),
            {"r": r},
        )

    def average_population(self, rng: random.Random) -> Made:
        s = rng.choice(self.subregions)
        values = [
            self.c.countries[i]["population"] for i in self.in_subregion(s) if self.c.countries[i].get("population")
        ]
        return Made(
            (
                "What is the average population of the countries in {s}?",
                "On average, how many people live in a country of {s}?",
            ),
            g.number(round(sum(values) / len(values), 4)),
            {"s": s},
        )

    # multi-hop --------------------------------------------------------------------------------------------
    def neighbour_currencies(self, rng: random.Random) -> Made | None:
        i = self.pick(rng, self.with_borders)
        codes = sorted({x for b in self.c.borders[i] for x in self.c.currencies.get(b, [])})
        if not 1 <= len(codes) <= 4 or len(self.c.borders[i]) > 6:
            return None
        return Made(
            (
                "Which currencies are used by the countries that border {x}?",
                "What currency codes do the neighbours of {x} use?",
            ),
            g.names(list(codes), distractors=self.currency_codes),
            {"x": self.c.name(i)},
        )

    def region_of_capital(self, rng: random.Random) -> Made | None:
        i = self.pick(rng, need="capital")
        cap = str(self.c.countries[i]["capital"])
        shared = sum(str(x.get("capital")) == cap for x in self.c.countries.values()) > 1
        if i not in self.c.region or "/" in cap or shared:
            return None
        return Made(
            (
                "In which region is the country whose capital is {k}?",
                "{k} is the capital of a country: which region is that country in?",
            ),
            g.name(self.c.region[i], self.regions),
            {"k": cap},
        )

    def neighbour_subregions(self, rng: random.Random) -> Made | None:
        i = self.pick(rng, self.with_borders)
        subs = sorted({self.c.subregion[b] for b in self.c.borders[i] if b in self.c.subregion})
        if not 2 <= len(subs) <= 3:
            return None
        return Made(
            (
                "Which subregions do the neighbours of {x} belong to?",
                "The countries bordering {x} lie in which subregions?",
            ),
            g.names(list(subs), distractors=self.subregions),
            {"x": self.c.name(i)},
        )

    def neighbour_provinces(self, rng: random.Random) -> Made | None:
        i = self.pick(rng, self.with_borders)
        if len(self.c.borders[i]) > 4:
            return None
        n = sum(len(self.c.provinces.get(b, [])) for b in self.c.borders[i])
        if n == 0:
            return None
        return Made(
            (
                "How many provinces do the countries bordering {x} have in total?",
                "Adding up the provinces of every neighbour of {x}, how many are there?",
            ),
            g.count(n),
            {"x": self.c.name(i)},
        )

    def neighbour_languages(self, rng: random.Random) -> Made | None:
        i = self.pick(rng, self.with_borders)
        codes = sorted({x for b in self.c.borders[i] for x in self.c.languages.get(b, [])})
        if not 1 <= len(codes) <= 4 or len(self.c.borders[i]) > 5 or WORDLIKE_CODES & set(codes):
            return None
        return Made(
            (
                "Which language codes are listed for the countries that border {x}?",
                "What languages (codes) are spoken in the neighbouring countries of {x}?",
            ),
            g.names(list(codes)),
            {"x": self.c.name(i)},
        )

    # path -------------------------------------------------------------------------------------------------
    def distance(self, rng: random.Random) -> Made | None:
        a, b = rng.sample(self.with_borders, 2)
        d = _distance(self.c, a, b)
        if d is None or not 2 <= d <= 4:
            return None
        return Made(
            (
                "What is the smallest number of borders you must cross to travel over land from {a} to {b}?",
                "Following shared borders, how many steps is the shortest path from {a} to {b}?",
                "How many border crossings at least separate {a} and {b}?",
            ),
            g.count(d),
            {"a": self.c.name(a), "b": self.c.name(b)},
        )

    def _pair_at_two(self, rng: random.Random) -> tuple[str, str, list[str]] | None:
        a = self.pick(rng, self.with_borders)
        second = sorted({y for x in self.c.borders[a] for y in self.c.borders[x]} - self.c.borders[a] - {a})
        if not second:
            return None
        b = rng.choice(second)
        return a, b, sorted(self.c.borders[a] & self.c.borders[b])

    def common_neighbour(self, rng: random.Random) -> Made | None:
        pair = self._pair_at_two(rng)
        if pair is None:
            return None
        a, b, common = pair
        return Made(
            (
                "{a} and {b} do not border each other: which country borders both of them?",
                "Name a country that lies between {a} and {b}, sharing a border with each.",
            ),
            g.names(
                [self.nm(x) for x in common],
                match="any",
                distractors=[self.c.name(x) for x in self.c.countries if x not in common],
            ),
            {"a": self.c.name(a), "b": self.c.name(b)},
        )

    def common_neighbour_count(self, rng: random.Random) -> Made | None:
        pair = self._pair_at_two(rng)
        if pair is None:
            return None
        a, b, common = pair
        return Made(
            ("How many countries border both {a} and {b}?", "How many neighbours do {a} and {b} share?"),
            g.count(len(common)),
            {"a": self.c.name(a), "b": self.c.name(b)},
        )

    # filter -----------------------------------------------------------------------------------------------
    def populous_in_subregion(self, rng: random.Random) -> Made | None:
        s, bar = rng.choice(self.subregions), rng.choice([10_000_000, 20_000_000, 50_000_000, 100_000_000])
        hits = sorted(i for i in self.in_subregion(s) if self.c.countries[i].get("population", 0) > bar)
        if not 1 <= len(hits) <= 6:
            return None
        return Made(
            (
                "Which countries in {s} have a population above {t}?",
                "List the countries of {s} with more than {t} inhabitants.",
            ),
            g.names([self.nm(i) for i in hits], distractors=[self.c.name(i) for i in self.in_subregion(s)]),
            {"s": s, "t": f"{bar:,}"},
        )

    def small_in_region(self, rng: random.Random) -> Made | None:
        r, bar = rng.choice(self.regions), rng.choice([500, 1_000, 5_000])
        hits = sorted(i for i in self.in_region(r) if 0 < self.c.countries[i].get("area", 0) < bar)
        if not 1 <= len(hits) <= 6:
            return None
        return Made(
            (
                "Which countries in {r} have an area below {t} square kilometres?",
                "List the countries of {r} smaller than {t} km².",
            ),
            g.names([self.nm(i) for i in hits], distractors=[self.c.name(i) for i in self.in_region(r)]),
            {"r": r, "t": f"{bar:,}"},
        )

    def currency_in_region(self, rng: random.Random) -> Made | None:
        r = rng.choice(self.regions)
        code = rng.choice(sorted({x for i in self.in_region(r) for x in self.c.currencies.get(i, [])}))
        hits = sorted(i for i in self.in_region(r) if code in self.c.currencies.get(i, []))
        if not 2 <= len(hits) <= 6:
            return None
        return Made(
            ("Which countries in {r} use the currency {k}?", "In {r}, which countries pay with {k}?"),
            g.names([self.nm(i) for i in hits], distractors=[self.c.name(i) for i in self.in_region(r)]),
            {"r": r, "k": code},
        )

    def count_populous_in_region(self, rng: random.Random) -> Made | None:
        r, bar = rng.choice(self.regions), rng.choice([1_000_000, 10_000_000, 50_000_000])
        n = sum(self.c.countries[i].get("population", 0) > bar for i in self.in_region(r))
        if n == 0:
            return None
        return Made(
            (
                "How many countries in {r} have more than {t} inhabitants?",
                "Count the countries of {r} whose population exceeds {t}.",
            ),
            g.count(n),
            {"r": r, "t": f"{bar:,}"},
        )

    def language_in_subregion(self, rng: random.Random) -> Made | None:
        s = rng.choice(self.subregions)
        code = rng.choice(sorted({x for i in self.in_subregion(s) for x in self.c.languages.get(i, [])}))
        hits = sorted(i for i in self.in_subregion(s) if code in self.c.languages.get(i, []))
        if not 1 <= len(hits) <= 5:
            return None
        return Made(
            ("Which countries in {s} list the language code '{k}'?", "In {s}, where is language '{k}' spoken?"),
            g.names([self.nm(i) for i in hits], distractors=[self.c.name(i) for i in self.in_subregion(s)]),
            {"s": s, "k": code},
        )

    # non-existent -----------------------------------------------------------------------------------------
    def absent(self, rng: random.Random) -> Made | None:
        real = {n.lower() for n in self.all_names}
        x = rng.choice(INVENTED)
        if x.lower() in real:
            return None
        kind = rng.randrange(5)
        if kind == 0:
            return Made(
                ("What is the capital of {x}?", "Which city is the capital of {x}?"),
                g.absent(x, distractors=self.capitals),
                {"x": x},
            )
        if kind == 1:
            return Made(
                ("What is the population of {x}?", "How many people live in {x}?"),
                g.absent(x, forbid_numbers=True),
                {"x": x},
            )
        if kind == 2:
            return Made(
                ("Which countries border {x}?", "What are the neighbouring countries of {x}?"),
                g.absent(x, distractors=self.all_names),
                {"x": x},
            )
        if kind == 3:
            return Made(
                ("Which currency does {x} use?", "Which region is {x} in?"),
                g.absent(x, distractors=self.currency_codes + self.regions),
                {"x": x},
            )
        return Made(
            ("How many provinces does {x} have?", "How many countries border {x}?"),
            g.absent(x, forbid_numbers=True),
            {"x": x},
        )

    def absent_code(self, rng: random.Random) -> Made | None:
        code = "".join(rng.choice("QXZJ") for _ in range(2)) + rng.choice("QXZJV")
        if code in self.currency_codes or code in self.c.countries:
            return None
        if rng.random() < 0.5:
            return Made(
                ("Which countries use the currency {k}?", "Which countries pay with the currency code {k}?"),
                g.absent(code, distractors=self.all_names),
                {"k": code},
            )
        return Made(
            ("Which country has the ISO alpha-3 code {k}?", "What country is identified by the code {k}?"),
            g.absent(code, distractors=self.all_names),
            {"k": code},
        )

    def by_category(self) -> dict[str, list[Maker]]:
        return {
            "lookup": [self.capital, self.population, self.area, self.iso3, self.demonym],
            "one-hop": [self.neighbours, self.currency, self.region, self.subregion, self.languages],
            "count": [
                self.neighbour_count,
                self.subregion_count,
                self.region_count,
                self.province_count,
                self.currency_users,
                self.language_speakers,
            ],
            "aggregation": [
                self.most_populous_in_subregion,
                self.largest_in_subregion,
                self.subregion_population,
                self.top3_populous_in_region,
                self.most_neighbours_in_region,
                self.average_population,
            ],
            "multi-hop": [
                self.neighbour_currencies,
                self.region_of_capital,
                self.neighbour_subregions,
                self.neighbour_provinces,
                self.neighbour_languages,
            ],
            "path": [self.distance, self.common_neighbour, self.common_neighbour_count],
            "filter": [
                self.populous_in_subregion,
                self.small_in_region,
                self.currency_in_region,
                self.count_populous_in_region,
                self.language_in_subregion,
            ],
            "non-existent": [self.absent, self.absent_code],
        }


def questions(graph: CountryGraph | None = None) -> list[Question]:
    """The countries question set: the same questions and golds on every run (for one package version)."""
    return build("countries", SEED, Makers(graph or read()).by_category(), QUOTAS)
