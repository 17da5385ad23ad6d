"""The process that runs cypher-guardrail's schema and property checks (`python -m backends.query_checker_process`),
started and spoken to by backends/query_checker.py.

It exists so that the worker never imports cypher-guardrail: the library loads pandas (and numpy) when it is
imported and uses DataFrames while it checks, ~46 MB of the worker's resident set for checks that take 0.4-4 ms
(docs/benchmarks/memory.md). Here that cost is paid once, in a process of its own, whatever the worker runs.

Protocol: one JSON object a line on stdin, one reply a line on stdout, in order.
- `{"id": n, "schema": key, "load": {"nodes": {label: [keys]}, "rels": [[a, type, b]], "rel_props": {type: [keys]},
  "graph": name}}` builds that schema's snapshot; reply `{"id": n}`.
- `{"id": n, "schema": key, "check": "schema" | "properties", "query": text}`: reply `{"id": n, "found": [...]}`
  (the library's findings), `{"id": n, "missing": true}` when the schema is not loaded here (this process
  keeps the last few), or `{"id": n, "error": text}` when the library fails on the query.
The process ends when stdin closes: when the worker exits, however it exits.
"""

from __future__ import annotations

import json
import signal
import sys
import traceback
from collections import OrderedDict
from typing import IO, Any

from cypher_guardrail import PropertiesValidator, SchemaValidator, Snapshot

KEPT_SCHEMAS = 8  # graphs checked by one worker (tests use several); the oldest is dropped first


def handle(request: dict[str, Any], snapshots: OrderedDict[str, Snapshot]) -> dict[str, Any]:
    key = str(request["schema"])
    if "load" in request:
        schema = request["load"]
        snapshots[key] = Snapshot.from_schema(
            {str(label): [str(k) for k in keys] for label, keys in schema["nodes"].items()},
            sorted((str(a), str(t), str(b)) for a, t, b in schema["rels"]),
            relationship_properties={str(t): [str(k) for k in keys] for t, keys in schema["rel_props"].items()},
            graph=str(schema["graph"]),
        )
        snapshots.move_to_end(key)
        while len(snapshots) > KEPT_SCHEMAS:
            snapshots.popitem(last=False)
        return {}
    snapshot = snapshots.get(key)
    if snapshot is None:
        return {"missing": True}
    snapshots.move_to_end(key)
    validator = SchemaValidator if request["check"] == "schema" else PropertiesValidator
    _, found = validator(snapshot).validate(str(request["query"]))
    return {"found": found}


def serve(requests: IO[str], replies: IO[str]) -> None:
    snapshots: OrderedDict[str, Snapshot] = OrderedDict()
    for line in requests:
        request_id = None
        try:
            request = json.loads(line)
            request_id = request["id"]
            reply = {"id": request_id, **handle(request, snapshots)}
        except Exception as e:  # one query the library cannot read is that query's error, not the process's end
            traceback.print_exc(file=sys.stderr)
            reply = {"id": request_id, "error": f"{type(e).__name__}: {e}"}
        replies.write(json.dumps(reply, default=str) + "\n")
        replies.flush()


def main() -> None:
    # Ctrl-C reaches the whole process group: the worker then finishes its activities, which may still ask.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    replies = sys.stdout
    sys.stdout = sys.stderr  # whatever the library prints cannot corrupt a reply
    serve(sys.stdin, replies)


if __name__ == "__main__":
    main()
