"""An answer states what was asked: the row a superlative's query ranked first, a name for "which", a figure for
"how many"; otherwise the rows give the answer and the confidence says so."""

from __future__ import annotations

import json

from confidence.answer_fit import fit, ranked_count, refit, superlative
from confidence.calibrator import INADEQUATE_CEILING, PARTIAL_LIST_CEILING, capped
from cypher.text import ordered_by

RANKED = json.dumps(
    {
        "columns": ["supplier", "orders"],
        "ordered_by": "orders DESC",
        "rows": [["Acme Industrial", 135], ["Globex Supply", 80], ["Initech", 80], ["Sirius Industrial", 29]],
    }
)


def test_a_superlative_answer_naming_another_row_is_replaced_by_the_first() -> None:
    question = "Which supplier has the most purchase orders?"
    how, answer = refit(question, "Sirius Industrial has the most purchase orders with 29.", [RANKED]) or ("", "")
    assert how == "ranked"
    assert answer.startswith("Acme Industrial (orders: 135): first of the 4 rows")
    assert fit(question, answer, [RANKED]).ranked_first


def test_a_superlative_answer_naming_the_first_row_stands() -> None:
    question = "Which supplier has the most purchase orders?"
    answer = "Acme Industrial has the most purchase orders (135)."
    assert refit(question, answer, [RANKED]) is None
    assert fit(question, answer, [RANKED]).features() == {"ranked_first": 1.0, "inadequate": 0.0, "partial_list": 0.0}


def test_top_k_asks_for_k_rows_and_ties_share_a_rank() -> None:
    question = "Which are the two suppliers with the most orders?"
    assert ranked_count(question) == 2 and ranked_count("the top 3 suppliers") == 3
    assert refit(question, "Acme Industrial and Globex Supply.", [RANKED]) is None
    assert refit(question, "Acme Industrial and Initech.", [RANKED]) is None  # Initech ties with Globex
    how, answer = refit(question, "Acme Industrial.", [RANKED]) or ("", "")
    assert how == "ranked" and "Globex Supply" in answer and "Initech" in answer


def test_rows_in_no_stated_order_are_not_read_as_a_ranking() -> None:
    unordered = json.dumps({"columns": ["supplier", "orders"], "rows": [["Sirius Industrial", 29], ["Acme", 135]]})
    assert refit("Which supplier has the most orders?", "Sirius Industrial, 29.", [unordered]) is None


def test_superlatives_are_words_in_lower_case_not_names_or_lookalikes() -> None:
    assert superlative("Which is the longest track on the album?")
    assert superlative("Name the three dullest cities")
    assert not superlative("Which requests of Budapest earn interest?")
    assert not superlative("Which countries border France?")


def test_a_which_question_answered_from_rows_of_figures_only_is_inadequate_and_capped() -> None:
    rows = json.dumps({"columns": ["duration"], "rows": [[2616981]]})
    verdict = fit("Which is the longest track on the album Big Ones?", "2616981", [rows])
    assert verdict.inadequate
    probability, reasons = capped(0.9, "calibrated", verdict.features())
    assert probability == INADEQUATE_CEILING and "lacks what was asked" in reasons


def test_a_how_many_answered_without_a_figure_is_restated_from_the_rows() -> None:
    rows = json.dumps({"columns": ["name"], "rows": [["Acme"], ["Globex"], ["Initech"]]})
    how, answer = refit("How many suppliers are in Germany?", "Acme, Globex and Initech are there.", [rows]) or ("", "")
    assert how == "restated" and "3 rows" in answer
    assert refit("How many suppliers are in Germany?", "Three: Acme, Globex and Initech.", [rows]) is None


def test_a_which_answer_naming_nothing_the_rows_hold_is_restated() -> None:
    rows = json.dumps({"columns": ["country"], "rows": [["Austria"], ["Hungary"]]})
    how, answer = refit("Which countries border Slovakia?", "It has two neighbours.", [rows]) or ("", "")
    assert how == "restated" and "Austria" in answer and "Hungary" in answer
    assert refit("Which countries border Slovakia?", "Austria and Hungary.", [rows]) is None


def test_text_results_are_not_judged_by_the_shape_of_rows() -> None:
    assert refit("Which poem is the saddest?", "The one about the sea.", ["A completion, not rows"]) is None
    assert not fit("How many lines does it have?", "Several.", ["A completion"]).inadequate


def test_the_order_of_the_final_rows_is_read_from_the_last_return() -> None:
    assert ordered_by("MATCH (s)<-[:FROM]-(o) RETURN s.name, count(o) AS n ORDER BY n DESC LIMIT 5") == "n DESC"
    assert ordered_by("MATCH (s) WITH s ORDER BY s.x LIMIT 3 RETURN s.name") is None
    assert ordered_by("MATCH (s) WHERE s.n = 'ORDER BY x' RETURN s") is None


