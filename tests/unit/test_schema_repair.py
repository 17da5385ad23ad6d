"""Schema-driven query repairs: each rewrites only what one schema reading allows, and gives up otherwise."""

from __future__ import annotations

from cypher.neighbour_repair import neighbour_property
from cypher.property_repair import count_as_property, moved_property
from cypher.relationship_repair import through_middle, unknown_type_hops
from cypher.schema_repair import display_property, label_paths
from cypher.unbound_repair import bound_instead, joined_for_reads, matched_for, undefined_name

NODES = {
    "Team": ["name", "city"],
    "Player": ["name", "number"],
    "Match": ["played_on"],
    "Stadium": ["name", "capacity"],
    "Coach": ["full_name"],
}
RELS = {
    ("Player", "PLAYS_FOR", "Team"),
    ("Team", "HOSTED", "Match"),
    ("Match", "PLAYED_AT", "Stadium"),
    ("Coach", "TRAINS", "Team"),
    ("Team", "RIVAL_OF", "Team"),
}


def test_a_neighbour_read_as_a_property_is_matched_through_its_one_shortest_path() -> None:
    query = "MATCH (p:Player {name: 'p.team'}) WHERE p.team <> 'x' RETURN p.team AS team"
    assert neighbour_property(query, "Player", "team", NODES, RELS) == (
        "MATCH (p:Player {name: 'p.team'}) MATCH (p)-[:PLAYS_FOR]->(team1:Team) "
        "WHERE team1.name <> 'x' RETURN team1.name AS team"
    )


def test_a_relationship_type_read_as_a_property_leads_to_the_node_at_its_far_end() -> None:
    query = "MATCH (m:Match) RETURN m.played_at"
    assert neighbour_property(query, "Match", "played_at", NODES, RELS) == (
        "MATCH (m:Match) MATCH (m)-[:PLAYED_AT]->(stadium1:Stadium) RETURN stadium1.name"
    )


def test_a_neighbour_two_hops_away_reads_the_property_its_suffix_names() -> None:
    query = "MATCH (p:Player {number: 7}) RETURN p.coach_name"
    assert neighbour_property(query, "Player", "coach_name", NODES, RELS) == (
        "MATCH (p:Player {number: 7}) MATCH (p)-[:PLAYS_FOR]->(:Team)<-[:TRAINS]-(coach1:Coach) RETURN coach1.full_name"
    )


def test_neighbour_property_gives_up_when_a_guess_would_be_needed() -> None:
    # no label or relationship of that name
    assert neighbour_property("MATCH (p:Player) RETURN p.salary", "Player", "salary", NODES, RELS) is None
    # bound by OPTIONAL MATCH: a required MATCH would drop the rows without a team
    assert neighbour_property("OPTIONAL MATCH (p:Player) RETURN p.team", "Player", "team", NODES, RELS) is None
    # the variable reading it is not of that label
    assert neighbour_property("MATCH (t:Team) RETURN t.team", "Player", "team", NODES, RELS) is None
    # two shortest paths lead there
    two_ways = RELS | {("Player", "BOOKED_FOR", "Match"), ("Player", "SCORED_IN", "Match")}
    assert neighbour_property("MATCH (p:Player) RETURN p.match", "Player", "match", NODES, two_ways) is None
    # a WITH that does not pass the variable on: the neighbour cannot be reached after it
    assert neighbour_property("MATCH (p:Player) WITH p.name AS n RETURN p.team", "Player", "team", NODES, RELS) is None
    # read in a WITH's WHERE, before the point the neighbour's MATCH could go
    assert (
        neighbour_property("MATCH (p:Player) WITH p WHERE p.team = 'x' RETURN p.name", "Player", "team", NODES, RELS)
        is None
    )


