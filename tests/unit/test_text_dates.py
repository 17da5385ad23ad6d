"""Reads of dates kept as text, found where they are compared with a temporal call and converted by it."""

from __future__ import annotations

from cypher.text_dates import all_iso_dates, converted_reads, temporal_comparisons


def test_reads_compared_with_a_temporal_call_are_found_on_either_side() -> None:
    query = (
        "MATCH (e:Event)-[:AT]->(v:Venue) WHERE e.starts >= date() - duration({days: 7}) "
        "AND localdatetime() > v.opened AND e.name = 'date(' RETURN e.name"
    )
    assert temporal_comparisons(query) == [("e", "starts"), ("v", "opened")]


def test_only_the_reads_named_are_converted_with_the_function_they_are_compared_to() -> None:
    query = "MATCH (e:Event) WHERE e.starts < date() AND e.ends <= LOCALDATETIME() RETURN e.starts"
    assert converted_reads(query, {("e", "starts")}) == (
        "MATCH (e:Event) WHERE date(e.starts) < date() AND e.ends <= LOCALDATETIME() RETURN e.starts"
    )
    assert converted_reads(query, {("e", "ends")}) == (
        "MATCH (e:Event) WHERE e.starts < date() AND localdatetime(e.ends) <= LOCALDATETIME() RETURN e.starts"
    )
    assert converted_reads(query, set()) is None
    # a string compared with a converted date is not a read of a property
    assert converted_reads("MATCH (e:Event) WHERE '2020-01-01' < date() RETURN e", {("e", "starts")}) is None


def test_a_property_holds_dates_as_text_only_when_every_sampled_value_is_one() -> None:
    assert all_iso_dates(["2024-06-28", "2024-06-28T10:00:00Z", "2024-06-28 10:00"])
    assert not all_iso_dates(["2024-06-28", "next week"])
    assert not all_iso_dates([20240628])
    assert not all_iso_dates([])
