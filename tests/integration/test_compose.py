"""docker-compose.yml stays a valid Compose file with the production-shaped stack."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

COMPOSE = Path(__file__).resolve().parents[2] / "docker-compose.yml"


def test_compose_file_validates_against_the_compose_spec_schema() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.compose-spec", str(COMPOSE)],
        capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_compose_has_every_part_and_points_the_services_at_them() -> None:
    spec = yaml.safe_load(COMPOSE.read_text())
    services = spec["services"]
    assert {"postgresql", "temporal", "temporal-ui", "pulsar", "falkordb", "llm", "worker", "bridge"} <= set(services)
    assert services["llm"]["profiles"] == ["llm"]
    env = services["worker"]["environment"]
    assert env["TGCA_TEMPORAL_ADDRESS"] == "temporal:7233"
    assert env["TGCA_PULSAR_URL"] == "pulsar://pulsar:6650"
    assert env["TGCA_FALKORDB_URL"] == "redis://falkordb:6379"
    assert services["bridge"]["environment"] == env
    chat = services["chat"]
    assert chat["command"] == ["tg-confidence-chat"] and chat["profiles"] == ["chat"]
    assert {k: v for k, v in chat["environment"].items() if k in env} == env
    assert chat["environment"]["TGCA_HTTP_HOST"] == "0.0.0.0"  # so it refuses to start without tokens
    assert "/healthz" in " ".join(chat["healthcheck"]["test"])


def test_the_image_copies_every_package_it_installs() -> None:
    """A package missing from the Dockerfile installs nothing and the service fails to import at start."""
    pyproject = tomllib.loads((COMPOSE.parent / "pyproject.toml").read_text())
    packages = set(pyproject["tool"]["setuptools"]["packages"])
    dockerfile = (COMPOSE.parent / "Dockerfile").read_text()
    copied = {line.split()[1] for line in dockerfile.splitlines() if line.startswith("COPY ") and "./" in line}
    assert packages <= copied, sorted(packages - copied)
