"""Airports with an IATA code, the cities they serve, the subdivisions and countries those lie in, and their time
zones, from the table the PyPI package `airportsdata` ships (MIT licence). A city is one name within one
subdivision of one country (there are many Springfields); countries are ISO 3166 alpha-2 codes.

    (:Airport {iata, icao, name, elevation_ft})  (:City {id, name})  (:Subdivision {id, name})
    (:Country {code})  (:Timezone {name})
    (Airport)-[:SERVES]->(City)-[:IN_SUBDIVISION]->(Subdivision)-[:IN_COUNTRY]->(Country)
    (Airport)-[:IN_TIMEZONE]->(Timezone)
"""

from __future__ import annotations

from bench.graphs.load import GraphData, ensure_package

PACKAGE, PINNED = "airportsdata", "airportsdata==20260905"


def build() -> GraphData:
    ensure_package(PACKAGE, PINNED)
    import airportsdata

    airports = [a for a in airportsdata.load("IATA").values() if a.get("iata") and a.get("name")]
    data = GraphData(keys={"Airport": "iata", "City": "id", "Subdivision": "id", "Country": "code", "Timezone": "name"})
    data.nodes["Airport"] = [
        {
            k: v
            for k, v in {
                "iata": a["iata"],
                "icao": a.get("icao") or None,
                "name": a["name"],
                "elevation_ft": a.get("elevation"),
            }.items()
            if v not in (None, "")
        }
        for a in sorted(airports, key=lambda a: a["iata"])
    ]
    subdivision = {a["iata"]: f"{a['country']}/{a['subd']}" if a.get("subd") else None for a in airports}
    city = {
        a["iata"]: f"{subdivision[a['iata']] or a['country']}/{a['city']}" if a.get("city") else None for a in airports
    }
    data.nodes["Country"] = [{"code": code} for code in sorted({a["country"] for a in airports if a.get("country")})]
    data.nodes["Subdivision"] = [
        {"id": sid, "name": sid.split("/", 1)[1]} for sid in sorted({s for s in subdivision.values() if s})
    ]
    data.nodes["City"] = [{"id": cid, "name": cid.rsplit("/", 1)[1]} for cid in sorted({c for c in city.values() if c})]
    data.nodes["Timezone"] = [{"name": tz} for tz in sorted({a["tz"] for a in airports if a.get("tz")})]
    data.link("Airport", "SERVES", "City", [(iata, cid) for iata, cid in city.items() if cid])
    data.link(
        "City",
        "IN_SUBDIVISION",
        "Subdivision",
        [(cid, cid.rsplit("/", 1)[0]) for cid in {c for c in city.values() if c} if cid.count("/") == 2],
    )
    data.link(
        "City",
        "IN_COUNTRY",
        "Country",
        [(cid, cid.split("/", 1)[0]) for cid in {c for c in city.values() if c} if cid.count("/") == 1],
    )
    data.link(
        "Subdivision",
        "IN_COUNTRY",
        "Country",
        [(sid, sid.split("/", 1)[0]) for sid in {s for s in subdivision.values() if s}],
    )
    data.link("Airport", "IN_TIMEZONE", "Timezone", [(a["iata"], a["tz"]) for a in airports if a.get("tz")])
    return data
