"""Three small social networks the PyPI package `networkx` ships (BSD licence), in one graph: the characters of
Les Misérables and how often they appear together (Knuth), the Florentine families of the Renaissance and their
marriages (Padgett), and the women of a Southern town and the social events they attended (Davis).

    (:Character {name})-[:APPEARS_WITH {times}]->(:Character)   both ways
    (:Family {name})-[:MARRIED_INTO]->(:Family)                 both ways
    (:Woman {name})-[:ATTENDED]->(:Event {name})
"""

from __future__ import annotations

from bench.graphs.load import GraphData, ensure_package

PACKAGE, PINNED = "networkx", "networkx==3.6.1"


def build() -> GraphData:
    ensure_package(PACKAGE, PINNED)
    import networkx as nx

    data = GraphData(keys={"Character": "name", "Family": "name", "Woman": "name", "Event": "name"})
    miserables = nx.les_miserables_graph()
    data.nodes["Character"] = [{"name": n} for n in sorted(miserables.nodes)]
    pairs = sorted(tuple(sorted(e)) for e in miserables.edges)
    data.link(
        "Character",
        "APPEARS_WITH",
        "Character",
        pairs,
        both_ways=True,
        properties={(a, b): {"times": int(miserables.edges[a, b].get("weight", 1))} for a, b in pairs},
    )
    families = nx.florentine_families_graph()
    data.nodes["Family"] = [{"name": n} for n in sorted(families.nodes)]
    data.link("Family", "MARRIED_INTO", "Family", sorted(tuple(sorted(e)) for e in families.edges), both_ways=True)
    davis = nx.davis_southern_women_graph()
    women = sorted(davis.graph["top"])
    data.nodes["Woman"] = [{"name": n} for n in women]
    data.nodes["Event"] = [{"name": n} for n in sorted(davis.graph["bottom"])]
    data.link("Woman", "ATTENDED", "Event", [(w, e) for w in women for e in sorted(davis[w])])
    return data
