"""Signed override decisions: Ed25519 over a per-request challenge.

A decision (step, decision, arguments, reason and who decides) is signed together with the workflow id and
the challenge of the override request it answers: every field a decision carries into the run, its record
and its caller's view, so none can be changed on the way. The worker is configured with public keys only,
and the workflow checks the signature in its validator and signal handler. What a history holds (public
keys, challenges, signatures) lets nobody sign anything: a recorded signature matches one decision for one
request, which is already decided, and no other run, step or decision. Pure functions (deterministic: safe
in workflow code)."""

from __future__ import annotations

import base64
import binascii
import json
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

# Named in every signed message: a signature made under another scheme (v1 covered neither `reason` nor `by`)
# never verifies as one of these.
SCHEME = "tgca-override-v2"


def signed_message(
    workflow_id: str,
    challenge: str,
    step_id: str,
    decision: str,
    arguments: dict[str, str] | None,
    *,
    reason: str,
    by: str,
) -> bytes:
    """The exact bytes a decision's signature covers (canonical JSON). `reason` and `by` are keyword-only and
    required, so that a signer cannot leave them out by accident."""
    return _canonical(
        {
            "scheme": SCHEME,
            "workflow_id": workflow_id,
            "challenge": challenge,
            "step_id": step_id,
            "decision": decision,
            "arguments": arguments,
            "reason": reason,
            "by": by,
        }
    )


def _canonical(fields: dict[str, object]) -> bytes:
    return json.dumps(fields, sort_keys=True, separators=(",", ":")).encode()


def new_key_pair() -> tuple[bytes, str]:
    """(private key as PEM, to keep; public key as base64 of its 32 raw bytes, to configure)."""
    private = Ed25519PrivateKey.generate()
    pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return pem, public_key_text(private)


def public_key_text(private: Ed25519PrivateKey) -> str:
    raw = private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return base64.b64encode(raw).decode()


def load_private_key(path: Path) -> Ed25519PrivateKey:
    """The Ed25519 private key in a PEM file; ValueError when it is not one."""
    key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError(f"{path} holds no Ed25519 private key")
    return key


def sign(private: Ed25519PrivateKey, message: bytes) -> str:
    return base64.b64encode(private.sign(message)).decode()


def verify(public_key: str, message: bytes, signature: str) -> bool:
    """Does `signature` (base64) sign `message` with the key `public_key` (base64 raw)? Never raises."""
    try:
        key = Ed25519PublicKey.from_public_bytes(base64.b64decode(public_key, validate=True))
        key.verify(base64.b64decode(signature, validate=True), message)
    except (InvalidSignature, ValueError, binascii.Error):
        return False
    return True
