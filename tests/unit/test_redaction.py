"""Secrets planted in questions, tool outputs, configuration and log lines never come out in clear."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from contracts.redaction import REDACTED, may_hold_secret, redact_text, redacted_after, sanitize, shown_url

SECRETS = [
    "sk-abcdefghijklmnop1234",
    "hunter2hunter2",
    "ghp_0123456789abcdefABCDEF",
    "AKIAABCDEFGHIJKLMNOP",
    "eyJhbGciOiJIUzI1NiJ9.payload",
]


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("use key sk-abcdefghijklmnop1234 please", SECRETS[0]),
        ("password=hunter2hunter2", SECRETS[1]),
        ("api_key: hunter2hunter2, then", SECRETS[1]),
        ("token ghp_0123456789abcdefABCDEF", SECRETS[2]),
        ("AWS AKIAABCDEFGHIJKLMNOP", SECRETS[3]),
        ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload", SECRETS[4]),
        ("redis://admin:hunter2hunter2@db.internal:6379/0", SECRETS[1]),
        ("https://hunter2hunter2@llm.example/v1", SECRETS[1]),
    ],
)
def test_secret_values_are_redacted_and_the_rest_kept(text: str, secret: str) -> None:
    redacted = redact_text(text)
    assert secret not in redacted and REDACTED in redacted


def test_connection_strings_keep_their_host() -> None:
    assert redact_text("redis://admin:pw@db.internal:6379/0") == f"redis://{REDACTED}@db.internal:6379/0"
    assert redact_text("redis://db.internal:6379/0") == "redis://db.internal:6379/0"


def test_secret_keys_are_redacted_at_any_depth() -> None:
    record = {"request": {"question": "q", "api_key": "abc"}, "steps": [{"llm_token": 12, "note": "ok"}]}
    assert sanitize(record) == {
        "request": {"question": "q", "api_key": REDACTED},
        "steps": [{"llm_token": REDACTED, "note": "ok"}],
    }


def test_log_lines_structlog_and_stdlib_alike_carry_no_secret() -> None:
    program = (
        "import logging, structlog\n"
        "from service.lifecycle import configure_logging\n"
        "configure_logging('INFO')\n"
        "structlog.get_logger('t').info('worker_ready', llm='https://u:hunter2hunter2@llm.example/v1',"
        " api_key='sk-abcdefghijklmnop1234', note='Bearer eyJhbGciOiJIUzI1NiJ9.payload')\n"
        "logging.getLogger('temporalio').warning('retrying with password=hunter2hunter2')\n"
    )
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=True)
    lines = [json.loads(line) for line in result.stderr.splitlines()]
    assert [line["event"] for line in lines] == ["worker_ready", f"retrying with {REDACTED}"]
    assert lines[0]["llm"] == f"https://{REDACTED}@llm.example/v1" and lines[0]["api_key"] == REDACTED
    assert not any(secret in result.stderr for secret in SECRETS)


@pytest.mark.parametrize(
    "sentence",
    [
        "Its password:\n",
        "The API key follows.",
        "Send it as Bearer",
        "sk-abcdefghijklmnop1234.",
        "-----BEGIN RSA PRIVATE KEY-----\n",
        "password=hunter2hunter2.",
    ],
)
def test_a_sentence_that_may_hold_or_begin_a_secret_is_not_sent_on_its_own(sentence: str) -> None:
    assert may_hold_secret(sentence)


def test_an_ordinary_sentence_may_be_sent_on_its_own() -> None:
    assert not may_hold_secret("Acme Industrial has the most purchase orders (135).")


def test_text_already_sent_stands_and_the_rest_is_redacted() -> None:
    sent = "Acme leads."
    assert redacted_after(sent, f"{sent} Its password: hunter2hunter2.") == f"{sent} Its {REDACTED}"
    assert redacted_after("", "token=hunter2hunter2") == REDACTED
    # Text that does not start with what was sent is redacted whole.
    assert redacted_after("Other.", "password=hunter2hunter2") == REDACTED


@pytest.mark.parametrize("password", ["Pa@ss-w0rd!", "Pa ss w0rd", "p:a@s s#1"])
def test_a_url_password_is_redacted_up_to_the_last_at_before_the_host(password: str) -> None:
    """A password may hold `@`, `:` and spaces as written: none of it is left, and the host stays."""
    assert redact_text(f"cannot reach redis://default:{password}@db.internal:6379/0 now") == (
        f"cannot reach redis://{REDACTED}@db.internal:6379/0 now"
    )


def test_a_private_key_cut_short_is_redacted_to_the_end() -> None:
    """Without its footer (the text was trimmed) the key's body is redacted all the same."""
    assert redact_text("key: -----BEGIN RSA PRIVATE KEY-----\nMIIEow...") == f"key: {REDACTED}"
    assert redact_text("-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY----- then") == f"{REDACTED} then"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://default:Pa@ss-w0rd!@db.internal:6379/0", "redis://db.internal:6379"),
        ("redis://default:Pa ss#w0rd/x@db:6379", "redis://db:6379"),
        ("https://sk-key@llm.example/v1?key=abc", "https://llm.example"),
        ("pulsar://localhost:6650", "pulsar://localhost:6650"),
        ("http://[::1]:8080/v1", "http://[::1]:8080"),
        ("user:secret@host:6650", "host:6650"),
        ("redis://host:port", "redis://host"),
    ],
)
def test_a_configured_url_is_shown_as_scheme_host_and_port(url: str, shown: str) -> None:
    assert shown_url(url) == shown
