"""The flags every entry point shares, as one chain (TrustGraph's processors do the same with
`add_args`): `-p/--pulsar-host`, `-l/--log-level` and `-P/--metrics-port` mean the same thing in the
worker, the bridge and the CLI. Flags left out do not override the configuration file or environment.

Precedence: built-in defaults (service/defaults.py) < YAML file (`--config` or TGCA_CONFIG) < environment
(TGCA_*, and PULSAR_HOST) < flags.
"""

from __future__ import annotations

import argparse
import os
import sys
from importlib.metadata import PackageNotFoundError, version
from typing import Any, get_args

from service.config import ConfigError, ServiceConfig, load_config
from service.lifecycle import LogFormat


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """`--help` shows each flag's default: its own, or for a flag that only overrides the configuration,
    the built-in default it overrides (the file and TGCA_* variables may set another)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if "%(default)" in text or not action.option_strings or action.default is argparse.SUPPRESS:
            return text
        default = action.default
        if default is None:
            field = ServiceConfig.model_fields.get(action.dest)
            default = None if field is None or field.default_factory is not None else field.default
            if default not in (None, "", []):
                return f"{text} (default: {str(default).replace('%', '%%')})"
            return text
        return text if default in (False, "", []) else f"{text} (default: %(default)s)"


def package_version() -> str:
    try:
        return version("tg-confidence-agent")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown"


def entry_parser(prog: str, description: str | None) -> argparse.ArgumentParser:
    """The parser every entry point starts from: defaults shown in --help, and --version."""
    p = argparse.ArgumentParser(prog=prog, description=description, formatter_class=HelpFormatter)
    p.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    return p


def add_common_args(p: argparse.ArgumentParser) -> None:
    """Pulsar, Temporal, logging, metrics and the configuration file."""
    p.add_argument(
        "-p",
        "--pulsar-host",
        "--pulsar-url",
        dest="pulsar_url",
        help="Pulsar service URL, e.g. pulsar://127.0.0.1:6650 (env PULSAR_HOST or TGCA_PULSAR_URL)",
    )
    p.add_argument("-l", "--log-level", help="DEBUG, INFO, WARNING or ERROR (env TGCA_LOG_LEVEL)")
    p.add_argument(
        "--log-format",
        choices=get_args(LogFormat),
        help="auto: readable lines on a terminal, JSON lines otherwise (env TGCA_LOG_FORMAT)",
    )
    p.add_argument(
        "-i",
        "--id",
        dest="processor_id",
        help="processor id: the `processor` label of the tg_* metrics (env TGCA_PROCESSOR_ID)",
    )
    p.add_argument(
        "-P",
        "--metrics-port",
        type=int,
        help="Prometheus port of this process, 0 to turn it off (env TGCA_METRICS_PORT)",
    )
    p.add_argument(
        "--metrics-host", help="address metrics and /healthz listen on (env TGCA_METRICS_HOST; default 127.0.0.1)"
    )
    p.add_argument("--temporal-address", help="Temporal frontend host:port (env TGCA_TEMPORAL_ADDRESS)")
    p.add_argument("--temporal-namespace", help="Temporal namespace (env TGCA_TEMPORAL_NAMESPACE)")
    p.add_argument("--config", help="YAML configuration file (env TGCA_CONFIG)")


def add_flow_args(p: argparse.ArgumentParser) -> None:
    """Which TrustGraph flow's agent topics to serve or talk to."""
    p.add_argument("-w", "--workspace", help="TrustGraph workspace (env TGCA_WORKSPACE)")
    p.add_argument("-f", "--flow-id", "--flow", dest="flow", help="TrustGraph flow (env TGCA_FLOW)")
    p.add_argument(
        "--request-topic",
        dest="request_topics",
        action="append",
        help="agent request topic (repeatable; env TGCA_REQUEST_TOPICS as a JSON list)",
    )
    p.add_argument("--response-topic", help="agent response topic (env TGCA_RESPONSE_TOPIC)")


def add_backend_args(p: argparse.ArgumentParser) -> None:
    """The LLM and the knowledge graph the tools use."""
    p.add_argument("--falkordb-url", help="FalkorDB URL, e.g. redis://127.0.0.1:6379")
    p.add_argument("--graph-name", help="FalkorDB graph to query")
    p.add_argument("--ontology-path", help="the domain's ontology YAML (enables the action path and its tools)")
    p.add_argument("--llm-base-url", help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1")
    p.add_argument("--llm-model", help="model name sent to the LLM server")
    p.add_argument("--llm-api-key", help="API key for the LLM server")
    p.add_argument(
        "--graph-candidates",
        type=int,
        help="queries compared per graph step for agreement (1: only the planner's; default 1)",
    )
    p.add_argument(
        "--tool-backend",
        choices=["local", "trustgraph"],
        help="local: OpenAI-compatible LLM and FalkorDB; trustgraph: TrustGraph's services over Pulsar",
    )


def config_from_args(args: argparse.Namespace, **extra: Any) -> ServiceConfig:
    """The configuration with every flag given on the command line (and `extra`) on top."""
    if getattr(args, "config", None):
        os.environ["TGCA_CONFIG"] = args.config  # read by ServiceConfig's YAML source
    fields = set(ServiceConfig.model_fields)
    given = {k: v for k, v in vars(args).items() if k in fields and v is not None}
    try:
        return load_config(**given, **extra)
    except ConfigError as exc:  # a usage error, said plainly: no traceback
        print(f"tg-confidence: configuration error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
