"""`scripts/setup.sh --no-llm` on a fresh copy of the repository: a working install without the local model
(no llama.cpp compile, no weights), for users of an external OpenAI-compatible server; each stage said."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def fresh_copy(target: Path) -> Path:
    """The repository's tracked files, as a clean checkout has them (no .venv)."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        source, copy = ROOT / name, target / name
        if source.is_file():
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_bytes(source.read_bytes())
            copy.chmod(source.stat().st_mode)
    return target


def test_no_llm_installs_the_service_without_the_local_model(tmp_path: Path) -> None:
    repo = fresh_copy(tmp_path / "repo")
    env = {**os.environ, "PYTHON": sys.executable}
    done = subprocess.run(
        ["bash", "scripts/setup.sh", "--no-llm"], cwd=repo, env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("setup: 3 stages, usually about a minute\n")  # the whole, before the first
    stages = [line for line in done.stdout.splitlines() if line.startswith("setup [")]
    assert [s.split("]")[0] for s in stages] == ["setup [1/3", "setup [2/3", "setup [3/3"]
    assert all("usually" in s for s in stages)
    assert "--llm-base-url" in done.stdout  # says how to point the stack at the user's own server
    python = repo / ".venv" / "bin" / "python"
    assert subprocess.run([str(python), "-c", "import llama_cpp"], capture_output=True).returncode != 0
    for command in ("tg-confidence", "tg-invoke-confidence-agent"):
        shown = subprocess.run([str(repo / ".venv" / "bin" / command), "--version"], capture_output=True, text=True)
        assert shown.returncode == 0 and command in shown.stdout


@pytest.mark.parametrize(
    ("argv", "code", "said"), [(["--bogus"], 2, "unknown option '--bogus'"), (["--help"], 0, "--no-llm")]
)
def test_options_are_checked_before_anything_is_installed(
    tmp_path: Path, argv: list[str], code: int, said: str
) -> None:
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "setup.sh"), *argv], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == code and said in done.stdout + done.stderr


def test_the_package_builds_without_warnings_and_ships_the_chat_ui(tmp_path: Path) -> None:
    """The wheel build setup.sh and the Dockerfile run (pip, isolated build) says nothing about the project's own
    metadata: the licence as an SPDX expression, the chat UI's files as a package of their own, and every
    module of the project's packages (a subpackage missing from pyproject's list would leave the image unable
    to import it)."""
    repo = fresh_copy(tmp_path / "repo")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-cache-dir", "-w", str(tmp_path / "wheel"), "."],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    said = done.stdout + done.stderr
    assert "warning" not in said.lower(), said[-4000:]
    (wheel,) = (tmp_path / "wheel").glob("*.whl")
    with zipfile.ZipFile(wheel) as built:
        assert "chat/static/index.html" in built.namelist()
        shipped = set(built.namelist())
        metadata = next(built.read(n).decode() for n in built.namelist() if n.endswith(".dist-info/METADATA"))
    assert "License-Expression: Apache-2.0" in metadata.splitlines()
    top_level = {
        name.split(".")[0]
        for name in tomllib.loads((repo / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    }
    modules = {str(path.relative_to(repo)) for package in top_level for path in (repo / package).rglob("*.py")}
    assert modules - shipped == set()
