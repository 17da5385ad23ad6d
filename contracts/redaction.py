"""Redaction for what leaves a run (the audit record, the log lines, the confidence reasoning): secret-looking
keys and values are replaced, and raw tool outputs are dropped from the audit record unless
`include_raw_outputs` is on. Pure functions: the workflow redacts its reasoning with them too.

Every pattern here runs on text from outside (a request, a tool's output, an error), in workflow code and on
the event loop, so each takes time linear in the text (tests/attacks/test_linear_time_checks.py measures it)."""

from __future__ import annotations

import re
from collections.abc import Mapping, MutableMapping
from typing import Any
from urllib.parse import urlsplit

REDACTED = "[REDACTED]"
_SECRET_KEY = re.compile(r"(token|secret|passw(or)?d|api[_-]?key|authorization|credential|private[_-]?key)", re.I)
_SECRET_VALUES = [
    re.compile(r"\bBearer\s+[A-Za-z0-9._~+/=\-]{8,}", re.I),
    re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}"),
    re.compile(r"\b(gh[pousr]|xox[abpr])[-_][A-Za-z0-9_\-]{16,}"),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    # An HTTP authorization header's credentials, whatever the scheme ("Authorization: Basic dXNlcjpw").
    re.compile(r"(?i)\bauthorization\s*[:=]\s*(?:(?:basic|bearer|digest|token|negotiate)\s+)?[^\s,;'\"]+"),
    # A key's block (PKCS#8, RSA, OpenSSH, PGP's "PRIVATE KEY BLOCK"), and a block cut short (no footer: the
    # text was trimmed) to the text's end. Without that second branch every header scanned to the end for a
    # footer: a text of headers cost its length squared.
    re.compile(
        r"-----BEGIN [A-Z ]{0,40}PRIVATE KEY[A-Z ]{0,10}-----"
        r"(?:[\s\S]*?-----END [A-Z ]{0,40}PRIVATE KEY[A-Z ]{0,10}-----|[\s\S]*)"
    ),
]
# `name = value` or `name: value` where the name is a secret's, as environment files, configs and URLs'
# queries spell them: DB_PASSWORD=, client_secret=, access_token=, GITHUB_TOKEN:, apiKey=, pwd:. A name is one
# run of letters, digits and `_`/`-`/`.` (found once, from its start: linear), read in its parts.
_ASSIGNED = re.compile(r"(?<![A-Za-z0-9_.\-])([A-Za-z][A-Za-z0-9_.\-]*)\s*[:=]\s*")
_VALUE = re.compile(r"[^\s,;'\"&]+")
_NAME_PARTS = re.compile(r"[_.\-]+|(?<=[a-z0-9])(?=[A-Z])")
_SECRET_PARTS = frozenset(
    "password passwd pwd pass passphrase secret token auth authorization credential credentials".split()
)
_SECRET_JOINED = ("apikey", "privatekey", "secretkey", "accesstoken", "clientsecret")


def secret_name(name: str) -> bool:
    """Whether a name (a key, a variable) is a secret's: one of its parts is a secret's word ("DB_PASSWORD",
    "clientSecret", "access-token"), or its parts joined spell one ("api_key"). "max_tokens" is none."""
    parts = [p.lower() for p in _NAME_PARTS.split(name) if p]
    joined = "".join(parts)
    return any(p in _SECRET_PARTS for p in parts) or any(j in joined for j in _SECRET_JOINED)


def _assigned_secrets_redacted(text: str) -> str:
    """Each value assigned to a secret's name replaced, with its name. The names are found without their
    values, so a value of another name ("Note: password=x", "https://...?token=x") is no place one can hide."""
    out: list[str] = []
    done = 0
    for match in _ASSIGNED.finditer(text):
        if match.start() < done or not secret_name(match.group(1)):
            continue
        value = _VALUE.match(text, match.end())
        if value is None:
            continue
        out += [text[done : match.start()], REDACTED]  # the name too, as every other pattern here does
        done = value.end()
    return "".join([*out, text[done:]])