def test_a_neighbour_read_after_a_with_is_matched_after_that_with() -> None:
    query = "MATCH (p:Player {name: 'Al'}) WITH p, count(p) AS n ORDER BY n DESC LIMIT 1 RETURN p.team AS team"
    assert neighbour_property(query, "Player", "team", NODES, RELS) == (
        "MATCH (p:Player {name: 'Al'}) WITH p, count(p) AS n ORDER BY n DESC LIMIT 1 "
        "MATCH (p)-[:PLAYS_FOR]->(team1:Team) RETURN team1.name AS team"
    )


def test_a_neighbour_read_by_its_id_is_returned_with_its_name() -> None:
    nodes = {**NODES, "Team": ["name", "team_id"]}
    assert neighbour_property(
        "MATCH (p:Player {number: 7}) RETURN p.team_id AS team", "Player", "team_id", nodes, RELS
    ) == (
        "MATCH (p:Player {number: 7}) MATCH (p)-[:PLAYS_FOR]->(team1:Team) "
        "RETURN team1.team_id AS team, team1.name AS team_name"
    )


def test_display_property_prefers_the_same_name_then_the_suffix_then_a_name() -> None:
    assert display_property(["name", "team_id"], "team_id") == "team_id"
    assert display_property(["name", "code"], "team_code") == "code"
    assert display_property(["capacity", "name"], "stadium") == "name"
    assert display_property(["full_name"], "coach") == "full_name"
    assert display_property(["capacity"], "stadium") is None


def test_two_labels_joined_only_through_a_third_are_bridged() -> None:
    original = "(p:Player {name: 'Kim'})-[:HOSTED]->(m:Match)"
    assert through_middle(original, "(:Player)-[:HOSTED]->(:Match)", RELS) == (
        "(p:Player {name: 'Kim'})-[:PLAYS_FOR]->(:Team)-[:HOSTED]->(m:Match)"
    )


def test_a_bridge_keeps_an_unused_relationship_variable_out_and_refuses_a_used_one() -> None:
    original = "(p:Player)-[r:HOSTED]->(m:Match)"
    path = "(:Player)-[:HOSTED]->(:Match)"
    assert through_middle(original, path, RELS, f"MATCH {original} RETURN m") == (
        "(p:Player)-[:PLAYS_FOR]->(:Team)-[:HOSTED]->(m:Match)"
    )
    assert through_middle(original, path, RELS, f"MATCH {original} RETURN type(r)") is None


def test_no_bridge_where_labels_join_directly_or_not_through_one_label() -> None:
    assert through_middle("(p:Player)-[:X]->(t:Team)", "(:Player)-[:X]->(:Team)", RELS) is None
    assert through_middle("(p:Player)-[:X]->(s:Stadium)", "(:Player)-[:X]->(:Stadium)", RELS) is None
    assert through_middle("(p:Player)-[:X*1..3]->(m:Match)", "(:Player)-[:X]->(:Match)", RELS) is None
    # the query places a Team itself: the model had its own idea where the team goes
    placed = "MATCH (p:Player)-[:HOSTED]->(m:Match)-[:X]->(t:Team) RETURN count(t)"
    assert through_middle("(p:Player)-[:HOSTED]->(m:Match)", "(:Player)-[:HOSTED]->(:Match)", RELS, placed) is None
    # an anonymous Team (an earlier bridge's) is no such place
    bridged = (
        "MATCH (q:Player)-[:PLAYS_FOR]->(:Team)-[:HOSTED]->(m:Match) MATCH (p:Player)-[:HOSTED]->(m:Match) RETURN m"
    )
    assert through_middle("(p:Player)-[:HOSTED]->(m:Match)", "(:Player)-[:HOSTED]->(:Match)", RELS, bridged) == (
        "(p:Player)-[:PLAYS_FOR]->(:Team)-[:HOSTED]->(m:Match)"
    )


def test_label_paths_returns_every_shortest_path_and_none_past_the_hop_limit() -> None:
    assert label_paths("Player", "Stadium", RELS) == [
        [("Player", "PLAYS_FOR", "Team"), ("Team", "HOSTED", "Match"), ("Match", "PLAYED_AT", "Stadium")]
    ]
    assert label_paths("Player", "Stadium", RELS, max_hops=2) == []


