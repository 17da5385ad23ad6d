"""TGCA_LLM_SERVER_ARGS: a user's own flags for the embedded LLM server reach its command line, after the
built-in ones so they win; a malformed value is a clear error before anything starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from embedded.parts import PartStartError, llm_server

pytest.importorskip("llama_cpp")


def test_the_users_flags_come_last_so_they_win(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TGCA_LLM_SERVER_ARGS", "--n_batch 256 --flash_attn true")
    argv = llm_server(tmp_path, tmp_path / "model.gguf", 8080, "m").argv
    assert argv[-4:] == ["--n_batch", "256", "--flash_attn", "true"]
    assert argv.index("--n_batch") < len(argv) - 4  # the built-in value is there too, earlier: argparse keeps the last


def test_without_the_variable_the_built_in_flags_alone(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("TGCA_LLM_SERVER_ARGS", raising=False)
    argv = llm_server(tmp_path, tmp_path / "model.gguf", 8080, "m").argv
    assert argv[-2:] == ["--n_batch", "64"]


def test_unbalanced_quotes_are_named_not_a_traceback(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TGCA_LLM_SERVER_ARGS", "--chat_format 'chatml")
    with pytest.raises(PartStartError, match="TGCA_LLM_SERVER_ARGS"):
        llm_server(tmp_path, tmp_path / "model.gguf", 8080, "m")


def test_the_services_accept_the_variable_it_is_the_stacks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The services refuse unknown TGCA_* variables; this one is read by the stack, so it must not stop them."""
    from service.config import load_config

    monkeypatch.delenv("TGCA_CONFIG", raising=False)
    monkeypatch.setenv("TGCA_LLM_SERVER_ARGS", "--flash_attn true")
    assert load_config().llm_model
