"""Configuration precedence: built-in defaults < YAML file < environment < command-line flags."""

from __future__ import annotations

from pathlib import Path

import pytest

from worker.main import parse_args
from worker.main import worker_config as config_from_args


def test_each_layer_overrides_the_one_below(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    yaml_file = tmp_path / "agent.yaml"
    yaml_file.write_text(
        "graph_name: from-yaml\nllm_model: from-yaml\nagent:\n  max_retries: 1\n  confidence_threshold: 0.6\n"
    )
    monkeypatch.setenv("TGCA_CONFIG", str(yaml_file))
    monkeypatch.setenv("TGCA_LLM_MODEL", "from-env")
    monkeypatch.setenv("TGCA_AGENT__MAX_RETRIES", "2")
    monkeypatch.setenv("PULSAR_HOST", "pulsar://from-env:6650")

    config = config_from_args(parse_args(["--max-retries", "5", "-P", "9100"]))

    assert config.graph_name == "from-yaml"  # YAML over default
    assert config.llm_model == "from-env"  # env over YAML
    assert config.agent.max_retries == 5  # flag over env and YAML
    assert config.agent.confidence_threshold == 0.6  # nested YAML key kept beside the flag
    assert config.pulsar_url == "pulsar://from-env:6650"  # TrustGraph's PULSAR_HOST
    assert config.metrics_port == 9100
    assert config.agent.step_timeout_ms == 30000  # built-in default


def test_defaults_match_the_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TGCA_CONFIG", raising=False)
    config = config_from_args(parse_args([]))
    a = config.agent
    assert (a.confidence_threshold, a.max_retries, a.retry_backoff_factor, a.step_timeout_ms, a.max_iterations) == (
        0.75,
        3,
        2.0,
        30000,
        15,
    )
    assert a.tool_thresholds == {}  # each tool's own default applies
    assert config.metrics_port == 8000


def test_out_of_range_flags_are_refused(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("TGCA_CONFIG", raising=False)
    with pytest.raises(SystemExit) as exited:
        config_from_args(parse_args(["--confidence-threshold", "1.7"]))
    assert exited.value.code == 2
    assert "configuration error: agent.confidence_threshold" in capsys.readouterr().err


def test_a_misspelt_key_in_the_file_is_an_error_naming_the_closest_key(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from service.config import ConfigError, load_config

    path = tmp_path / "agent.yaml"
    path.write_text("agent:\n  max_retrys: 5\ngraph_nam: g\nllm_model: m\n")
    monkeypatch.setenv("TGCA_CONFIG", str(path))
    with pytest.raises(ConfigError) as refused:
        load_config()
    assert str(refused.value) == (
        "unknown setting 'agent.max_retrys'; did you mean 'max_retries'?; "
        "unknown setting 'graph_nam'; did you mean 'graph_name'?"
    )


def test_a_misspelt_environment_variable_is_an_error_and_known_ones_still_apply(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from service.config import ConfigError, load_config

    monkeypatch.delenv("TGCA_CONFIG", raising=False)
    monkeypatch.setenv("TGCA_AGENT__MAX_RETRIES", "5")
    monkeypatch.setenv("TGCA_LLM_MODEL", "m")
    monkeypatch.setenv("TGCA_OVERRIDE_KEY", "read elsewhere")
    config = load_config()
    assert config.agent.max_retries == 5 and config.llm_model == "m"
    monkeypatch.setenv("TGCA_AGENT__MAX_RETRYS", "7")
    with pytest.raises(ConfigError, match="TGCA_AGENT__MAX_RETRYS; did you mean 'TGCA_AGENT__MAX_RETRIES'"):
        load_config()


def test_a_missing_config_file_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TGCA_CONFIG", str(tmp_path / "nope.yaml"))
    with pytest.raises(FileNotFoundError, match=r"nope\.yaml"):
        config_from_args(parse_args([]))


def test_the_agent_topics_are_the_flows_and_each_request_topic_is_answered_on_its_pair(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A bridge for `--workspace acme --flow myflow` serves that flow's topics, and a caller on any request
    topic in TrustGraph's naming (another flow's, or the 1.x `agent:<flow>`) hears back on its own."""
    from bridge.main import parse_args as bridge_args
    from service.flags import config_from_args as bridge_config

    monkeypatch.delenv("TGCA_CONFIG", raising=False)
    config = bridge_config(bridge_args(["--workspace", "acme", "--flow", "myflow"]))
    assert config.request_topics == ["non-persistent://tg/request/agent:acme:myflow"]
    assert config.response_topic == "non-persistent://tg/response/agent:acme:myflow"
    assert (
        config.response_topic_for("non-persistent://tg/request/agent:legacy")
        == "non-persistent://tg/response/agent:legacy"
    )
    assert (
        config.response_topic_for("persistent://tg/request/agent:acme:other-partition-1")
        == "non-persistent://tg/response/agent:acme:other"
    )
    assert config.response_topic_for("persistent://public/default/my-requests") == config.response_topic

    named = bridge_config(
        bridge_args(
            ["--request-topic", "persistent://public/default/in", "--response-topic", "persistent://public/default/out"]
        )
    )
    assert named.request_topics == ["persistent://public/default/in"]
    assert named.response_topic_for("persistent://public/default/in") == "persistent://public/default/out"


def test_temporals_own_client_settings_apply(monkeypatch: pytest.MonkeyPatch) -> None:
    """Temporal Cloud as its users configure it: TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE, an API key (which
    turns TLS on) and the same variables the `temporal` CLI reads; TGCA_* still wins over them."""
    from service.connections import temporal_connect_options

    monkeypatch.delenv("TGCA_CONFIG", raising=False)
    monkeypatch.setenv("TEMPORAL_CONFIG_FILE", "/nonexistent/temporal.toml")
    monkeypatch.setenv("TEMPORAL_ADDRESS", "acme.a1b2c.tmprl.cloud:7233")
    monkeypatch.setenv("TEMPORAL_NAMESPACE", "acme.a1b2c")
    monkeypatch.setenv("TEMPORAL_API_KEY", "secret-key")
    config = config_from_args(parse_args([]))
    assert (config.temporal_address, config.temporal_namespace) == ("acme.a1b2c.tmprl.cloud:7233", "acme.a1b2c")
    assert temporal_connect_options() == {"api_key": "secret-key", "tls": True}

    monkeypatch.setenv("TGCA_TEMPORAL_ADDRESS", "127.0.0.1:7299")
    assert config_from_args(parse_args([])).temporal_address == "127.0.0.1:7299"
    monkeypatch.delenv("TEMPORAL_API_KEY")
    assert temporal_connect_options() == {}
