"""Who may undo an executed action: the same check for `tg-confidence actions undo` and the chat's
`POST /actions/{key}/undo`."""

from __future__ import annotations

from pathlib import Path

from contracts.override import OverrideIdentity, Role
from overrides.signing import load_private_key, public_key_text


def undo_refusal(keys: list[OverrideIdentity], by: str, key_path: Path | None) -> str:
    """Why `by` may not undo ("" when they may): with identities configured, `by` must be one with the role
    'undo' whose private key is at `key_path` (its public key is the configured one). A policy check of this
    command: whoever can write to the graph directly is not stopped by it."""
    if not keys:
        return ""
    identity = next((k for k in keys if k.name == by), None)
    if identity is None or Role.UNDO not in identity.roles:
        return f"not authorized: '{by}' may not undo actions (an identity with the role 'undo' is needed)"
    if key_path is None:
        return "not authorized: sign with your key (--signing-key, or TGCA_OVERRIDE_KEY)"
    try:
        private = load_private_key(key_path)
    except (OSError, ValueError) as exc:
        return f"cannot read the key {key_path}: {exc}"
    if public_key_text(private) != identity.public_key:
        return f"not authorized: {key_path} is not {by}'s key"
    return ""
