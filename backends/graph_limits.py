"""What FalkorDB lets one query cost: time, memory and rows. The server enforces them, so that a query no check
foresaw (`UNWIND range(1, 30000000) AS x RETURN x`, a cross product) is stopped there rather than built, sent
and parsed by the worker. `up` and the test fixtures load the module with these (embedded/parts.py); the
Compose file sets the same in FALKORDB_ARGS (a test holds it to this definition); another deployment sets
them as docs/running.md, "FalkorDB's limits" says."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FalkorDBLimits:
    # A query that names no timeout of its own is stopped after this long.
    timeout_default_ms: int = 10_000
    # No query may ask for longer (FalkorDB refuses one that does): the longest read of this service's own,
    # an action's target selection, asks for 60 s; a longer step timeout is cut to this for its query.
    timeout_max_ms: int = 60_000
    # Rows a result holds at most, whatever the query says (the rest are dropped by the server): above the
    # largest read of this service's own (schema facts and the benchmarks' generators read up to 100,000).
    resultset_size: int = 100_000
    # Memory one query may use; past it the query fails ("Query's mem consumption exceeded capacity").
    query_mem_capacity: int = 256 << 20

    def module_args(self) -> list[str]:
        """The module's load-time arguments (`--loadmodule falkordb.so ARG VALUE ...`, or FALKORDB_ARGS)."""
        return [
            "TIMEOUT_DEFAULT",
            str(self.timeout_default_ms),
            "TIMEOUT_MAX",
            str(self.timeout_max_ms),
            "RESULTSET_SIZE",
            str(self.resultset_size),
            "QUERY_MEM_CAPACITY",
            str(self.query_mem_capacity),
        ]


FALKORDB_LIMITS = FalkorDBLimits()