# Credentials inside a connection string (redis://user:pass@host, https://key@host), up to the last `@` before
# the host: a password may hold `@`, `:` and spaces as written. The host stays. A user name ends at `:`, `/`
# or a space; a password at `/` or the line's end, so a search never runs past the next URL's `//`.
_URL_CREDENTIALS = re.compile(r"(?<=://)[^\s/:]*(?::[^/\r\n]*)?@")
RAW_OUTPUT_KEYS = {"output"}


def redact_text(text: str) -> str:
    """The text with secret-looking values (tokens, keys, passwords, credentials in URLs) replaced."""
    for pattern in _SECRET_VALUES:
        text = pattern.sub(REDACTED, text)
    text = _assigned_secrets_redacted(text)
    return _URL_CREDENTIALS.sub(REDACTED + "@", text)


def shown_url(url: str) -> str:
    """A configured connection URL as messages and logs show it: `scheme://host:port`, never its user,
    password, path or query (which may carry a token). The host is what follows the last `@`, whatever the
    password holds (`@`, `:`, `#`, `/`, spaces): a URL the parser would split inside its password shows less,
    never part of the password."""
    scheme, found, rest = url.strip().partition("://")
    if not found:
        scheme, rest = "", url.strip()
    host_port = re.split(r"[/?#]", rest.rpartition("@")[2], maxsplit=1)[0]
    parsed = urlsplit(f"//{host_port}")
    try:
        host, port = parsed.hostname or "", parsed.port
    except ValueError:  # a port that is no number: the host alone
        host, port = parsed.hostname or "", None
    if ":" in host:
        host = f"[{host}]"  # an IPv6 address
    where = host if port is None else f"{host}:{port}"
    return f"{scheme}://{where}" if scheme else where


# Words a secret follows ("password: ...", "Bearer ...", a key's header): a sentence holding one could be the
# start of a secret that the next sentence finishes, which redacting each sentence alone would miss.
_SECRET_LEAD = re.compile(
    r"(token|secret|passw(or)?d|api[\s_-]?key|authorization|credential|private[\s_-]?key"
    r"|bearer|-----BEGIN)",
    re.I,
)


def may_hold_secret(text: str) -> bool:
    """True when `text` holds something redaction replaces, or a word a secret may follow: text that may be
    sent on its own before the text after it is known (a streamed sentence) must hold neither."""
    return redact_text(text) != text or bool(_SECRET_LEAD.search(text))


def redacted_after(sent: str, text: str) -> str:
    """`text` redacted, when it starts with `sent`, text already sent as it is (checked by may_hold_secret):
    that start stays as sent and the rest is redacted."""
    if not sent or not text.startswith(sent):
        return redact_text(text)
    whole = redact_text(text)
    return whole if whole.startswith(sent) else sent + redact_text(text[len(sent) :])


def redact_log_event(_: Any, __: str, event: MutableMapping[str, Any]) -> dict[str, Any]:
    """A structlog processor: every log line, the stdlib's included, is sanitized before it is written."""
    return _sanitized_mapping(event, include_raw_outputs=True)


def sanitize(value: Any, include_raw_outputs: bool = False) -> Any:
    """A copy with secret-looking keys and values redacted and, unless asked for, raw outputs dropped."""
    if isinstance(value, dict):
        return _sanitized_mapping(value, include_raw_outputs)
    if isinstance(value, list):
        return [sanitize(v, include_raw_outputs) for v in value]
    if isinstance(value, str):
        return redact_text(value)
    return value


def _sanitized_mapping(value: Mapping[Any, Any], include_raw_outputs: bool) -> dict[str, Any]:
    clean: dict[str, Any] = {}
    for key, item in value.items():
        if not include_raw_outputs and key in RAW_OUTPUT_KEYS:
            continue
        if (_SECRET_KEY.search(str(key)) or secret_name(str(key))) and isinstance(item, (str, int, float)):
            clean[key] = REDACTED
        else:
            clean[key] = sanitize(item, include_raw_outputs)
    return clean
