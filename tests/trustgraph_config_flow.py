"""TrustGraph 2.11.1's config service, flow service, no-auth IAM service and api-gateway (trustgraph-flow, from
.venv-trustgraph, as subprocesses) on the test broker, as a TrustGraph deployment without authentication runs them,
so that TrustGraph's own CLIs drive them through the gateway as an operator does (`tg-create-workspace`,
`tg-set-tool`, `tg-put-flow-blueprint`, `tg-start-flow`, `tg-stop-flow`, `tg-show-flows`, `tg-invoke-agent`):

- `flow-svc` runs as shipped. It keeps nothing of its own: a flow it starts is what it writes to the config service
  (the `flow` entry with its blueprint's interfaces, one `processor:<id>` entry per processor of the blueprint).
- `config-svc` runs its own code with its table store in memory (tests/trustgraph_config_svc.py): its only store is
  Cassandra, which cannot run here (docs/testing.md says why).
- `no-auth-svc` runs as shipped: `tg-create-workspace` has it register the workspace with the config service. It
  gives the gateway no JWT signing key, on which the 2.11.1 gateway asks 30 times, 2 s apart, before it listens, so
  this takes a minute to start (tests/trustgraph_gateway.py stands in for IAM to spare that).
- Nothing is given a Pulsar admin URL: pulsar-lite has no admin REST API. `tg-stop-flow` then deletes none of the
  flow's persistent topics (flow-svc logs that it cannot); TrustGraph's Pulsar would have them deleted.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from embedded.processes import ManagedProcess, free_port, tcp_open
from tests.trustgraph_gateway import LOADED, TG_BIN, run_cli, tg_program

CONFIG_SVC = Path(__file__).with_name("trustgraph_config_svc.py")


@dataclass
class Logged:
    """A line one of the programs is to log after `offset` (what its log held before the command that causes it)."""

    part: ManagedProcess
    line: str
    offset: int = 0


def log_size(part: ManagedProcess) -> int:
    return len(part.log_path.read_text(errors="replace")) if part.log_path.exists() else 0


async def logged(waits: list[Logged], timeout_s: float = 60) -> None:
    """Wait until each program has logged its line: how TrustGraph's processors say they have acted on a push."""
    for _ in range(int(timeout_s * 10)):
        waits = [w for w in waits if w.line not in w.part.log_path.read_text(errors="replace")[w.offset :]]
        if not waits:
            return
        await asyncio.sleep(0.1)
    raise TimeoutError(f"{waits[0].part.name} never logged {waits[0].line!r}:\n{waits[0].part.log_tail(30)}")


@dataclass
class TrustGraphServices:
    url: str  # the gateway's
    config: ManagedProcess
    flows: ManagedProcess
    iam: ManagedProcess
    gateway: ManagedProcess

    async def cli(self, program: str, *args: str) -> str:
        """One of TrustGraph's CLIs against the gateway, as an operator runs it; what it printed. They print a
        failure as `Exception: ...` and exit 0, so that fails here too."""
        ran = await run_cli(program, "-u", self.url, *args)
        assert ran.code == 0 and not ran.stderr and not ran.stdout.startswith("Exception"), ran
        return ran.stdout

    async def create_workspace(self, workspace: str) -> None:
        """`tg-create-workspace`, and wait until the config service, the flow service and the gateway serve it."""
        waits = [
            Logged(self.config, f"Subscribed to workspace config queue: {workspace}", log_size(self.config)),
            Logged(self.flows, f"Subscribed to workspace queue: {workspace}", log_size(self.flows)),
            Logged(self.gateway, f"Workspace registered: {workspace}", log_size(self.gateway)),
        ]
        await self.cli("tg-create-workspace", "--workspace-id", workspace)
        await logged(waits)

    async def start_flow(self, workspace: str, blueprint: str, flow: str) -> None:
        """`tg-start-flow`, and wait until the gateway routes the flow."""
        wait = Logged(self.gateway, f"Starting flow {workspace}/{flow}", log_size(self.gateway))
        await self.cli("tg-start-flow", "-w", workspace, "-n", blueprint, "-i", flow, "-d", f"{flow} of {blueprint}")
        await logged([wait])

    async def stop_flow(self, workspace: str, flow: str) -> None:
        """`tg-stop-flow`, and wait until the gateway no longer routes the flow."""
        wait = Logged(self.gateway, f"Stopping flow {workspace}/{flow}", log_size(self.gateway))
        await self.cli("tg-stop-flow", "-w", workspace, "-i", flow)
        await logged([wait])


def _process(name: str, program: list[str], pulsar_url: str, log_dir: Path, *options: str) -> ManagedProcess:
    """One of TrustGraph's programs as its container runs it, without Loki and the Prometheus endpoint (nothing
    here reads them) and without a Pulsar admin URL (pulsar-lite has none)."""
    argv = [
        *program,
        "-p",
        pulsar_url,
        "--pulsar-admin-url",
        "",
        "--no-metrics",
        "--no-loki-enabled",
        "-l",
        "INFO",
        *options,
    ]
    return ManagedProcess(f"TrustGraph {name}", argv, log_dir / f"{name}.log", env={"PYTHONPATH": ""})


@asynccontextmanager
async def running_services(pulsar_url: str, log_dir: Path) -> AsyncIterator[TrustGraphServices]:
    """The four programs, ready once the gateway listens and has read the workspaces the config service holds."""
    port = free_port()
    config = _process("config-svc", [str(TG_BIN / "python"), "-P", str(CONFIG_SVC)], pulsar_url, log_dir)
    flows = _process("flow-svc", [tg_program("flow-svc")], pulsar_url, log_dir)
    iam = _process("no-auth-svc", [tg_program("no-auth-svc")], pulsar_url, log_dir)
    gateway = _process(
        "api-gateway", [tg_program("api-gateway")], pulsar_url, log_dir, "--port", str(port), "--timeout", "120"
    )
    async with AsyncExitStack() as stack:
        # The config service first: the others ask it for their start-up config on a non-persistent queue, and a
        # question asked before it listens is lost (each would ask again after a 10 s timeout and a restart).
        stack.callback(config.stop)
        config.start()
        await logged([Logged(config, "Discovered workspaces:")])
        for part in (flows, iam, gateway):
            stack.callback(part.stop)
            part.start()
        await logged([Logged(flows, "Applied startup config version"), Logged(iam, "Added producer: response:tg:iam")])
        for _ in range(1200):  # the gateway's minute of asking no-auth-svc for a signing key
            if await tcp_open(port):
                break
            await asyncio.sleep(0.1)
        # The gateway's first look at the workspaces replaces the set it knows, and it takes the config version
        # its fetches answer: a workspace created before that look ends would be forgotten (or its push ignored
        # as a version already seen), so none is created until the gateway says it is done.
        await logged([Logged(gateway, LOADED)], timeout_s=120)
        yield TrustGraphServices(f"http://127.0.0.1:{port}/", config, flows, iam, gateway)
