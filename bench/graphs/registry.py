"""The public benchmark graphs by name: what each is made from and how it is written into FalkorDB. None is the
demo graph (procurement), which the agent was built against: these are for measuring it on graphs it was not."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from bench.graphs import airports, elements, geonames, languages, music_store, social
from bench.graphs.load import GraphData, load


async def _countries(url: str, graph_name: str, replace: bool) -> bool:
    from bench.kgqa import countries_data

    return await countries_data.load(url, graph_name, replace=replace)


def _writer(build: Callable[[], GraphData]) -> Callable[[str, str, bool], Awaitable[bool]]:
    async def write(url: str, graph_name: str, replace: bool) -> bool:
        return await load(url, graph_name, build(), replace=replace)

    return write


# name -> (what it holds, the PyPI package it is derived from, its writer)
GRAPHS: dict[str, tuple[str, str, Callable[[str, str, bool], Awaitable[bool]]]] = {
    "countries": ("countries, borders, regions, languages, currencies, provinces", "countryinfo==1.0.1", _countries),
    "geonames": (
        "cities, countries, continents, currencies, languages, time zones, US states and counties",
        geonames.PINNED,
        _writer(geonames.build),
    ),
    "airports": (
        "airports, the cities they serve, subdivisions, countries, time zones",
        airports.PINNED,
        _writer(airports.build),
    ),
    "social": (
        "Les Misérables characters, Florentine families' marriages, Southern women's events",
        social.PINNED,
        _writer(social.build),
    ),
    "elements": (
        "chemical elements, their groups, periods, blocks and series, isotopes and decay modes, discoverers",
        elements.PINNED,
        _writer(elements.build),
    ),
    "languages": (
        "territories, the languages spoken there and their scripts, currencies now and before, time zones",
        languages.PINNED,
        _writer(languages.build),
    ),
    "music_store": (
        "a music store's artists, albums, tracks, genres and playlists, its customers and their invoices, "
        "its employees and whom they report to",
        music_store.PINNED,
        _writer(music_store.build),
    ),
}


async def load_graph(name: str, url: str, graph_name: str | None = None, *, replace: bool = False) -> bool:
    """Write the public graph `name` into FalkorDB at `url` (as `graph_name`, default its own name)."""
    if name not in GRAPHS:
        raise KeyError(f"unknown graph {name!r}: one of {', '.join(GRAPHS)}")
    return await GRAPHS[name][2](url, graph_name or name, replace)
