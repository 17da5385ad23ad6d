"""Who is calling: a bearer token from the configured identities (service/config.HttpIdentity), or, when
none are configured (allowed on a loopback address only), the local user with every role. Decisions made
through the API are signed with the caller's key when the workers check signatures."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from confidence_core.override_signing import load_private_key
from contracts.override import Role
from service.config import HttpIdentity

LOCAL_USER = "local"


@dataclass(frozen=True)
class Caller:
    name: str
    roles: frozenset[Role] = field(default_factory=frozenset)
    signing_key: str = ""

    def may(self, role: Role) -> bool:
        return role in self.roles

    def private_key(self) -> Ed25519PrivateKey | None:
        return load_private_key(Path(self.signing_key)) if self.signing_key else None


class Unauthorized(Exception):
    pass


def token_sha256(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Authenticator:
    def __init__(self, identities: list[HttpIdentity]) -> None:
        self.identities = identities

    @property
    def open(self) -> bool:
        return not self.identities

    def caller(self, authorization: str | None) -> Caller:
        if self.open:
            return Caller(LOCAL_USER, frozenset(Role))
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthorized("a bearer token is required (Authorization: Bearer <token>)")
        digest = token_sha256(token.strip())
        for identity in self.identities:
            if hmac.compare_digest(identity.token_sha256, digest):
                return Caller(identity.name, frozenset(identity.roles), identity.signing_key)
        raise Unauthorized("unknown token")
