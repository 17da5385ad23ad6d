"""`tg-confidence keys new`: an Ed25519 key pair for signing override, approval and undo decisions. The
private key stays with the person (a 0600 PEM file); the printed identity goes into the worker's
override_keys setting."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from cli.errors import UNREACHABLE_OR_BAD_INPUT, error
from contracts.override import Role
from overrides.signing import new_key_pair


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("keys", parents=[common], help="make a key pair for signing override decisions")
    verbs = p.add_subparsers(dest="verb", required=True)
    new = verbs.add_parser("new", help="write a private key file and print the identity to configure")
    new.add_argument("name", help="the identity's name (decisions are recorded as made by it)")
    new.add_argument(
        "--roles",
        nargs="+",
        choices=[r.value for r in Role],
        default=[Role.REVIEW.value],
        help="what it may decide (default: review)",
    )
    new.add_argument("--out", type=Path, default=None, help="the private key file (default: ./<name>.pem)")


async def run(args: argparse.Namespace) -> int:
    path: Path = args.out or Path(f"{args.name}.pem")
    pem, public_key = new_key_pair()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # never overwrite a key
    except OSError as exc:
        return error(f"cannot create {path}: {exc.strerror}", UNREACHABLE_OR_BAD_INPUT)
    with os.fdopen(fd, "wb") as out:
        out.write(pem)
    identity = {"name": args.name, "public_key": public_key, "roles": args.roles}
    print(f"private key written to {path} (keep it; sign with: tg-confidence override ... --key {path})")
    print(
        "add this identity to the worker's override_keys (YAML agent.override_keys, or the JSON list in "
        "TGCA_AGENT__OVERRIDE_KEYS):"
    )
    print(json.dumps(identity))
    return 0