BORDERS = json.dumps(
    {
        "columns": ["country", "region"],
        "rows": [["Austria", "Europe"], ["Hungary", "Europe"], ["Poland", "Europe"], ["Ukraine", "Europe"]],
    }
)


def test_a_list_answer_leaving_rows_out_is_restated_from_every_row() -> None:
    question = "Which countries border Slovakia?"
    answer = "Slovakia borders Austria and Hungary."
    # Measured: of 29 recorded list answers that left rows out, 25 were wrong; the rows were the answer.
    how, restated = refit(question, answer, [BORDERS]) or ("", "")
    assert how == "restated" and all(name in restated for name in ("Austria", "Hungary", "Poland", "Ukraine"))
    assert not fit(question, restated, [BORDERS]).partial_list
    verdict = fit(question, answer, [BORDERS])  # as written, it is doubted and capped
    assert verdict.partial_list
    probability, reasons = capped(0.87, "calibrated", verdict.features())
    assert probability == PARTIAL_LIST_CEILING and "only some of the rows" in reasons


def test_a_list_answer_naming_every_row_stands_and_a_shared_text_names_no_row() -> None:
    complete = "Austria, Hungary, Poland and Ukraine, all in Europe."
    assert not fit("Which countries border Slovakia?", complete, [BORDERS]).partial_list
    # "Europe" is in every row: it does not name Poland or Ukraine
    assert fit("List the countries that border Slovakia.", "Austria and Hungary, in Europe.", [BORDERS]).partial_list


def test_singular_superlative_and_counting_questions_are_not_held_to_every_row() -> None:
    def partial(question: str, answer: str = "Austria.", outputs: list[str] = [BORDERS]) -> bool:  # noqa: B006
        return fit(question, answer, outputs).partial_list

    assert not partial("Which country borders Slovakia to the south-west?")
    assert not partial("Which countries have the largest area?")
    assert not partial("How many countries border Slovakia, and which?", "4: Austria and others.")
    assert not partial("Which countries border Slovakia?", outputs=[BORDERS, BORDERS])  # which result is listed?
    assert not partial("What was the population of Austria?")
    assert not partial("Which class is Austria in?")


def test_a_figure_other_than_the_one_row_of_figures_is_restated() -> None:
    distance = json.dumps({"columns": ["relationships_between"], "rows": [[3]]})
    question = "How many relationships lie on the shortest path between Hufuf and Nepal?"
    how, restated = refit(question, "There is 1 relationship between them.", [distance]) or ("", "")
    assert how == "restated" and "relationships_between: 3" in restated
    assert refit(question, "Three relationships lie between them.", [distance]) is None
    average = json.dumps({"columns": ["avg_area"], "rows": [[1234.5678]]})
    assert refit("What is the average area?", "About 1,234.57 on average.", [average]) is None  # rounded as written


def test_a_list_asked_after_what_it_is_drawn_from_is_a_list() -> None:
    question = "Of the countries that border Slovakia, which lie in Europe?"
    assert fit(question, "Austria and Hungary.", [BORDERS]).partial_list


def test_a_superlative_figure_other_than_the_one_aggregate_row_is_restated() -> None:
    question = "What is the highest population of the countries Nigeria is connected to through neighbour of?"
    rows = [json.dumps({"columns": ["max_population"], "rows": [[25216237]]})]
    restated = refit(question, "The highest population is 195874740.", rows)
    assert restated is not None and "25216237" in restated[1]
    assert refit(question, "The highest population is 25,216,237.", rows) is None
    # a row that names what it ranks is answered by the name
    ranked = [json.dumps({"columns": ["country", "population"], "rows": [["China", 1411778724]]})]
    assert refit("What is the most populous country?", "China.", ranked) is None
    # not a superlative: a figure the named thing's stored facts gave stands (the rows are not all there is)
    assert refit("What rating does Acme have?", "Acme is rated 4.5.", [json.dumps({"rows": [[7]]})]) is None


def test_a_ranking_answer_that_misstates_a_leaders_figure_is_read_from_the_ranking() -> None:
    rows = [["Acme", 135], ["Globex", 56], ["Umbrella", 31], ["Sirius", 29]]
    ranked = [json.dumps({"columns": ["supplier", "orders"], "rows": rows, "ordered_by": "orders DESC"})]
    question = "Which three suppliers have the most purchase orders, and how many does each have?"
    wrong = refit(question, "They are Acme, Globex and Umbrella. Each of them has 135 purchase orders.", ranked)
    assert wrong is not None and wrong[0] == "ranked" and "Globex (orders: 56)" in wrong[1]
    assert refit(question, "Acme (135), Globex (56) and Umbrella (31), the top 3.", ranked) is None