def test_an_unbound_variable_becomes_the_one_bound_variable_whose_label_has_what_is_read() -> None:
    assert undefined_name("'x' not defined") == "x"
    assert undefined_name("Unknown function 'now'") is None
    query = "MATCH (s:Stadium {name: 'x.capacity'}) RETURN x.capacity"
    assert bound_instead(query, "x", NODES) == "MATCH (s:Stadium {name: 'x.capacity'}) RETURN s.capacity"
    bare = "MATCH (s:Stadium)<-[:PLAYED_AT]-(m:Match) RETURN m.played_on ORDER BY capacity DESC"
    assert bound_instead(bare, "capacity", NODES) == (
        "MATCH (s:Stadium)<-[:PLAYED_AT]-(m:Match) RETURN m.played_on ORDER BY s.capacity DESC"
    )
    unnamed = "MATCH (t:Team {name: 'Reds'})<-[:PLAYS_FOR]-(:Player) RETURN count(players) AS squad"
    assert bound_instead(unnamed, "players", NODES) == (
        "MATCH (t:Team {name: 'Reds'})<-[:PLAYS_FOR]-(players:Player) RETURN count(players) AS squad"
    )


def test_an_unbound_variable_is_left_alone_when_several_or_none_fit_or_it_is_an_alias() -> None:
    assert bound_instead("MATCH (p:Player)-[:PLAYS_FOR]->(t:Team) RETURN x.name", "x", NODES) is None
    assert bound_instead("MATCH (p:Player) RETURN x.capacity", "x", NODES) is None
    assert (
        bound_instead(
            "MATCH (:Player)-[:PLAYS_FOR]->(t:Team)<-[:PLAYS_FOR]-(:Player) RETURN count(player)", "player", NODES
        )
        is None
    )  # two unnamed players: which one is meant is a guess
    assert bound_instead("MATCH (s:Stadium) WITH s.capacity AS cap RETURN cap.name", "cap", NODES) is None


def test_an_unbound_variable_names_the_one_unnamed_node_that_has_what_is_read() -> None:
    # a named Team has a name too, but the model wrote the Player node and forgot to name it
    query = "MATCH (t:Team {name: 'Reds'})<-[:PLAYS_FOR]-(:Player) WHERE x.number > 9 RETURN x.name"
    assert bound_instead(query, "x", NODES) == (
        "MATCH (t:Team {name: 'Reds'})<-[:PLAYS_FOR]-(x:Player) WHERE x.number > 9 RETURN x.name"
    )
    counted = "MATCH (t:Team {name: 'Reds'})<-[:PLAYS_FOR]-(:Player) WITH t, count(q) AS n RETURN n"
    assert bound_instead(counted, "q", NODES) == (
        "MATCH (t:Team {name: 'Reds'})<-[:PLAYS_FOR]-(q:Player) WITH t, count(q) AS n RETURN n"
    )
    # two unnamed nodes with a name: only the one starting like the variable fits
    two = "MATCH (:Team)<-[:TRAINS]-(:Coach) MATCH (:Stadium) RETURN s.name"
    assert bound_instead(two, "s", NODES) == "MATCH (:Team)<-[:TRAINS]-(:Coach) MATCH (s:Stadium) RETURN s.name"


def test_a_property_read_from_a_node_that_lacks_it_moves_to_the_one_node_that_has_it() -> None:
    query = "MATCH (m:Match)-[:PLAYED_AT]->(:Stadium) WHERE m.capacity > 100 RETURN count(DISTINCT m.capacity)"
    assert moved_property(query, "Match", "capacity", NODES) == (
        "MATCH (m:Match)-[:PLAYED_AT]->(stadium1:Stadium) WHERE stadium1.capacity > 100 "
        "RETURN count(DISTINCT stadium1.capacity)"
    )
    named = "MATCH (m:Match)-[:PLAYED_AT]->(s:Stadium) RETURN m.capacity"
    assert moved_property(named, "Match", "capacity", NODES) == (
        "MATCH (m:Match)-[:PLAYED_AT]->(s:Stadium) RETURN s.capacity"
    )
    # two nodes have a name: which one was meant is a guess; nobody has a salary
    assert (
        moved_property(
            "MATCH (m:Match)<-[:HOSTED]-(t:Team)<-[:PLAYS_FOR]-(p:Player) RETURN m.name", "Match", "name", NODES
        )
        is None
    )
    assert moved_property("MATCH (m:Match)-[:PLAYED_AT]->(s:Stadium) RETURN m.salary", "Match", "salary", NODES) is None


