"""What an action request states about its targets, against what the planned selection uses.

An action that reaches more entities than were asked for is the worst failure of an agent that changes
data: "pay the approved orders of Northwind Traders" planned as "every approved order" pays twelve times
what was asked. So the planner's intent is held against the request itself:

- every name the request gives that the graph holds (a supplier, a country, an order's id), every value
  of the targets' own properties it states as a word ("approved", "unpaid"), every number and date it
  states, must be used by the target selection;
- what the intent leaves out is added when the request can mean it one way only and nothing in the
  request reads as a negation (a named supplier becomes the related entity, a stated status a filter);
- what is still not used is listed as left out: the targets' confidence is then held far below approval,
  and the approval card says first what was left out. So are ids and related entities the plan selects
  by that the request never names.

This module runs the steps in order. What the request states is read in actions/scope_stated.py (its words
in scope_words.py); the selection being fitted is actions/scope_selection.py; the steps are in
scope_plan_checks.py (what the plan chose that the request does not support), scope_names.py (the names it
gives) and scope_conditions.py (the values of the targets' properties it states). Pure: the graph look-ups
that find the request's names and the targets' stored values are backends/action_scope.py's, and arrive as a
`RequestScope` (actions/request_scope.py). Nothing here knows a domain: every name comes from the ontology or
the graph.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from actions.ontology import Ontology
from actions.request_scope import RequestScope
from actions.scope_conditions import check_numbers, fit_categories, fit_flags
from actions.scope_names import fit_names
from actions.scope_plan_checks import (
    check_invented,
    check_negation,
    drop_misplaced_values,
    drop_non_names,
    drop_written_values,
    fit_parameters,
    restore_unreplaced_name,
)
from actions.scope_selection import Selection
from contracts.action_path import ActionIntent


@dataclass
class FittedIntent:
    intent: ActionIntent
    added: list[str] = field(default_factory=list)  # what was added to (or dropped from) the selection, and why
    left_out: list[str] = field(default_factory=list)  # what the request states and the selection ignores


def fit_intent(ontology: Ontology, intent: ActionIntent, request: str, scope: RequestScope) -> FittedIntent:
    """The intent with what the request states one way only added, and what it still leaves out."""
    selection = Selection(ontology, intent, request, scope)
    # The order matters: names are fitted after the plan's own non-names are dropped, and a dropped name
    # is restored only if none of the request's names took its place.
    check_invented(selection)
    drop_non_names(selection)
    fit_parameters(selection)
    drop_written_values(selection)
    drop_misplaced_values(selection)
    check_negation(selection)
    fit_names(selection)
    restore_unreplaced_name(selection)
    fit_categories(selection)
    fit_flags(selection)
    check_numbers(selection)
    return FittedIntent(intent=selection.intent, added=selection.added, left_out=selection.left_out)
