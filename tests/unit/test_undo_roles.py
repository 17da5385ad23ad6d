"""Who may undo executed actions: with identities configured, only one holding the role 'undo', proved by
their private key (the key file `tg-confidence keys new` writes)."""

from __future__ import annotations

from pathlib import Path

from contracts.override import OverrideIdentity, Role
from overrides.signing import new_key_pair
from overrides.undo_policy import undo_refusal


def identity(tmp_path: Path, name: str, roles: list[Role]) -> tuple[OverrideIdentity, Path]:
    pem, public_key = new_key_pair()
    path = tmp_path / f"{name}.pem"
    path.write_bytes(pem)
    return OverrideIdentity(name=name, public_key=public_key, roles=roles), path


def test_only_an_identity_with_the_undo_role_and_its_own_key_may_undo(tmp_path: Path) -> None:
    ops, ops_key = identity(tmp_path, "ops", [Role.UNDO])
    ana, ana_key = identity(tmp_path, "ana", [Role.REVIEW, Role.APPROVE])
    keys = [ops, ana]
    assert undo_refusal(keys, "ops", ops_key) == ""
    assert "'ana' may not undo actions" in undo_refusal(keys, "ana", ana_key)
    assert "'mallory' may not undo actions" in undo_refusal(keys, "mallory", ops_key)
    assert "sign with your key" in undo_refusal(keys, "ops", None)
    assert f"{ana_key} is not ops's key" in undo_refusal(keys, "ops", ana_key)
    (tmp_path / "junk.pem").write_text("not a key")
    assert "cannot read the key" in undo_refusal(keys, "ops", tmp_path / "junk.pem")


def test_without_identities_anyone_with_the_graph_may_undo() -> None:
    assert undo_refusal([], "anyone", None) == ""
