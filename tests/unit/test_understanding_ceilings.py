"""An answer built on a reading the code is not sure of is stated low, and says which words it could not place
or did not use (confidence/calibrator.py's ceilings): whatever the rows, the answer may be to another question."""

from __future__ import annotations

from confidence.calibrator import UNEXPLAINED_CEILING, UNUSED_CEILING, capped
from confidence.evidence_words import Figures


def test_a_word_nothing_in_the_schema_explains_caps_the_confidence_and_is_named() -> None:
    stated, why = capped(0.97, "rows came back", {"unexplained_words": 1.0}, Figures(unexplained=["giraffe"]))
    assert stated == UNEXPLAINED_CEILING
    assert "'giraffe' matches nothing in the graph's schema" in why


def test_a_word_the_query_does_not_use_caps_it_lower_and_is_named() -> None:
    stated, why = capped(0.97, "rows came back", {"unused_words": 2.0}, Figures(unused=["icao", "code"]))
    assert stated == UNUSED_CEILING < UNEXPLAINED_CEILING
    assert "the query does not use what the question's 'icao' and 'code' mean" in why


def test_the_ceilings_lower_only_and_only_when_present() -> None:
    assert capped(0.2, "", {"unused_words": 1.0}, Figures(unused=["icao"]))[0] == 0.2
    assert capped(0.97, "", {"unused_words": 0.0, "unexplained_words": 0.0}, Figures())[0] == 0.97