def test_an_invented_relationship_type_is_found_with_the_labels_it_joins() -> None:
    query = "MATCH (s:Stadium {name: 'Arena'})-[:HOSTS_GAME]->(m) MATCH (t:Team)-[r:OWNS]->(s) RETURN t.name"
    assert unknown_type_hops(query, "OWNS") == [("(t:Team)-[r:OWNS]->(s)", "(:Team)-[:OWNS]->(:Stadium)")]
    assert unknown_type_hops(query, "HOSTS_GAME") == []  # (m) has no label: nothing to correct it against


def test_a_count_named_after_a_stored_property_returns_the_property() -> None:
    query = "MATCH (s:Stadium {name: 'Arena'})<-[:PLAYED_AT]-(m:Match) RETURN count(m) AS capacity"
    assert count_as_property(query, NODES) == (
        "MATCH (s:Stadium {name: 'Arena'})<-[:PLAYED_AT]-(m:Match) RETURN DISTINCT s.capacity AS capacity"
    )
    grouped = "MATCH (s:Stadium)<-[:PLAYED_AT]-(m:Match) RETURN s.name AS name, count(*) AS capacity, count(m) AS n"
    assert count_as_property(grouped, NODES) == (
        "MATCH (s:Stadium)<-[:PLAYED_AT]-(m:Match) RETURN s.name AS name, s.capacity AS capacity, count(m) AS n"
    )
    # a count named after nothing stored, or after what two nodes store, is a count
    assert count_as_property("MATCH (t:Team)<-[:PLAYS_FOR]-(p:Player) RETURN count(p) AS players", NODES) is None
    assert count_as_property("MATCH (t:Team)<-[:PLAYS_FOR]-(p:Player) RETURN count(p) AS name", NODES) is None


def test_an_unbound_name_with_a_label_is_matched_from_the_one_bound_node_joined_to_that_label() -> None:
    # The model counted the team's players as `p:Player {team: t}`: FalkorDB says "'p' not defined".
    query = (
        "MATCH (t:Team {name: 'Lions'})-[:HOSTED]->(m:Match) "
        "RETURN t.city AS city, count(DISTINCT p:Player {team: t}) AS players"
    )
    assert matched_for(query, "p", NODES, RELS) == (
        "MATCH (t:Team {name: 'Lions'})-[:HOSTED]->(m:Match) OPTIONAL MATCH (t)<-[:PLAYS_FOR]-(p:Player) "
        "RETURN t.city AS city, count(DISTINCT p) AS players"
    )
    # A name spelling the label works the same way.
    assert matched_for("MATCH (t:Team {name: 'Lions'}) RETURN count(players) AS n", "players", NODES, RELS) == (
        "MATCH (t:Team {name: 'Lions'}) OPTIONAL MATCH (t)<-[:PLAYS_FOR]-(players:Player) RETURN count(players) AS n"
    )


def test_a_plain_label_expression_and_its_literal_properties_are_matched_too() -> None:
    assert matched_for("MATCH (t:Team {name: 'Lions'}) RETURN count(p:Player) AS n", "p", NODES, RELS) == (
        "MATCH (t:Team {name: 'Lions'}) OPTIONAL MATCH (t)<-[:PLAYS_FOR]-(p:Player) RETURN count(p) AS n"
    )
    # A compared value is kept as a condition; a variable there is the join itself.
    assert matched_for(
        "MATCH (t:Team {name: 'Lions'}) RETURN count(DISTINCT p:Player {number: 9, team: t})", "p", NODES, RELS
    ) == (
        "MATCH (t:Team {name: 'Lions'}) OPTIONAL MATCH (t)<-[:PLAYS_FOR]-"
        "(p:Player {number: 9}) RETURN count(DISTINCT p)"
    )


