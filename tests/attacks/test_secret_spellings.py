"""Secrets as people spell them. Redaction matched a secret's word only at a word boundary, which `_` is not,
so DB_PASSWORD=, AWS_SECRET_ACCESS_KEY=, client_secret=, GITHUB_TOKEN= and their kin passed whole, as did an
Authorization header's Basic credentials, a PGP private key block and `pwd:`; a node storing one showed it in
the planner's schema prompt. Each spelling is redacted in text, as a mapping's key, and in the schema a real
graph describes, and the words around a secret that only look alike ("max_tokens=512") stay."""

from __future__ import annotations

import pytest

from backends.graph_store import GraphStore
from contracts.redaction import REDACTED, redact_text, sanitize
from tests.attacks.scratch_graph import ScratchGraph

SECRET = "hunter2xyz"
SPELLINGS = [
    f"DB_PASSWORD={SECRET}",
    f"POSTGRES_PASSWORD={SECRET}",
    f"AWS_SECRET_ACCESS_KEY={SECRET}",
    f"client_secret={SECRET}",
    f"access_token={SECRET}",
    f"GITHUB_TOKEN={SECRET}",
    f"apiKey: {SECRET}",
    f"pwd: {SECRET}",
    f"Note: password={SECRET}",
    f"https://example.org/cb?state=1&token={SECRET}",
    f"Authorization: Basic {SECRET}",
    f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n{SECRET}\n-----END PGP PRIVATE KEY BLOCK-----",
]


@pytest.mark.parametrize("text", SPELLINGS)
def test_each_spelling_of_a_secret_is_redacted_in_text(text: str) -> None:
    redacted = redact_text(f"config says {text} and more")
    assert SECRET not in redacted and REDACTED in redacted and redacted.endswith(" and more")


@pytest.mark.parametrize("key", ["DB_PASSWORD", "client_secret", "accessToken", "pwd", "api-key", "GITHUB_TOKEN"])
def test_a_value_under_a_secrets_name_is_redacted(key: str) -> None:
    assert sanitize({key: SECRET, "name": "kept"}) == {key: REDACTED, "name": "kept"}


def test_names_that_only_look_alike_stay() -> None:
    text = "max_tokens=512, tokens_used: 40, passes=3, the token count is 5"
    assert redact_text(text) == text


async def test_a_stored_secret_never_reaches_the_schema_the_planner_reads(
    scratch: ScratchGraph, falkordb_url: str
) -> None:
    await scratch.conn.execute_command(
        "GRAPH.QUERY",
        scratch.name,
        f"CREATE (:Service {{name: 'billing', DB_PASSWORD: '{SECRET}', pwd: '{SECRET}', "
        f"notes: 'GITHUB_TOKEN={SECRET}'}})",
    )
    store = GraphStore(falkordb_url, scratch.name)
    try:
        schema = await store.describe_schema()
    finally:
        await store.aclose()
    assert "Service" in schema and SECRET not in schema and SECRET[:4] not in schema
