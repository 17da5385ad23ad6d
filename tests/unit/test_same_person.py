"""Names compared as people read them (overrides/same_person.py), and the self-approval rule that uses them."""

from __future__ import annotations

import pytest

from contracts.override import Override, OverrideRejected, OverrideRequest, Role
from contracts.run import AgentSettings
from overrides.checks import check_override
from overrides.same_person import comparable, mixes_scripts, same_person

APPROVAL = OverrideRequest(
    step_id="approve",
    function="PurchaseOrder.makePayment",
    score=0.95,
    threshold=0.9,
    reasoning="approval needed",
    retries=0,
    choices=["accept", "skip", "abort"],
    timeout_s=60,
    role=Role.APPROVE,
)
OPEN = AgentSettings(open_actions=True)


def approve(by: str, requester: str) -> str:
    override = Override(step_id="approve", decision="accept", by=by)
    return check_override(override, APPROVAL, {"approve"}, OPEN, "agent-x", requester).value


@pytest.mark.parametrize(
    "variant",
    [
        "Alice",
        "ALICE",
        " alice ",
        "alice\u200b",
        "al\u00adice",
        "\u2060alice",
        "ａｌｉｃｅ",  # case, invisibles, width
        "\u0430lice",
        "al\u0456ce",  # one Cyrillic letter: mixed scripts, and the skeleton of "alice"
        "\u0391lice",
        "a\u200dl\u200ci\u200ece",  # Greek capital alpha; joiners and a direction mark
        "ali\u0441e\ufe0f",  # Cyrillic es with a variation selector
        "\u1d00lice",  # a Latin small capital A: one script, no mixing to see
        "a\ua781ice",  # a Latin turned l
        "al\u0131ce",  # a dotless i
    ],
)
def test_a_name_that_reads_as_the_requesters_is_the_requester(variant: str) -> None:
    assert same_person(variant, "alice")
    with pytest.raises(OverrideRejected, match="may not approve its own request"):
        approve(variant, "alice")


def test_a_name_spelled_wholly_in_another_script_is_matched_by_its_skeleton() -> None:
    cyrillic = "\u0421\u0430\u0455\u0435\u0443"  # "Casey" in Cyrillic letters only: no mixing to see
    assert not mixes_scripts(cyrillic) and same_person(cyrillic, "casey")
    with pytest.raises(OverrideRejected, match="may not approve its own request"):
        approve(cyrillic, "casey")
    assert same_person("b0b", "bob") and same_person("Ian", "lan") and same_person("rnallory", "mallory")


def test_a_name_mixing_scripts_approves_nothing_but_names_written_together_do() -> None:
    with pytest.raises(OverrideRejected, match="mixes scripts"):
        approve("\u043ell\u0435", "mallory")  # "olle" with Cyrillic o and e: no one's name
    for name in ("José", "Zoë", "Ελένη", "山田たろう", "김철수", "Dana 李", "Дмитрий"):
        assert not mixes_scripts(name), name
        assert approve(name, "mallory") == "accept"


def test_someone_else_still_approves_and_an_invisible_name_is_no_name() -> None:
    assert approve("ops", "alice") == "accept"
    assert not same_person("dana", "ana") and not same_person("ops", "mallory")
    assert comparable("\u200b\u2060 ") == ""
    with pytest.raises(OverrideRejected, match="may not approve its own request"):
        approve("\u200b", "alice")
