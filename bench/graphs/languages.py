"""The world's territories, the languages spoken in them and the scripts those are written in, the currencies
the territories use and used, and their time zones, from the Unicode CLDR data (release 49) that the PyPI
package `Babel` ships (Babel under the BSD licence; the data under the Unicode licence, in the wheel as
`babel/locale-data/LICENSE.unicode`). Read offline through Babel's API: its global data, its English names,
and each territory's own locale file for the week.

What is kept, and why:
- Territories: the two-letter ones Babel's English data names (so not the dissolved ones, such as the Soviet
  Union or Yugoslavia, that CLDR no longer names), without the groupings (European Union, eurozone, United
  Nations, Outlying Oceania) and "Unknown Region". CLDR's territory figures (population, literacy, GDP) and
  its region containment are not in Babel, so neither is here. The week: the first day and the weekend's
  first and last days, by English name, as CLDR gives them for the territory.
- SPEAKS: a language CLDR lists for the territory with at least 1 % of its people, or with an official status
  there (nationwide, de facto, or in a region). OFFICIAL_LANGUAGE: official nationwide, in law or de facto.
  CLDR lists some languages by script too ("sd_Deva", Sindhi in Devanagari): one language here, with the
  share CLDR gives the language itself (its largest script's when it gives none) and its strongest status.
  Languages Babel's English data does not name (about a fifth of those this keeps, nearly all minority
  languages such as Levantine Arabic) are left out. A language whose English name is a territory's too has
  "language" added ("Nauru language").
- WRITTEN_IN: the script CLDR's likely subtags give a language, and any other it lists the language in for
  some territory. A script's name ends in "script" ("Arabic script"): many would otherwise be a language's.
- USES_CURRENCY: legal tender now; FORMERLY_USED_CURRENCY: tender once, no longer (CLDR's dates; funds codes,
  never tender, left out). A currency's `year_introduced` is the first year it was tender anywhere, its
  `year_withdrawn` (only for one tender nowhere now) the last; `decimal_digits` is CLDR's number of minor
  digits (2 unless CLDR says otherwise).
- HAS_TIME_ZONE: the territory's IANA time zones; IN_METAZONE: the zone's CLDR metazone now, by its English
  generic name ("Central European Time"), the standard one for a metazone without summer time.

Every figure is a year, a count of digits or a per cent with at most four decimals (the question generator
rounds golds to four decimals and writes its bounds as 64-bit integers).

    (:Territory {name, code, first_day_of_week, weekend_start, weekend_end})
    (:Language {name, code})  (:Script {name, code})
    (:Currency {name, code, decimal_digits, year_introduced, year_withdrawn})
    (:TimeZone {name})  (:Metazone {name})
    (Territory)-[:SPEAKS {population_percent, official_status}]->(Language)
    (Territory)-[:OFFICIAL_LANGUAGE]->(Language)  (Language)-[:WRITTEN_IN]->(Script)
    (Territory)-[:USES_CURRENCY {since_year}]->(Currency)
    (Territory)-[:FORMERLY_USED_CURRENCY {from_year, until_year}]->(Currency)
    (Territory)-[:HAS_TIME_ZONE]->(TimeZone)-[:IN_METAZONE]->(Metazone)
"""

from __future__ import annotations

import pickle
from collections.abc import Mapping
from typing import Any

from bench.graphs.load import GraphData, ensure_package

PACKAGE, PINNED = "babel", "babel==2.19.0"

MIN_SHARE_PERCENT = 1.0  # a language spoken by fewer, with no official status there, is not linked
MIN_FIGURE = 1e-4  # the least that four decimals state
NOT_TERRITORIES = {"EU", "EZ", "UN", "QO", "ZZ"}  # groupings and the unknown region
STATUS = {"official": "official", "de_facto_official": "de facto official", "official_regional": "regional official"}
STATUS_RANK = {"official": 3, "de_facto_official": 2, "official_regional": 1}
NATIONAL = {"official", "de_facto_official"}
SCRIPT_NAMES = {"Hans": "Simplified Han", "Hant": "Traditional Han"}  # Babel's English gives the short forms
LABELS = ("Territory", "Language", "Script", "Currency", "TimeZone", "Metazone")


