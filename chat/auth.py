"""Who is calling: a bearer token from the configured identities (service/config.HttpIdentity), or, when
none are configured (allowed on a loopback address only), the local user with every role, who must still
show open mode's local token (a web page on another site cannot know it). Decisions made through the API
are signed with the caller's key when the workers check signatures."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from contracts.override import Role
from overrides.signing import load_private_key
from service.config import HttpIdentity

LOCAL_USER = "local"


@dataclass(frozen=True)
class Caller:
    name: str
    roles: frozenset[Role] = field(default_factory=frozenset)
    signing_key: str = ""
    tag: str = ""  # marks the ids of the runs and conversations this caller starts (chat/ownership.py)

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


def owner_tag(secret: str, name: str) -> str:
    """A caller's mark on the ids they start: keyed by their token's digest, which no other caller holds, so
    nobody can forge another's mark (a new token starts a new mark)."""
    return hmac.new(secret.encode(), f"owner:{name}".encode(), hashlib.sha256).hexdigest()[:16]


def new_local_token() -> str:
    return secrets.token_urlsafe(24)


class Authenticator:
    def __init__(self, identities: list[HttpIdentity], local_token: str = "") -> None:
        if not identities and not local_token:
            raise ValueError("open mode needs a local token (http_local_token, or new_local_token())")
        self.identities = identities
        self.local_token = local_token

    @property
    def open(self) -> bool:
        return not self.identities

    def caller(self, authorization: str | None) -> Caller:
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            hint = " (open mode: the token is in the link `tg-confidence up` prints)" if self.open else ""
            raise Unauthorized(f"a bearer token is required (Authorization: Bearer <token>){hint}")
        digest = token_sha256(token.strip())
        if self.open:
            if hmac.compare_digest(token_sha256(self.local_token), digest):
                return Caller(LOCAL_USER, frozenset(Role), tag=owner_tag("open", LOCAL_USER))
            raise Unauthorized("unknown token")
        for identity in self.identities:
            if hmac.compare_digest(identity.token_sha256, digest):
                return Caller(
                    identity.name,
                    frozenset(identity.roles),
                    identity.signing_key,
                    owner_tag(identity.token_sha256, identity.name),
                )
        raise Unauthorized("unknown token")
