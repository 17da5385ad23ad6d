"""The words a generated question is made of come from the schema's own identifiers; bounds sit between values."""

from __future__ import annotations

from bench.kgqa.schema_questions import _between, article
from bench.kgqa.snapshot import _figures, _key, plural, words


def test_identifiers_become_words_and_plurals() -> None:
    assert words("PurchaseOrder") == "purchase order" and words("IN_COUNTRY") == "in country"
    assert words("area_km2") == "area km2"
    assert [plural(w) for w in ("city", "day", "box", "country", "order")] == [
        "cities",
        "days",
        "boxes",
        "countries",
        "orders",
    ]
    assert article("incoming serves") == "an incoming serves" and article("border") == "a border"


def test_the_name_property_is_the_mostly_distinct_text_a_name_key_first() -> None:
    rows = [{"code": f"C{i:03d}", "name": f"Place {i}", "kind": "town"} for i in range(20)]
    assert _key(rows) == "name"
    assert _key([{"code": f"X{i:02d}", "kind": "town"} for i in range(20)]) == "code"
    assert _key([{"n": i} for i in range(20)]) is None  # no text names these nodes


def test_figures_are_numbers_that_vary_and_are_no_identifiers() -> None:
    rows = [{"name": f"P{i}", "population": 100 * i, "geonameid": i, "one": 1} for i in range(10)]
    assert _figures(rows, "name") == ["population"]


def test_a_bound_lies_strictly_between_two_stored_values_and_is_round() -> None:
    assert _between(1200, 1000) == 1100
    assert 10.5 < _between(10.6, 10.5) < 10.6
