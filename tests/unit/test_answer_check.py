"""An answer is checked against the results it was written from: what it states that they lack is found."""

from __future__ import annotations

import json

from confidence.answer_check import absence_answer, compose_from_rows, declines, unsupported_claims

ROWS = json.dumps(
    {
        "columns": ["supplier", "orders"],
        "rows": [["Acme Industrial", 135], ["Globex Supply", 56]],
        "row_count": 2,
        "truncated": False,
    }
)
QUESTION = "Which two suppliers have the most purchase orders?"


def test_an_answer_made_of_the_results_is_supported() -> None:
    answer = "Acme Industrial has the most purchase orders (135), followed by Globex Supply with 56."
    assert unsupported_claims(answer, f"{QUESTION}\n{ROWS}", {"PurchaseOrder", "Supplier"}) == []


def test_an_invented_name_and_an_invented_figure_are_found() -> None:
    answer = "Initech Corp leads with 212 orders, ahead of Acme Industrial with 135."
    assert unsupported_claims(answer, f"{QUESTION}\n{ROWS}") == ["212", "Initech", "Corp"]


def test_figures_match_as_numbers_and_as_rounded_by_the_answer() -> None:
    evidence = json.dumps({"rows": [[1234.5], [4.25], [0.333333]]})
    assert unsupported_claims("Totals: 1,234.50 and 4.3 and 0.33.", evidence) == []
    assert unsupported_claims("The average is 4.4.", evidence) == ["4.4"]


def test_list_numbering_schema_words_and_the_calendar_need_no_support() -> None:
    answer = "1. Suppliers in March: Acme Industrial\n2. Orders: 135"
    assert unsupported_claims(answer, ROWS, {"Supplier", "Order"}) == []


def test_composed_answers_state_the_rows_or_plainly_that_there_are_none() -> None:
    composed = compose_from_rows(QUESTION, [ROWS])
    assert "- supplier: Acme Industrial; orders: 135" in composed and "Globex Supply" in composed
    assert composed.startswith("From the knowledge graph, 2 rows:")  # "how many" over a list: the count is said
    many = json.dumps({"columns": ["id"], "rows": [[f"SUP-{i:03d}"] for i in range(24)], "row_count": 24})
    assert compose_from_rows("How many suppliers deliver to Lyon?", [many]).startswith(
        "From the knowledge graph, 24 rows, the first 20 shown:"
    )
    empty = json.dumps({"columns": ["po"], "rows": [], "row_count": 0, "names_not_in_the_graph": ["Zyxwv Holdings"]})
    assert "nothing named 'Zyxwv Holdings'" in compose_from_rows("What did Zyxwv Holdings order?", [empty])
    none = json.dumps({"columns": ["po"], "rows": [], "row_count": 0})
    assert "no records that match" in compose_from_rows("Which orders are late?", [none])
    assert compose_from_rows("q", ["Key topics: the EU AI Act."]) == "Key topics: the EU AI Act."


def test_an_aggregate_answered_from_the_row_count_is_caught() -> None:
    """One row holding a count: "1" is the number of rows, not the answer, so it needs support too."""
    count = json.dumps({"columns": ["orders"], "rows": [[7]], "row_count": 1, "truncated": False})
    assert unsupported_claims("There is 1 order.", count, outputs=[count]) == ["1"]
    assert unsupported_claims("There are 7 orders.", count, outputs=[count]) == []
    listing = json.dumps({"columns": ["po"], "rows": [["PO-1"], ["PO-2"]], "row_count": 2})
    assert unsupported_claims("PO-1 is one of 2 orders; 1 is late.", listing, outputs=[listing]) == []


def test_empty_results_about_a_name_found_nowhere_are_answered_as_absence() -> None:
    outputs = ['{"columns":["capital"],"rows":[],"names_not_in_the_graph":["Bracovia"]}']
    answer = absence_answer(outputs)
    assert answer is not None and "'Bracovia'" in answer and "no such entity" in answer


