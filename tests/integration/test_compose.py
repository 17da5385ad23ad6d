"""docker-compose.yml and its TrustGraph overlay stay valid Compose files with sound semantics, checked without
a Docker engine: the Compose specification's schema, then what `docker compose config` and `up` would
refuse or get wrong (dependencies, health checks, one-shots, profiles, variables, published addresses,
image pins), the overlay merged on the base by Compose's merge rules, and the admin-tools one-shots' scripts
run against stand-ins of the Temporal tools."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from backends.graph_limits import FALKORDB_LIMITS
from contracts.names import SEARCH_ATTRIBUTES
from contracts.topics import agent_request_topic, agent_response_topic
from service.config import ServiceConfig

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
OVERLAY = ROOT / "docker-compose.trustgraph.yml"
DOCKERFILE = ROOT / "Dockerfile"
LONG_RUNNING = {"unless-stopped", "always", "on-failure"}


# --- Compose's YAML tags, merge rules and interpolation, for the keys these files use -------------------


class Override:
    """`!override`: the overlay's value replaces the base's instead of merging with it."""

    def __init__(self, value: Any) -> None:
        self.value = value


class Reset:
    """`!reset`: the key is removed from the merged result."""


class ComposeLoader(yaml.SafeLoader):
    pass


def _override(loader: yaml.SafeLoader, node: yaml.Node) -> Override:
    if isinstance(node, yaml.MappingNode):
        return Override(loader.construct_mapping(node, deep=True))
    if isinstance(node, yaml.SequenceNode):
        return Override(loader.construct_sequence(node, deep=True))
    return Override(loader.construct_scalar(node))  # type: ignore[arg-type]


ComposeLoader.add_constructor("!override", _override)
ComposeLoader.add_constructor("!reset", lambda loader, node: Reset())


def load(path: Path) -> dict[str, Any]:
    return yaml.load(path.read_text(), Loader=ComposeLoader)  # a SafeLoader that knows two tags


def untagged(value: Any) -> Any:
    """The file as Compose's schema sees it once the tags are applied (an overlay on its own)."""
    if isinstance(value, Override):
        return untagged(value.value)
    if isinstance(value, dict):
        return {k: untagged(v) for k, v in value.items() if not isinstance(v, Reset)}
    if isinstance(value, list):
        return [untagged(v) for v in value]
    return value


REPLACED = {"command", "entrypoint", "test"}  # shell commands: the overlay's replaces the base's


def _as_mapping(key: str, value: Any) -> Any:
    """The list forms Compose accepts for these keys, as the mapping they stand for."""
    if not isinstance(value, list):
        return value
    if key == "environment":
        return {k: v for k, _, v in (item.partition("=") for item in value)}
    if key == "networks":
        return {name: None for name in value}
    if key == "depends_on":
        return {name: {"condition": "service_started"} for name in value}
    return value


def merge(base: Any, over: Any, key: str = "") -> Any:
    """Compose's merge of an overlay onto a base file: mappings by key, sequences appended (each unique
    resource once), shell commands replaced, `!override` replaces, `!reset` removes."""
    if isinstance(over, Override):
        return untagged(over.value)
    base, over = _as_mapping(key, base), _as_mapping(key, over)
    if isinstance(base, dict) and isinstance(over, dict):
        merged = dict(base)
        for k, v in over.items():
            if isinstance(v, Reset):
                merged.pop(k, None)
            elif k in merged:
                merged[k] = merge(merged[k], v, k)
            else:
                merged[k] = untagged(v)
        return merged
    if isinstance(base, list) and isinstance(over, list) and key not in REPLACED:
        return base + [item for item in over if item not in base]
    return untagged(over)


VARIABLE = re.compile(r"\$\$|\$\{(?P<name>[A-Za-z_]\w*)(?:(?P<op>:?[-?+])(?P<arg>[^}]*))?\}|\$(?P<bare>[A-Za-z_]\w*)")


def _substitute(match: re.Match[str], env: dict[str, str]) -> str:
    if match.group(0) == "$$":
        return "$"
    name = match.group("name") or match.group("bare")
    op, arg = match.group("op"), match.group("arg") or ""
    value = env.get(name)
    if op == ":-":
        return value if value else arg
    if op == "-":
        return arg if value is None else value
    if op in (":?", "?") and (value is None or (op == ":?" and not value)):
        raise ValueError(f"{name} is required: {arg}")
    if op in (":+", "+"):
        return arg if (value if op == ":+" else value is not None) else ""
    return value or ""