def test_an_unbound_labelled_name_is_left_alone_when_the_schema_leaves_a_doubt() -> None:
    # Two bound Teams join Player: which team is a guess.
    two_teams = "MATCH (a:Team {name: 'A'})-[:RIVAL_OF]->(b:Team) RETURN count(DISTINCT p:Player) AS n"
    assert matched_for(two_teams, "p", NODES, RELS) is None
    # The label is matched already (another repair names that node).
    assert (
        matched_for("MATCH (t:Team)<-[:PLAYS_FOR]-(:Player) RETURN count(DISTINCT p:Player)", "p", NODES, RELS) is None
    )
    # No bound node joins the label directly, or the label is not the schema's.
    assert matched_for("MATCH (s:Stadium) RETURN count(DISTINCT p:Player) AS n", "p", NODES, RELS) is None
    assert matched_for("MATCH (t:Team) RETURN count(DISTINCT p:Referee) AS n", "p", NODES, RELS) is None
    assert matched_for("MATCH (t:Team) RETURN count(x) AS n", "x", NODES, RELS) is None
    # After a WITH the bound node may be out of scope; another aggregate would count the new rows too.
    assert (
        matched_for(
            "MATCH (t:Team {name: 'x'}) WITH t.city AS city RETURN city, count(DISTINCT p:Player)", "p", NODES, RELS
        )
        is None
    )
    assert (
        matched_for("MATCH (t:Team)-[:HOSTED]->(m:Match) RETURN count(m), count(DISTINCT p:Player)", "p", NODES, RELS)
        is None
    )


def test_an_unbound_unlabelled_name_is_matched_as_the_neighbour_that_has_what_is_read() -> None:
    # The stadium a match was played at: Stadium is the one label joined to Match that has a capacity.
    query = "MATCH (t:Team)-[:HOSTED]->(m:Match) WHERE t.city = 'Oslo' RETURN m.played_on, s.capacity"
    assert joined_for_reads(query, "s", NODES, RELS) == (
        "MATCH (t:Team)-[:HOSTED]->(m:Match) WHERE t.city = 'Oslo' MATCH (m)-[:PLAYED_AT]->(s:Stadium) "
        "RETURN m.played_on, s.capacity"
    )
    # `name` is on Player, Team and Stadium: the first letter of the variable settles it.
    named = "MATCH (t:Team)-[:HOSTED]->(m:Match) RETURN m.played_on, s.name ORDER BY m.played_on"
    assert joined_for_reads(named, "s", NODES, RELS) == (
        "MATCH (t:Team)-[:HOSTED]->(m:Match) MATCH (m)-[:PLAYED_AT]->(s:Stadium) "
        "RETURN m.played_on, s.name ORDER BY m.played_on"
    )


def test_an_unbound_unlabelled_name_is_left_alone_when_the_schema_leaves_a_doubt() -> None:
    # Player, Team (rival) and Coach-less `name`: no label starts with `x`, and several have a name.
    assert joined_for_reads("MATCH (t:Team) RETURN x.name", "x", NODES, RELS) is None
    # Nothing is read from it (counted or used bare): not a neighbour this repair can name.
    assert joined_for_reads("MATCH (t:Team) RETURN count(s)", "s", NODES, RELS) is None
    # Bound after all (an alias): another problem.
    assert joined_for_reads("MATCH (t:Team) WITH t AS s RETURN s.name", "s", NODES, RELS) is None
    # Read first in a WHERE: a MATCH cannot go between a MATCH and its WHERE.
    assert joined_for_reads("MATCH (m:Match) WHERE s.capacity > 10 RETURN m", "s", NODES, RELS) is None