def build() -> GraphData:
    ensure_package(PACKAGE, PINNED)
    from babel import Locale
    from babel.core import get_global

    en = Locale("en")
    territory_names = {c: n for c, n in en.territories.items() if is_territory(c)}
    data = GraphData(keys=dict.fromkeys(LABELS, "name"))

    # territories
    codes = sorted(
        c
        for c in {
            *get_global("territory_languages"),
            *get_global("territory_currencies"),
            *get_global("territory_zones"),
        }
        if c in territory_names
    )
    weeks = territory_weeks(codes)
    data.nodes["Territory"] = [{"name": territory_names[c], "code": c, **weeks.get(c, {})} for c in codes]

    # languages and scripts
    spoken = languages_spoken(get_global("territory_languages"), en.languages, codes)
    speaks = [(territory_names[t], lang) for (t, lang), info in spoken.items() if keeps(info)]
    language_codes = sorted({lang for _, lang in speaks})
    taken = {territory_names[c].lower() for c in codes}
    language = {c: language_name(en.languages[c], taken) for c in language_codes}
    data.nodes["Language"] = [{"name": language[c], "code": c} for c in language_codes]
    share = {(territory_names[t], lang): info for (t, lang), info in spoken.items()}
    data.link(
        "Territory",
        "SPEAKS",
        "Language",
        [(t, language[lang]) for t, lang in speaks],
        properties={(t, language[lang]): speaks_properties(share[t, lang]) for t, lang in speaks},
    )
    data.link(
        "Territory",
        "OFFICIAL_LANGUAGE",
        "Language",
        [(t, language[lang]) for t, lang in speaks if share[t, lang]["status"] in NATIONAL],
    )
    writing = [
        (language[lang], script)
        for lang, script in language_scripts(
            language_codes, get_global("likely_subtags"), get_global("territory_languages")
        )
        if script in en.scripts
    ]
    script_codes = sorted({s for _, s in writing})
    data.nodes["Script"] = [{"name": script_name(s, en.scripts), "code": s} for s in script_codes]
    data.link("Language", "WRITTEN_IN", "Script", [(lang, script_name(s, en.scripts)) for lang, s in writing])

    # currencies
    tenders = {
        t: [(cur, start, end) for cur, start, end, tender in entries if tender]
        for t, entries in get_global("territory_currencies").items()
    }
    used = [(t, cur, start, end) for t in codes for cur, start, end in tenders.get(t, []) if cur in en.currencies]
    currency_codes = sorted({cur for _, cur, _, _ in used})
    fractions = get_global("currency_fractions")
    data.nodes["Currency"] = [currency(c, en.currencies[c], tenders, fractions) for c in currency_codes]
    now = [(territory_names[t], en.currencies[cur], start) for t, cur, start, end in used if end is None]
    data.link(
        "Territory",
        "USES_CURRENCY",
        "Currency",
        [(t, c) for t, c, _ in now],
        properties={(t, c): present({"since_year": start[0] if start else None}) for t, c, start in now},
    )
    # a currency used twice over in one territory (twice adopted) keeps its first start and last end
    former: dict[tuple[str, str], dict[str, Any]] = {}
    current = {(t, c) for t, c, _ in now}
    for t, cur, start, end in used:
        pair = (territory_names[t], en.currencies[cur])
        if end is None or pair in current:
            continue
        years = former.setdefault(pair, {})
        if start:
            years["from_year"] = min(years.get("from_year", start[0]), start[0])
        years["until_year"] = max(years.get("until_year", end[0]), end[0])
    data.link("Territory", "FORMERLY_USED_CURRENCY", "Currency", list(former), properties=former)

    # time zones and their metazones
    zoned = [(t, z) for t in codes for z in get_global("territory_zones").get(t, [])]
    data.nodes["TimeZone"] = [{"name": z} for z in sorted({z for _, z in zoned})]
    data.link("Territory", "HAS_TIME_ZONE", "TimeZone", [(territory_names[t], z) for t, z in zoned])
    metazone_of = get_global("meta_zones")
    observed = [(z, metazone_name(metazone_of[z], en)) for z in sorted({z for _, z in zoned}) if z in metazone_of]
    data.nodes["Metazone"] = [{"name": m} for m in sorted({m for _, m in observed})]
    data.link("TimeZone", "IN_METAZONE", "Metazone", observed)
    return data


def is_territory(code: str) -> bool:
    return len(code) == 2 and code.isalpha() and code not in NOT_TERRITORIES