def interpolate(value: Any, env: dict[str, str]) -> Any:
    """`${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?error}`, `$$` as Compose resolves them."""
    if isinstance(value, str):
        return VARIABLE.sub(lambda m: _substitute(m, env), value)
    if isinstance(value, dict):
        return {k: interpolate(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, env) for v in value]
    return value


def variables(path: Path) -> dict[str, bool]:
    """Each variable a file reads: whether every use of it has a default."""
    found: dict[str, bool] = {}
    for match in VARIABLE.finditer(path.read_text()):
        name = match.group("name") or match.group("bare")
        if name:
            found[name] = found.get(name, True) and match.group("op") in (":-", "-")
    return found


def merged_spec() -> dict[str, Any]:
    return merge(load(COMPOSE), load(OVERLAY))


# --- What `docker compose config` / `up` would refuse or get wrong ---------------------------------------


def is_one_shot(service: dict[str, Any]) -> bool:
    return service.get("restart") == "no"


def has_healthcheck(service: dict[str, Any]) -> bool:
    check = service.get("healthcheck") or {}
    return bool(check.get("test")) and not check.get("disable") and check["test"] != ["NONE"]


def problems(spec: dict[str, Any]) -> list[str]:
    services: dict[str, dict[str, Any]] = spec["services"]
    found = []
    for name, service in services.items():
        if is_one_shot(service):
            if has_healthcheck(service) or service.get("ports"):
                found.append(f"{name}: a one-shot with a health check or published ports")
        elif service.get("restart") not in LONG_RUNNING:
            found.append(f"{name}: neither a one-shot (restart: 'no') nor restarted ({service.get('restart')})")
        elif not has_healthcheck(service):
            found.append(f"{name}: a long-running service without a health check")
        profiles = set(service.get("profiles", []))
        for dependency, how in _as_mapping("depends_on", service.get("depends_on", {})).items():
            target = services.get(dependency)
            if target is None:
                found.append(f"{name}: depends on {dependency}, which is not a service")
                continue
            condition = how.get("condition", "service_started")
            if condition == "service_healthy" and not has_healthcheck(target):
                found.append(f"{name}: waits for {dependency} to be healthy; it has no health check")
            if condition == "service_completed_successfully" and not is_one_shot(target):
                found.append(f"{name}: waits for {dependency} to complete; it is not a one-shot")
            if condition != "service_completed_successfully" and is_one_shot(target):
                found.append(f"{name}: depends on the one-shot {dependency} without waiting for it to complete")
            wanted = set(target.get("profiles", []))
            # `required: false` (Compose 2.20+): a dependency its profiles leave out is dropped, not refused.
            if wanted and not (profiles and profiles <= wanted) and how.get("required", True):
                found.append(f"{name}: depends on {dependency}, which only profiles {sorted(wanted)} start")
        for mount in service.get("volumes", []):
            source = mount.split(":")[0] if isinstance(mount, str) else mount.get("source", "")
            if source and not source.startswith((".", "/", "~", "$")) and source not in spec.get("volumes", {}):
                found.append(f"{name}: volume {source} is not declared")
        for config in service.get("configs", []):
            source = config if isinstance(config, str) else config["source"]
            if source not in spec.get("configs", {}):
                found.append(f"{name}: config {source} is not declared")
        for network in _as_mapping("networks", service.get("networks", {})):
            if network != "default" and network not in spec.get("networks", {}):
                found.append(f"{name}: network {network} is not declared")
    return found


PINNED = re.compile(r"^(v?\d+\.\d+(\.\d+)*(-[\w.]+)?|server-b\d+)$")


def unpinned(spec: dict[str, Any]) -> list[str]:
    """Images pulled from a registry without a version; an image one of the services builds is not pulled."""
    found = []
    built = {service.get("image") for service in spec["services"].values() if "build" in service}
    for name, service in spec["services"].items():
        image = service.get("image")
        if image in built:
            continue
        if image is None:
            if "build" not in service:
                found.append(f"{name}: neither an image nor a build")
            continue
        reference, _, digest = image.partition("@")
        tag = reference.rpartition(":")[2] if ":" in reference.rpartition("/")[2] else ""
        if not (digest.startswith("sha256:") or PINNED.match(tag)):
            found.append(f"{name}: {image} is not pinned to a version")
    return found


def all_profiles(spec: dict[str, Any]) -> set[str]:
    return {profile for service in spec["services"].values() for profile in service.get("profiles", [])}


