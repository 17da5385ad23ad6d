"""`--help` and `--version`: what a new user reads first."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest

from cli.main import build_parser, parse_args
from service.flags import package_version


def help_of(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exited:
        parse_args([*argv, "--help"])
    assert exited.value.code == 0
    return " ".join(capsys.readouterr().out.split())  # argparse wraps lines where it likes


def test_help_shows_each_flag_s_default(capsys: pytest.CaptureFixture[str]) -> None:
    shown = help_of(["ask"], capsys)
    assert "seconds to wait for the final answer (default: 600.0)" in shown
    # a flag that only overrides the configuration shows the built-in default it overrides
    assert "(env PULSAR_HOST or TGCA_PULSAR_URL) (default: pulsar://127.0.0.1:6650)" in shown
    assert "(default: None)" not in shown and "(default: )" not in shown
    assert "(default: 8765)" in help_of(["up"], capsys)  # the chat UI's port


def test_version_names_the_program_and_the_installed_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        parse_args(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == f"tg-confidence {package_version()}" != "tg-confidence unknown"


def every_action(parser: argparse.ArgumentParser, name: str) -> Iterator[tuple[str, argparse.Action]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command, sub in action.choices.items():
                yield from every_action(sub, f"{name} {command}")
        else:
            yield name, action


def test_every_flag_and_argument_has_a_line_of_help() -> None:
    missing = [
        f"{name} {action.option_strings or action.dest}"
        for name, action in every_action(build_parser(), "tg-confidence")
        if not (action.help or "").strip()
    ]
    assert missing == []
