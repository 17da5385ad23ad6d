"""Schema-driven query repairs: each rewrites only what one schema reading allows, and gives up otherwise."""

from __future__ import annotations

from confidence_core.schema_repair import (
    bound_instead,
    display_property,
    label_paths,
    neighbour_property,
    through_middle,
    undefined_name,
)

NODES = {
    "Team": ["name", "city"], "Player": ["name", "number"], "Match": ["played_on"],
    "Stadium": ["name", "capacity"], "Coach": ["full_name"],
}
RELS = {
    ("Player", "PLAYS_FOR", "Team"), ("Team", "HOSTED", "Match"), ("Match", "PLAYED_AT", "Stadium"),
    ("Coach", "TRAINS", "Team"), ("Team", "RIVAL_OF", "Team"),
}


def test_a_neighbour_read_as_a_property_is_matched_through_its_one_shortest_path() -> None:
    query = "MATCH (p:Player {name: 'p.team'}) WHERE p.team <> 'x' RETURN p.team AS team"
    assert neighbour_property(query, "Player", "team", NODES, RELS) == (
        "MATCH (p:Player {name: 'p.team'}) MATCH (p)-[:PLAYS_FOR]->(team1:Team) "
        "WHERE team1.name <> 'x' RETURN team1.name AS team")


def test_a_relationship_type_read_as_a_property_leads_to_the_node_at_its_far_end() -> None:
    query = "MATCH (m:Match) RETURN m.played_at"
    assert neighbour_property(query, "Match", "played_at", NODES, RELS) == (
        "MATCH (m:Match) MATCH (m)-[:PLAYED_AT]->(stadium1:Stadium) RETURN stadium1.name")


def test_a_neighbour_two_hops_away_reads_the_property_its_suffix_names() -> None:
    query = "MATCH (p:Player {number: 7}) RETURN p.coach_name"
    assert neighbour_property(query, "Player", "coach_name", NODES, RELS) == (
        "MATCH (p:Player {number: 7}) MATCH (p)-[:PLAYS_FOR]->(:Team)<-[:TRAINS]-(coach1:Coach) "
        "RETURN coach1.full_name")


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
    # a WITH after the binding MATCH would drop the neighbour (FalkorDB: 'team1' not defined)
    assert neighbour_property("MATCH (p:Player) WITH p, count(p) AS n RETURN p.team", "Player", "team", NODES,
                              RELS) is None


def test_display_property_prefers_the_same_name_then_the_suffix_then_a_name() -> None:
    assert display_property(["name", "team_id"], "team_id") == "team_id"
    assert display_property(["name", "code"], "team_code") == "code"
    assert display_property(["capacity", "name"], "stadium") == "name"
    assert display_property(["full_name"], "coach") == "full_name"
    assert display_property(["capacity"], "stadium") is None


def test_two_labels_joined_only_through_a_third_are_bridged() -> None:
    original = "(p:Player {name: 'Kim'})-[:HOSTED]->(m:Match)"
    assert through_middle(original, "(:Player)-[:HOSTED]->(:Match)", RELS) == (
        "(p:Player {name: 'Kim'})-[:PLAYS_FOR]->(:Team)-[:HOSTED]->(m:Match)")


def test_a_bridge_keeps_an_unused_relationship_variable_out_and_refuses_a_used_one() -> None:
    original = "(p:Player)-[r:HOSTED]->(m:Match)"
    path = "(:Player)-[:HOSTED]->(:Match)"
    assert through_middle(original, path, RELS, f"MATCH {original} RETURN m") == (
        "(p:Player)-[:PLAYS_FOR]->(:Team)-[:HOSTED]->(m:Match)")
    assert through_middle(original, path, RELS, f"MATCH {original} RETURN type(r)") is None


def test_no_bridge_where_labels_join_directly_or_not_through_one_label() -> None:
    assert through_middle("(p:Player)-[:X]->(t:Team)", "(:Player)-[:X]->(:Team)", RELS) is None
    assert through_middle("(p:Player)-[:X]->(s:Stadium)", "(:Player)-[:X]->(:Stadium)", RELS) is None
    assert through_middle("(p:Player)-[:X*1..3]->(m:Match)", "(:Player)-[:X]->(:Match)", RELS) is None
    # the query places a Team itself: the model had its own idea where the team goes
    placed = "MATCH (p:Player)-[:HOSTED]->(m:Match)-[:X]->(t:Team) RETURN count(t)"
    assert through_middle("(p:Player)-[:HOSTED]->(m:Match)", "(:Player)-[:HOSTED]->(:Match)", RELS, placed) is None
    # an anonymous Team (an earlier bridge's) is no such place
    bridged = ("MATCH (q:Player)-[:PLAYS_FOR]->(:Team)-[:HOSTED]->(m:Match) "
               "MATCH (p:Player)-[:HOSTED]->(m:Match) RETURN m")
    assert through_middle("(p:Player)-[:HOSTED]->(m:Match)", "(:Player)-[:HOSTED]->(:Match)", RELS, bridged) == (
        "(p:Player)-[:PLAYS_FOR]->(:Team)-[:HOSTED]->(m:Match)")


def test_label_paths_returns_every_shortest_path_and_none_past_the_hop_limit() -> None:
    assert label_paths("Player", "Stadium", RELS) == [
        [("Player", "PLAYS_FOR", "Team"), ("Team", "HOSTED", "Match"), ("Match", "PLAYED_AT", "Stadium")]]
    assert label_paths("Player", "Stadium", RELS, max_hops=2) == []


def test_an_unbound_variable_becomes_the_one_bound_variable_whose_label_has_what_is_read() -> None:
    assert undefined_name("'x' not defined") == "x"
    assert undefined_name("Unknown function 'now'") is None
    query = "MATCH (s:Stadium {name: 'x.capacity'}) RETURN x.capacity"
    assert bound_instead(query, "x", NODES) == "MATCH (s:Stadium {name: 'x.capacity'}) RETURN s.capacity"
    bare = "MATCH (s:Stadium)<-[:PLAYED_AT]-(m:Match) RETURN m.played_on ORDER BY capacity DESC"
    assert bound_instead(bare, "capacity", NODES) == (
        "MATCH (s:Stadium)<-[:PLAYED_AT]-(m:Match) RETURN m.played_on ORDER BY s.capacity DESC")
    unnamed = "MATCH (t:Team {name: 'Reds'})<-[:PLAYS_FOR]-(:Player) RETURN count(players) AS squad"
    assert bound_instead(unnamed, "players", NODES) == (
        "MATCH (t:Team {name: 'Reds'})<-[:PLAYS_FOR]-(players:Player) RETURN count(players) AS squad")


def test_an_unbound_variable_is_left_alone_when_several_or_none_fit_or_it_is_an_alias() -> None:
    assert bound_instead("MATCH (p:Player)-[:PLAYS_FOR]->(t:Team) RETURN x.name", "x", NODES) is None
    assert bound_instead("MATCH (p:Player) RETURN x.capacity", "x", NODES) is None
    assert bound_instead("MATCH (:Player)-[:PLAYS_FOR]->(t:Team)<-[:PLAYS_FOR]-(:Player) RETURN count(player)",
                         "player", NODES) is None  # two unnamed players: which one is meant is a guess
    assert bound_instead("MATCH (s:Stadium) WITH s.capacity AS cap RETURN cap.name", "cap", NODES) is None
