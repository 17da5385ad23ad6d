"""The monitoring profile: Prometheus scrapes the worker and the bridge, Grafana is provisioned with the
service's dashboard, and every query on the dashboard names a metric the service exposes (a renamed metric
would otherwise leave a panel silently empty)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml
from prometheus_client import REGISTRY, CollectorRegistry

import activities.actions  # noqa: F401  (registers the action metrics)
import bridge.bridge_metrics  # noqa: F401  (registers the bridge's metrics)
from service.agent_metrics import AgentMetrics

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "monitoring/grafana/dashboards/tg-confidence-agent.json"
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def exposed_names() -> set[str]:
    """Every sample name the worker and bridge processes expose (counters with _total, histograms' series)."""
    registry = CollectorRegistry()
    AgentMetrics(registry)
    names = set()
    for source in (registry, REGISTRY):
        for family in source.collect():
            names |= {sample.name for sample in family.samples}
            if family.type == "histogram":
                names |= {f"{family.name}_bucket", f"{family.name}_sum", f"{family.name}_count"}
            if family.type == "counter":
                names.add(f"{family.name}_total")
    return names


def test_every_dashboard_query_names_a_metric_the_service_exposes() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    exposed = exposed_names()
    assert dashboard["panels"], "an empty dashboard"
    for panel in dashboard["panels"]:
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            metrics = set(re.findall(r"\b(?:agent|tgca|tg)_[a-z0-9_]+", target["expr"]))
            assert metrics, (panel["title"], target["expr"])
            assert metrics <= exposed, (panel["title"], metrics - exposed)


def test_the_dashboard_is_well_formed_for_grafana() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["uid"] and dashboard["title"] and isinstance(dashboard["schemaVersion"], int)
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    datasource = yaml.safe_load((ROOT / "monitoring/grafana/provisioning/datasources/prometheus.yml").read_text())
    uid = datasource["datasources"][0]["uid"]
    occupied: set[tuple[int, int]] = set()
    for panel in dashboard["panels"]:
        assert panel["datasource"]["uid"] == uid and all(t["datasource"]["uid"] == uid for t in panel["targets"])
        grid = panel["gridPos"]
        assert grid["x"] + grid["w"] <= 24, panel["title"]  # Grafana's grid is 24 columns wide
        cells = {
            (x, y) for x in range(grid["x"], grid["x"] + grid["w"]) for y in range(grid["y"], grid["y"] + grid["h"])
        }
        assert not cells & occupied, f"{panel['title']} overlaps another panel"
        occupied |= cells
        assert len({t["refId"] for t in panel["targets"]}) == len(panel["targets"])


def test_the_monitoring_profile_scrapes_the_services_and_provisions_the_dashboard() -> None:
    services = COMPOSE["services"]
    for name in ("prometheus", "grafana"):
        assert services[name]["profiles"] == ["monitoring"]
        assert ":" in services[name]["image"] and not services[name]["image"].endswith(":latest")
        # loopback unless TGCA_BIND says otherwise (tests/integration/test_compose.py checks every service)
        assert all(port.startswith("${TGCA_BIND:-127.0.0.1}:") for port in services[name]["ports"])
        assert services[name]["healthcheck"]["test"]
        for volume in services[name]["volumes"]:
            source = volume.split(":", 1)[0]
            if source.startswith("./"):
                assert (ROOT / source).exists(), source
    prometheus = yaml.safe_load((ROOT / "monitoring/prometheus.yml").read_text())
    targets = {t for job in prometheus["scrape_configs"] for group in job["static_configs"] for t in group["targets"]}
    for target in targets:
        service, port = target.split(":")
        assert service in services, target
        assert "--metrics-port" not in services[service].get("command", []) or port in services[service]["command"]
    assert {"worker:8000", "bridge:8000"} <= targets
    dashboards = yaml.safe_load((ROOT / "monitoring/grafana/provisioning/dashboards/dashboards.yml").read_text())
    assert dashboards["providers"][0]["options"]["path"] == "/var/lib/grafana/dashboards"
    assert "./monitoring/grafana/dashboards:/var/lib/grafana/dashboards:ro" in services["grafana"]["volumes"]
