"""What the planner is shown of the graph's stored values: the schema gives each property an example value (the
first 30 characters of one node's), and the entities the question names are described with their properties,
their neighbours' and the path between them (40 characters of each value). A secret the graph stores there (a
connection string with its password, a note `password: ...`, a property named `secret`) went into the planner's
prompt as it was, from there to the model's server and whatever it logs, and into the run's history with the
plan's grounding. Every value is now redacted before it is cut, so that neither the whole secret nor a piece of
it is shown; what is no secret still is (the host of a URL, a name).

A real FalkorDB holds the secrets; the real planning activity writes its prompts to a scripted model."""

from __future__ import annotations

import json

from activities.planning import PlanningActivities
from backends.graph_store import GraphStore
from contracts.query_path import PlanningInput
from contracts.run import AgentSettings
from tests.agent_harness import plan
from tests.scripted_llm import ScriptedLLM, plan_then_answer
from tests.seeded_graph import seeded_graph
from tests.tool_calls import local_backends

# Each within the characters shown: a password holding `@` and a space, as the redaction reads it.
DSN = "redis://admin:Pa@ss w0rd!@db.internal:6379/0"
SECRETS = {
    "dsn": DSN,
    "note": "password: hunter2hunter2",
    "api_key": "sk-abcdefghijklmnop1234",
    "secret": "plainvalue42",
}
PIECES = ("w0rd", "Pa@ss", "hunter2", "abcdefghijklmnop", "plainvalue42")  # a secret, or part of one
PROPERTIES = ", ".join(f"{key}: '{value}'" for key, value in SECRETS.items())
VAULTS = (
    f"CREATE (:Vault {{name: 'Main vault', {PROPERTIES}}})-[:MIRRORED_TO]->"
    f"(:Vault {{name: 'Backup vault', {PROPERTIES}}})"
)
QUESTION = "How is the Main vault connected to the Backup vault?"


def leaked(text: str) -> list[str]:
    return [piece for piece in PIECES if piece in text]


async def test_the_planner_is_shown_no_secret_the_graph_stores(falkordb_url: str, unique: str) -> None:
    query = "MATCH (a:Vault {name: 'Main vault'})-[:MIRRORED_TO]->(b:Vault) RETURN b.name AS mirror"
    async with seeded_graph(falkordb_url, f"vaults-{unique}", VAULTS) as graph:
        store = GraphStore(falkordb_url, graph)
        try:
            schema = await store.describe_schema()
        finally:
            await store.aclose()
        with ScriptedLLM(plan_then_answer(plan(("s1", "GraphQuery", {"query": query}, [])), "Backup vault.")) as llm:
            backends = local_backends(llm_url=llm.base_url, falkordb_url=falkordb_url, graph_name=graph)
            try:
                out = await PlanningActivities(backends).plan(
                    PlanningInput(question=QUESTION, plan_id="p", settings=AgentSettings())
                )
            finally:
                await backends.aclose()
    assert out.plan is not None, out.error
    facts = "\n".join(out.grounding.facts)  # the two vaults and how they connect: in the prompt and the history
    assert len(out.grounding.facts) == 3 and "MIRRORED_TO" in facts, facts
    assert leaked(schema) == [], schema
    assert leaked(facts) == [], facts
    assert leaked(json.dumps(llm.requests)) == []
    # What is no secret is still shown: the properties, the URL up to its credentials, the names.
    assert 'dsn="redis://[REDACTED]@db.int' in schema and 'name="Main vault"' in schema
    assert "dsn = 'redis://[REDACTED]@db.internal:6379/0'" in facts and "name = 'Backup vault'" in facts
