"""TrustGraph 2.11.1's config service (`config-svc`, trustgraph-flow) with its table store kept in memory: run by
.venv-trustgraph's Python with config-svc's own arguments (`python -P tests/trustgraph_config_svc.py -p pulsar://...`;
`-P` keeps this directory's modules off the path config-svc imports from).

Everything config-svc does runs as TrustGraph ships it (trustgraph/config/service): the system queue and one queue
per workspace, versions, the pushes on `notify:tg:config` (reserved workspaces kept quiet), workspaces created and
deleted through `__workspaces__`, a new workspace provisioned from `__template__`. Its one store is Cassandra
(trustgraph/tables/config.py), which cannot run on this machine (docs/testing.md says why), so that one class is
replaced before config-svc imports it: `ConfigTableStore`'s methods over a dict, returning what its CQL returns
(rows of a partition in key order, as Cassandra's clustering key sorts them; a version counter that starts at 0).
The state lives as long as the process, as a Cassandra keyspace of its own would for one test module."""

from __future__ import annotations

import sys
import types

Rows = dict[tuple[str, str], dict[str, str]]  # (workspace, class) -> key -> value: the `config` table


class MemoryConfigTableStore:
    """trustgraph.tables.config.ConfigTableStore's interface, over a dict instead of a Cassandra keyspace."""

    def __init__(
        self,
        cassandra_host: object,
        cassandra_username: object,
        cassandra_password: object,
        keyspace: str,
        replication_factor: int = 1,
    ) -> None:
        self.rows: Rows = {}
        self.version = 0

    async def inc_version(self) -> None:
        self.version += 1

    async def get_version(self) -> int:
        return self.version

    async def put_config(self, workspace: str, cls: str, key: str, value: str) -> None:
        self.rows.setdefault((workspace, cls), {})[key] = value

    async def get_value(self, workspace: str, cls: str, key: str) -> str | None:
        return self.rows.get((workspace, cls), {}).get(key)

    async def get_values(self, workspace: str, cls: str) -> list[list[str]]:
        return [[key, value] for key, value in sorted(self.rows.get((workspace, cls), {}).items())]

    async def get_values_all_ws(self, cls: str) -> list[tuple[str, str, str]]:
        return [
            (ws, key, value)
            for (ws, c), entries in self.rows.items()
            if c == cls
            for key, value in sorted(entries.items())
        ]

    async def get_keys_all_ws(self, cls: str) -> list[tuple[str, str]]:
        return [(ws, key) for ws, key, _ in await self.get_values_all_ws(cls)]

    async def get_all(self) -> list[tuple[str, str, str, str]]:
        return [(ws, c, key, value) for (ws, c), entries in self.rows.items() for key, value in sorted(entries.items())]

    async def get_all_for_workspace(self, workspace: str) -> list[tuple[str, str, str]]:
        return [(c, key, value) for ws, c, key, value in await self.get_all() if ws == workspace]

    async def get_keys(self, workspace: str, cls: str) -> list[str]:
        return sorted(self.rows.get((workspace, cls), {}))

    async def delete_key(self, workspace: str, cls: str, key: str) -> None:
        self.rows.get((workspace, cls), {}).pop(key, None)


def main() -> None:
    # trustgraph/tables/config.py imports the Cassandra driver at its top, so the module itself is the one
    # replaced, before config-svc's package imports it.
    tables = types.ModuleType("trustgraph.tables.config")
    tables.ConfigTableStore = MemoryConfigTableStore
    sys.modules["trustgraph.tables.config"] = tables
    from trustgraph.config.service import run

    run()


if __name__ == "__main__":
    main()