def languages_spoken(
    by_territory: Mapping[str, Any], names: Mapping[str, str], territories: list[str]
) -> dict[tuple[str, str], dict[str, Any]]:
    """(territory, language) -> the language's share of the territory's people and its strongest status
    there, a language listed by script ("sd_Deva") taken as the language itself."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for t in territories:
        for tag, info in sorted(by_territory.get(t, {}).items()):
            lang, _, script = tag.partition("_")
            if lang not in names:
                continue
            entry = found.setdefault((t, lang), {"share": None, "script_share": 0.0, "status": None})
            share = float(info["population_percent"])
            if script:
                entry["script_share"] = max(entry["script_share"], share)
            else:
                entry["share"] = share
            status = info["official_status"]
            if status and STATUS_RANK[status] > STATUS_RANK.get(entry["status"], 0):
                entry["status"] = status
    for entry in found.values():
        if entry["share"] is None:
            entry["share"] = entry["script_share"]
    return found


def language_name(name: str, taken: set[str]) -> str:
    """The English name, "language" added when a territory has it ("Nauru", "Tuvalu")."""
    return f"{name} language" if name.lower() in taken else name


def keeps(info: dict[str, Any]) -> bool:
    return bool(info["share"] >= MIN_SHARE_PERCENT or info["status"])


def speaks_properties(info: dict[str, Any]) -> dict[str, Any]:
    share = info["share"]
    return present(
        {
            "population_percent": round(share, 4) if share >= MIN_FIGURE else None,
            "official_status": STATUS.get(info["status"] or ""),
        }
    )


def language_scripts(
    languages: list[str], likely: Mapping[str, str], by_territory: Mapping[str, Any]
) -> list[tuple[str, str]]:
    """(language, script): the likely one first, then any CLDR lists the language in for some territory."""
    listed = {tuple(tag.split("_", 1)) for tags in by_territory.values() for tag in tags if "_" in tag}
    pairs = []
    for lang in languages:
        parts = likely.get(lang, "").split("_")
        if len(parts) > 1 and len(parts[1]) == 4:
            pairs.append((lang, parts[1]))
        pairs.extend(sorted((lg, s) for lg, s in listed if lg == lang))
    return list(dict.fromkeys(pairs))


def script_name(code: str, names: Any) -> str:
    return f"{SCRIPT_NAMES.get(code, names[code])} script"


def currency(code: str, name: str, tenders: dict[str, list[tuple[str, Any, Any]]], fractions: Any) -> dict[str, Any]:
    spans = [(start, end) for entries in tenders.values() for cur, start, end in entries if cur == code]
    starts = [start[0] for start, _ in spans if start]
    ended = all(end is not None for _, end in spans)
    return present(
        {
            "name": name,
            "code": code,
            "decimal_digits": fractions.get(code, fractions["DEFAULT"])[0],
            "year_introduced": min(starts) if starts else None,
            "year_withdrawn": max(end[0] for _, end in spans) if spans and ended else None,
        }
    )


def metazone_name(metazone: str, en: Any) -> str:
    long = en.meta_zones[metazone]["long"]
    return str(long.get("generic") or long["standard"])


def territory_weeks(territories: list[str]) -> dict[str, dict[str, str]]:
    """A territory's first day of the week and weekend. CLDR's week data go by territory: a locale of the
    territory (the first in code order) holds those that differ from the world's, the root locale the world's.
    Its own file is read, not its merged data, which may inherit a parent's territory ("pt_AO" from "pt_PT");
    and not through `localedata.load`, whose cache keeps one of the two for both."""
    from babel import Locale, localedata

    day_names = Locale("en").days["format"]["wide"]
    world = dict(localedata.load("root")["week_data"])
    locale_of: dict[str, str] = {}
    for identifier in sorted(localedata.locale_identifiers()):
        territory = identifier.split("_")[-1]
        if "_" in identifier and territory in territories:
            locale_of.setdefault(territory, identifier)
    weeks = {}
    for territory, identifier in locale_of.items():
        with open(localedata.resolve_locale_filename(identifier), "rb") as own:
            week = {**world, **pickle.load(own).get("week_data", {})}
        weeks[territory] = {
            "first_day_of_week": day_names[week["first_day"]],
            "weekend_start": day_names[week["weekend_start"]],
            "weekend_end": day_names[week["weekend_end"]],
        }
    return weeks


def present(properties: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in properties.items() if v is not None}