def active(spec: dict[str, Any], profiles: set[str]) -> set[str]:
    """The services `docker compose --profile ... up` starts: those without profiles and those of a profile
    given (a required dependency on any other is refused: problems() above)."""
    return {
        name
        for name, service in spec["services"].items()
        if not service.get("profiles") or profiles & set(service["profiles"])
    }


def profile_sets(spec: dict[str, Any]) -> list[set[str]]:
    names = sorted(all_profiles(spec))
    return [{p for i, p in enumerate(names) if mask >> i & 1} for mask in range(1 << len(names))]


def builds(spec: dict[str, Any], profiles: set[str]) -> list[str]:
    """The images `up` builds: each active service with a `build` builds its `image` (its own
    `<project>-<service>` image when it names none); services sharing an image name build it once."""
    return sorted(
        {
            service.get("image") or f"{spec.get('name')}-{name}"
            for name, service in spec["services"].items()
            if name in active(spec, profiles) and "build" in service
        }
    )


def published_addresses(spec: dict[str, Any], env: dict[str, str]) -> dict[str, str]:
    """Each published port (service/host port) with the address it listens on, after interpolation."""
    found = {}
    for name, service in interpolate(spec, env)["services"].items():
        for port in service.get("ports", []):
            if isinstance(port, dict):
                found[f"{name}/{port['published']}"] = port.get("host_ip", "0.0.0.0")
                continue
            parts = str(port).split(":")
            found[f"{name}/{parts[-2] if len(parts) > 1 else parts[-1]}"] = parts[0] if len(parts) == 3 else "0.0.0.0"
    return found


def schema_errors(tmp_path: Path, **documents: dict[str, Any]) -> str:
    """Compose specification schema errors of these documents, none for valid ones."""
    paths = []
    for name, document in documents.items():
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(document))
        paths.append(str(path))
    done = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.compose-spec", *paths],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return "" if done.returncode == 0 else done.stdout + done.stderr


# --- The files -------------------------------------------------------------------------------------------