def test_a_count_of_zero_over_a_name_found_nowhere_is_answered_as_absence_not_as_zero() -> None:
    counted = ['{"columns":["orders"],"rows":[[0]],"names_not_in_the_graph":["Kestrel Metals"]}']
    answer = absence_answer(counted)
    assert answer is not None and "'Kestrel Metals'" in answer
    assert absence_answer(['{"columns":["orders","total"],"rows":[[0, 12.5]],"names_not_in_the_graph":["X"]}']) is None
    assert absence_answer(['{"columns":["o"],"rows":[[0],[0]],"names_not_in_the_graph":["X"]}']) is None


def test_absence_is_not_claimed_when_any_result_has_rows_or_no_name_is_missing() -> None:
    with_rows = ['{"columns":["n"],"rows":[[3]],"names_not_in_the_graph":["Bracovia"]}']
    all_named = ['{"columns":["n"],"rows":[]}']
    text = ['{"columns":["n"],"rows":[],"names_not_in_the_graph":["X"]}', "a paragraph of generated text"]
    assert absence_answer(with_rows) is None
    assert absence_answer(all_named) is None
    assert absence_answer(text) is None
    assert absence_answer([]) is None


def test_a_result_whose_missing_names_are_null_names_none() -> None:
    """A tool's JSON (an MCP server's, say) may hold null where the list would be: read as no names, not a crash."""
    nulled = '{"columns":["n"],"rows":[],"names_not_in_the_graph":null}'
    assert absence_answer([nulled]) is None
    assert "no records that match" in compose_from_rows("Which orders are late?", [nulled])


def test_the_digits_of_an_id_support_no_count() -> None:
    """24 suppliers listed, one of them SUP-015: "15 distinct suppliers" miscounts, it is not in the rows."""
    rows = json.dumps({"columns": ["id"], "rows": [[f"SUP-{i:03d}"] for i in range(1, 25)], "row_count": 24})
    question = "How many distinct suppliers deliver to Lyon?"
    assert unsupported_claims("There are 15 distinct suppliers.", f"{question}\n{rows}", outputs=[rows]) == ["15"]
    assert unsupported_claims("There are 24 distinct suppliers.", f"{question}\n{rows}", outputs=[rows]) == []
    assert unsupported_claims("SUP-015 is one of them.", rows, outputs=[rows]) == []


def test_a_total_or_mean_of_a_column_of_figures_is_computed_from_the_rows() -> None:
    rows = json.dumps(
        {
            "columns": ["country", "population"],
            "rows": [["Fiji", 859178], ["Vanuatu", 264652], ["Papua New Guinea", 7398500]],
            "row_count": 3,
        }
    )
    question = "On average, how many people live in a country of Melanesia?"
    evidence = f"{question}\n{rows}"
    assert unsupported_claims("On average 2,840,777 people live in each.", evidence, outputs=[rows]) == []
    assert unsupported_claims("Together 8,522,330 people live there.", evidence, outputs=[rows]) == []
    assert unsupported_claims("On average 2,900,000 people live in each.", evidence, outputs=[rows]) == ["2,900,000"]


def test_an_answer_saying_the_rows_lack_what_was_asked_declines_only_when_rows_came_back() -> None:
    rows = [json.dumps({"columns": ["invoice"], "rows": [["INV-1"]]})]
    for said in (
        "The supplier paid by PAY-1 is not listed in the results.",
        "The data does not show a supplier.",
        "The supplier cannot be determined.",
        "There is no information about the supplier.",
    ):
        assert declines(said, rows), said
    # about the things in the rows, not the rows themselves: an answer
    assert not declines("PO-1 does not include a pump.", rows)
    assert not declines("INV-1 is the first invoice.", rows)
    # nothing came back (or a count of 0): saying so is the answer
    assert not declines("The results do not show any supplier.", [json.dumps({"columns": ["n"], "rows": [[0]]})])