def test_compose_files_validate_against_the_compose_spec_schema(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.compose-spec", str(COMPOSE)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    base, overlay = load(COMPOSE), load(OVERLAY)
    assert not schema_errors(
        tmp_path,
        base=interpolate(base, {}),
        overlay=interpolate(untagged(overlay), {}),
        merged=interpolate(merged_spec(), {}),
        merged_with_variables=interpolate(merged_spec(), {"TGCA_BIND": "0.0.0.0"}),
    )


@pytest.mark.parametrize("spec", [load(COMPOSE), merged_spec()], ids=["base", "with the trustgraph overlay"])
def test_dependencies_health_checks_one_shots_profiles_and_resources_hold(spec: dict[str, Any]) -> None:
    assert problems(spec) == []
    assert unpinned(spec) == []


def test_the_semantic_checks_catch_what_compose_would_refuse() -> None:
    """The checks above, shown to fail on the mistakes they are there for."""
    spec = load(COMPOSE)
    spec["services"]["demo-graph"]["depends_on"]["falkordb"]["condition"] = "service_completed_successfully"
    del spec["services"]["bridge"]["healthcheck"]
    spec["services"]["worker"]["depends_on"]["llm"] = {"condition": "service_healthy"}
    spec["services"]["falkordb"]["image"] = "falkordb/falkordb:latest"
    spec["services"]["pulsar"]["image"] = "apachepulsar/pulsar"
    spec["services"]["bridge"]["depends_on"]["demo-graph"] = {"condition": "service_completed_successfully"}
    spec["services"]["chat"]["image"] = "tg-confidence-agent:latest"  # no longer the image the worker builds
    found = "\n".join(problems(spec) + unpinned(spec))
    for expected in (
        "demo-graph: waits for falkordb to complete",
        "bridge: a long-running service without",
        "chat: waits for bridge to be healthy",
        "worker: depends on llm, which only profiles",
        "bridge: depends on demo-graph, which only profiles ['demo']",
        "falkordb/falkordb:latest is not pinned",
        "apachepulsar/pulsar is not pinned",
        "tg-confidence-agent:latest is not pinned",
    ):
        assert expected in found
    del spec["services"]["bridge"]["image"]
    spec["services"]["bridge"]["build"] = "."  # an image of its own again: a second build
    assert builds(spec, set()) == ["tg-confidence-agent-bridge", "tg-confidence-agent:local"]


def test_every_variable_has_a_default_or_is_documented() -> None:
    readme = (ROOT / "README.md").read_text()
    for path in (COMPOSE, OVERLAY):
        bare = [name for name, defaulted in variables(path).items() if not defaulted and f"`{name}`" not in readme]
        assert bare == [], f"{path.name}: give these a default or document them in the README: {bare}"
    interpolate(merged_spec(), {})  # nothing required is left unset
    for knob in ("TGCA_BIND", "TRUSTGRAPH_NETWORK", "TRUSTGRAPH_PULSAR_URL", "TGCA_WORKSPACE", "TGCA_FLOW"):
        assert f"`{knob}`" in readme, knob


def test_published_ports_listen_on_loopback_unless_tgca_bind_says_otherwise() -> None:
    for spec in (load(COMPOSE), merged_spec()):
        by_default = published_addresses(spec, {})
        assert by_default and set(by_default.values()) == {"127.0.0.1"}, by_default
        opened = published_addresses(spec, {"TGCA_BIND": "0.0.0.0"})
        assert opened.keys() == by_default.keys() and set(opened.values()) == {"0.0.0.0"}


def test_compose_has_every_part_and_points_the_services_at_them() -> None:
    spec = load(COMPOSE)
    services = spec["services"]
    assert {
        "postgresql",
        "temporal",
        "temporal-ui",
        "pulsar",
        "falkordb",
        "llm",
        "worker",
        "bridge",
        "chat",
        "demo-graph",
        "prometheus",
        "grafana",
    } <= set(services)
    assert services["llm"]["profiles"] == ["llm"]
    assert services["prometheus"]["profiles"] == services["grafana"]["profiles"] == ["monitoring"]
    env = interpolate(services["worker"]["environment"], {})
    assert env["TGCA_TEMPORAL_ADDRESS"] == "temporal:7233"
    assert env["TGCA_PULSAR_URL"] == "pulsar://pulsar:6650"
    assert env["TGCA_FALKORDB_URL"] == "redis://falkordb:6379"
    assert env["TGCA_AGENT__SEARCH_ATTRIBUTES"] == "true"  # the one-shot registers them
    assert services["bridge"]["environment"] == services["worker"]["environment"]
    chat = services["chat"]
    assert chat["command"] == ["tg-confidence-chat"] and chat["profiles"] == ["chat"]
    assert {k: v for k, v in chat["environment"].items() if k in env} == services["worker"]["environment"]
    assert chat["environment"]["TGCA_HTTP_HOST"] == "0.0.0.0"  # so it refuses to start without tokens
    assert "/healthz" in " ".join(chat["healthcheck"]["test"])


@pytest.mark.parametrize("name", ["worker", "bridge", "chat"])
def test_each_service_environment_is_a_valid_configuration(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the container gets is a configuration the service accepts: no misspelt TGCA_ key, valid values."""
    for key in [k for k in os.environ if k.startswith(("TGCA_", "TEMPORAL_", "PULSAR_HOST"))]:
        monkeypatch.delenv(key)
    for spec in (load(COMPOSE), merged_spec()):
        env = interpolate(_as_mapping("environment", spec["services"][name]["environment"]), {})
        for key, value in env.items():
            if value is not None:  # a null passes the caller's own variable on, when set
                monkeypatch.setenv(key, str(value))
        ServiceConfig()


def test_temporal_runs_on_the_server_image_prepared_by_admin_tools_one_shots() -> None:
    services = load(COMPOSE)["services"]
    images = {s.get("image", "") for s in services.values()}
    assert not any("auto-setup" in image for image in images)
    server_version = services["temporal"]["image"].removeprefix("temporalio/server:")
    for one_shot in ("temporal-schema", "temporal-namespace", "temporal-search-attributes"):
        assert services[one_shot]["image"] == f"temporalio/admin-tools:{server_version}"  # schemas of the release
    assert services["temporal"]["depends_on"] == {"temporal-schema": {"condition": "service_completed_successfully"}}
    assert services["temporal-namespace"]["depends_on"]["temporal"]["condition"] == "service_healthy"
    assert services["temporal-search-attributes"]["depends_on"] == {
        "temporal-namespace": {"condition": "service_completed_successfully"}
    }
    for name in ("worker", "bridge", "chat"):
        assert services[name]["depends_on"]["temporal-search-attributes"] == {
            "condition": "service_completed_successfully"
        }
    namespace = interpolate(services["worker"]["environment"]["TGCA_TEMPORAL_NAMESPACE"], {})
    for one_shot in ("temporal-namespace", "temporal-search-attributes"):
        assert interpolate(services[one_shot]["environment"]["NAMESPACE"], {}) == namespace
    registered = dict(
        pair.split("=") for pair in services["temporal-search-attributes"]["environment"]["SEARCH_ATTRIBUTES"].split()
    )
    assert registered == SEARCH_ATTRIBUTES  # names and types the workflows upsert


# --- The one-shots' scripts, run against stand-ins of temporal-sql-tool and the temporal CLI ------------

STAND_IN = '''#!{python}
"""Records each call; answers like the real tool from a state directory."""
import os, sys
from pathlib import Path
state = Path(os.environ["STAND_IN_STATE"])
args = sys.argv[1:]
with open(state / "calls", "a") as calls:
    calls.write(" ".join([Path(sys.argv[0]).name, *args]) + "\\n")
if Path(sys.argv[0]).name == "temporal-sql-tool":
    sys.exit(0)
flag = lambda name: args[args.index(name) + 1]
command = " ".join(args[:3])
if command == "operator namespace describe":
    sys.exit(0 if (state / ("namespace-" + flag("--namespace"))).exists() else 1)
if command == "operator namespace create":
    (state / ("namespace-" + flag("--namespace"))).touch()
if command == "operator search-attribute list":
    print("Name Type")
    for line in (state / "attributes").read_text().splitlines() if (state / "attributes").exists() else []:
        print(line)
if command == "operator search-attribute create":
    with open(state / "attributes", "a") as attributes:
        attributes.write(flag("--name") + " " + flag("--type") + "\\n")
'''


def run_one_shot(name: str, tmp_path: Path) -> list[str]:
    """The one-shot's entrypoint and command, as the container runs them, with its environment; the calls."""
    service = interpolate(load(COMPOSE)["services"][name], {})
    bin_dir, state = tmp_path / "bin", tmp_path / "state"
    for directory in (bin_dir, state):
        directory.mkdir(exist_ok=True)
    for tool in ("temporal", "temporal-sql-tool"):
        (bin_dir / tool).write_text(STAND_IN.format(python=sys.executable))
        (bin_dir / tool).chmod(0o755)
    (state / "calls").write_text("")
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "STAND_IN_STATE": str(state), **service["environment"]}
    done = subprocess.run(
        [*service["entrypoint"], *service["command"]], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return (state / "calls").read_text().splitlines()


def test_the_schema_one_shot_creates_and_migrates_both_databases(tmp_path: Path) -> None:
    calls = run_one_shot("temporal-schema", tmp_path)
    expected = []
    for database, directory in (("temporal", "temporal"), ("temporal_visibility", "visibility")):
        expected += [
            f"temporal-sql-tool --db {database} create",
            f"temporal-sql-tool --db {database} setup-schema -v 0.0",
            f"temporal-sql-tool --db {database} update-schema -d "
            f"/etc/temporal/schema/postgresql/v12/{directory}/versioned",
        ]
    assert calls == expected
    env = load(COMPOSE)["services"]["temporal-schema"]["environment"]
    server = load(COMPOSE)["services"]["temporal"]["environment"]
    assert (env["SQL_PLUGIN"], env["SQL_HOST"], env["SQL_PORT"], env["SQL_USER"], env["SQL_PASSWORD"]) == (
        server["DB"],
        server["POSTGRES_SEEDS"],
        server["DB_PORT"],
        server["POSTGRES_USER"],
        server["POSTGRES_PWD"],
    )


def test_the_namespace_and_search_attribute_one_shots_register_once(tmp_path: Path) -> None:
    first = run_one_shot("temporal-namespace", tmp_path) + run_one_shot("temporal-search-attributes", tmp_path)
    assert "temporal operator cluster health" in first
    assert "temporal operator namespace create --namespace default --retention 168h" in first
    created = [c for c in first if c.startswith("temporal operator search-attribute create")]
    assert created == [
        f"temporal operator search-attribute create --namespace default --name {name} --type {kind}"
        for name, kind in SEARCH_ATTRIBUTES.items()
    ]
    again = run_one_shot("temporal-namespace", tmp_path) + run_one_shot("temporal-search-attributes", tmp_path)
    assert not [c for c in again if " create " in c]  # a second `up` changes nothing


# --- The services' images, health, audit trail, demo graph and metrics -----------------------------------


def test_the_image_copies_every_package_it_installs() -> None:
    """A package missing from the Dockerfile installs nothing and the service fails to import at start."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    packages = {p.partition(".")[0] for p in pyproject["tool"]["setuptools"]["packages"]}  # chat.static: in chat
    dockerfile = DOCKERFILE.read_text()
    copied = {line.split()[1] for line in dockerfile.splitlines() if line.startswith("COPY ") and "./" in line}
    assert packages <= copied, sorted(packages - copied)


def test_the_audit_trail_is_on_a_named_volume_its_non_root_user_owns(monkeypatch: pytest.MonkeyPatch) -> None:
    dockerfile = DOCKERFILE.read_text()
    uid = re.search(r"useradd .*--uid (\d+) .*--home-dir (\S+) .* (\w+)\s*\\?\n", dockerfile)
    assert uid, "the image creates a user of its own"
    user_id, home, user = uid.groups()
    assert user_id != "0" and re.search(rf"^USER {user_id}(:\d+)?$", dockerfile, re.M)
    assert f"ENV HOME={home}" in dockerfile
    monkeypatch.delenv("TGCA_AUDIT_PATH", raising=False)
    monkeypatch.setenv("HOME", home)
    audit_dir = str(Path(ServiceConfig().audit_path).parent)  # the default path, in that user's home
    assert re.search(rf"install -d -o {user} -g \w+ -m 07\d\d {re.escape(audit_dir)}\b", dockerfile)
    spec = load(COMPOSE)
    mounts = [m.split(":") for m in spec["services"]["worker"]["volumes"]]
    assert [source for source, target, *_ in mounts if target == audit_dir] == ["audit-trail"]
    assert "audit-trail" in spec["volumes"]


@pytest.mark.parametrize("name", ["worker", "bridge"])
def test_worker_and_bridge_health_checks_call_healthz_on_their_metrics_port(name: str) -> None:
    service = load(COMPOSE)["services"][name]
    command = service["command"]
    port = command[command.index("--metrics-port") + 1]
    test = service["healthcheck"]["test"]
    assert test[:3] == ["CMD", "python", "-c"] and "urllib.request" in test[3]  # the slim image has no curl
    assert f"http://127.0.0.1:{port}/healthz" in test[3]
    targets = {
        t
        for job in yaml.safe_load((ROOT / "monitoring" / "prometheus.yml").read_text())["scrape_configs"]
        for group in job["static_configs"]
        for t in group["targets"]
    }
    assert f"{name}:{port}" in targets  # Prometheus scrapes the same port


def test_falkordb_runs_with_the_limits_up_gives_it() -> None:
    """Time, rows and memory per query are bounded in FalkorDB itself, the same in Compose as in `up`."""
    args = load(COMPOSE)["services"]["falkordb"]["environment"]["FALKORDB_ARGS"]
    assert args.split() == FALKORDB_LIMITS.module_args()


def test_the_demo_graph_loads_once_falkordb_answers() -> None:
    services = load(COMPOSE)["services"]
    loader = services["demo-graph"]
    assert loader["depends_on"] == {"falkordb": {"condition": "service_healthy"}} and is_one_shot(loader)
    assert "redis-cli ping" in " ".join(services["falkordb"]["healthcheck"]["test"])
    command, env = loader["command"], services["worker"]["environment"]
    assert command[:3] == ["python", "-m", "embedded.demo_graph"]
    assert command[command.index("--url") + 1] == env["TGCA_FALKORDB_URL"]
    assert command[command.index("--graph") + 1] == env["TGCA_GRAPH_NAME"]
    assert services["worker"]["depends_on"]["demo-graph"] == {
        "condition": "service_completed_successfully",
        "required": False,
    }  # only with its profile


# --- The TrustGraph overlay ------------------------------------------------------------------------------


def test_the_overlay_joins_trustgraphs_network_pulsar_and_topics(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = merged_spec()
    services = spec["services"]
    assert services["pulsar"]["profiles"]  # out of the path unless asked for
    network = interpolate(spec["networks"]["trustgraph"], {"TRUSTGRAPH_NETWORK": "tg_net"})
    assert network == {"external": True, "name": "tg_net"}
    given = {"TRUSTGRAPH_PULSAR_URL": "pulsar://broker.tg:6650", "TGCA_WORKSPACE": "acme", "TGCA_FLOW": "research"}
    for name in ("worker", "bridge", "chat"):
        service = interpolate(services[name], given)
        assert set(_as_mapping("networks", service["networks"])) == {"default", "trustgraph"}
        assert "pulsar" not in service["depends_on"]
        env = service["environment"]
        assert env["TGCA_PULSAR_URL"] == "pulsar://broker.tg:6650"
        # This project's parts by names only its own network has.
        for key, part in (
            ("TGCA_TEMPORAL_ADDRESS", "temporal"),
            ("TGCA_FALKORDB_URL", "falkordb"),
            ("TGCA_LLM_BASE_URL", "llm"),
        ):
            alias = re.search(r"(?://)?([\w-]+):\d+", env[key]).group(1)  # type: ignore[union-attr]
            assert alias in services[part]["networks"]["default"]["aliases"], key
    for key in [k for k in os.environ if k.startswith(("TGCA_", "TEMPORAL_", "PULSAR_HOST"))]:
        monkeypatch.delenv(key)
    for key, value in interpolate(services["bridge"]["environment"], given).items():
        if value is not None:
            monkeypatch.setenv(key, str(value))
    config = ServiceConfig()
    assert config.request_topics == [agent_request_topic("acme", "research")]  # TrustGraph's agent topics
    assert config.response_topic == agent_response_topic("acme", "research")


# --- What the documented commands start ------------------------------------------------------------------

DOCS = ROOT / "docs" / "production-compose.md"
PROJECT_CODE = ("tg-confidence", "python")  # commands of the services that run this project's image


@pytest.mark.parametrize("spec", [load(COMPOSE), merged_spec()], ids=["base", "with the trustgraph overlay"])
def test_the_image_is_built_once_whatever_the_profiles(spec: dict[str, Any]) -> None:
    built = [name for name, service in spec["services"].items() if "build" in service]
    assert built == ["worker"] and not spec["services"]["worker"].get("profiles")  # every profile set has it
    image = spec["services"]["worker"]["image"]
    ours = {
        name
        for name, service in spec["services"].items()
        if str((service.get("command") or [""])[0]).startswith(PROJECT_CODE)
    }
    assert {"worker", "bridge", "chat", "chat-config", "demo-graph"} <= ours
    assert {name: spec["services"][name]["image"] for name in ours} == dict.fromkeys(ours, image)
    for profiles in profile_sets(spec):
        assert builds(spec, profiles) == [image], profiles


@pytest.mark.parametrize("spec", [load(COMPOSE), merged_spec()], ids=["base", "with the trustgraph overlay"])
def test_the_demo_graph_is_loaded_only_with_its_profile(spec: dict[str, Any]) -> None:
    services = spec["services"]
    assert services["demo-graph"]["profiles"] == ["demo"]
    for profiles in profile_sets(spec):
        assert ("demo-graph" in active(spec, profiles)) == ("demo" in profiles)
    for name, service in services.items():  # nothing else needs it: each wait for it is dropped without it
        how = _as_mapping("depends_on", service.get("depends_on", {})).get("demo-graph")
        assert how is None or how.get("required") is False, name


@pytest.mark.parametrize("spec", [load(COMPOSE), merged_spec()], ids=["base", "with the trustgraph overlay"])
def test_the_worker_is_not_healthy_without_an_llm_and_waits_for_the_local_one(
    spec: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The LLM is a profile of its own (the weights must be there, or another endpoint is used): the worker's
    health check includes it, so a stack that cannot answer does not come up healthy; with the profile on the
    worker starts once the model has loaded."""
    from worker.main import LLM_FAMILIES, parse_args

    worker = spec["services"]["worker"]
    assert spec["services"]["llm"]["profiles"] == ["llm"] and "llm" not in active(spec, set())
    assert worker["depends_on"]["llm"] == {"condition": "service_healthy", "required": False}
    assert "/healthz" in " ".join(worker["healthcheck"]["test"])
    for key in [k for k in os.environ if k.startswith(("TGCA_", "TEMPORAL_", "PULSAR_HOST"))]:
        monkeypatch.delenv(key)
    for key, value in interpolate(_as_mapping("environment", worker["environment"]), {}).items():
        if value is not None:
            monkeypatch.setenv(key, str(value))
    args = parse_args(worker["command"][1:])
    assert ServiceConfig().tool_backend == "local"  # the worker's own LLM client, hence its own llm check
    assert set(args.families.split(",")) & LLM_FAMILIES
    host = re.search(r"//([\w-]+):", ServiceConfig().llm_base_url).group(1)  # type: ignore[union-attr]
    aliases = spec["services"]["llm"].get("networks", {}).get("default", {}).get("aliases", [])
    assert host in {"llm", *aliases}  # by default the worker's LLM is the profile's


DOCKER_STAND_IN = """#!/bin/sh
# Records each `docker` call with the variables compose would read; starts nothing.
{python} -c 'import json, os, sys; print(json.dumps({{"argv": sys.argv[1:], "env": dict(os.environ)}}))' "$@" \
    >> "$DOCKER_CALLS"
"""


def documented_up_commands(tmp_path: Path) -> list[tuple[set[str], dict[str, str]]]:
    """Each `docker compose ... up` in the docs' bash blocks, run by bash against a stand-in `docker`: the
    profiles it turns on and the environment compose would interpolate with."""
    stand_in = tmp_path / "bin" / "docker"
    stand_in.parent.mkdir()
    stand_in.write_text(DOCKER_STAND_IN.format(python=sys.executable))
    stand_in.chmod(0o755)
    calls = tmp_path / "calls"
    blocks = re.findall(r"```bash\n(.*?)```", DOCS.read_text(), re.S)
    for block in [b for b in blocks if "docker compose" in b]:
        env = {
            "PATH": f"{stand_in.parent}:{Path(sys.executable).parent}:/usr/bin:/bin",
            "DOCKER_CALLS": str(calls),
            "HOME": str(tmp_path),
        }
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", block], env=env, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, block + done.stderr
    found = []
    for line in calls.read_text().splitlines():
        call = json.loads(line)
        argv, env = call["argv"], call["env"]
        if argv[:1] == ["compose"] and "up" in argv:
            profiles = {argv[i + 1] for i, arg in enumerate(argv) if arg == "--profile"}
            found.append((profiles | set(filter(None, env.get("COMPOSE_PROFILES", "").split(","))), env))
    return found


def test_each_documented_command_starts_a_stack_that_can_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chat.auth import Authenticator
    from chat.main import refusal

    spec = load(COMPOSE)
    commands = documented_up_commands(tmp_path)
    assert len(commands) >= 3 and any("chat" in profiles for profiles, _ in commands)
    for profiles, env in commands:
        started = active(spec, profiles)
        assert {"worker", "bridge", "temporal", "pulsar", "falkordb"} <= started
        worker_env = interpolate(spec["services"]["worker"]["environment"], env)
        # An LLM the worker reaches: the profile's, or an endpoint of the caller's own.
        assert "llm" in started or not worker_env["TGCA_LLM_BASE_URL"].startswith("http://llm:"), profiles
        if "chat" not in profiles:
            continue
        assert {"chat", "chat-config"} <= started
        for key in [k for k in os.environ if k.startswith(("TGCA_", "TEMPORAL_", "PULSAR_HOST"))]:
            monkeypatch.delenv(key)
        for key, value in interpolate(spec["services"]["chat"]["environment"], env).items():
            monkeypatch.setenv(key, str(value))
        config = ServiceConfig()
        assert refusal(config) == ""  # the chat starts on 0.0.0.0 with these tokens
        assert Authenticator(config.http_tokens).caller(f"Bearer {env['CHAT_TOKEN']}").roles  # and lets them in


def test_the_chat_config_one_shot_fails_up_without_tokens_and_passes_with_the_documented_ones(tmp_path: Path) -> None:
    """chat-config's own command, run with the chat's environment: the refusal the chat would make, said once
    and as a failed one-shot (which fails `up`), not as a chat restarting."""
    service = load(COMPOSE)["services"]["chat-config"]
    assert is_one_shot(service) and service["profiles"] == ["chat"]
    assert load(COMPOSE)["services"]["chat"]["depends_on"]["chat-config"] == {
        "condition": "service_completed_successfully"
    }
    assert merged_spec()["services"]["chat"]["depends_on"]["chat-config"] == {
        "condition": "service_completed_successfully"
    }
    assert service["environment"] == load(COMPOSE)["services"]["chat"]["environment"]
    command = [sys.executable, "-m", "chat", *service["command"][1:]]
    assert service["command"][0] == "tg-confidence-chat"
    base = {k: v for k, v in os.environ.items() if not k.startswith(("TGCA_", "TEMPORAL_"))}
    without = subprocess.run(
        command, env={**base, **interpolate(service["environment"], {})}, capture_output=True, text=True, timeout=60
    )
    assert without.returncode == 1 and "no http_tokens" in without.stderr
    documented = next(env for profiles, env in documented_up_commands(tmp_path) if "chat" in profiles)
    with_tokens = subprocess.run(
        command,
        env={**base, **interpolate(service["environment"], documented)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert with_tokens.returncode == 0, with_tokens.stderr
