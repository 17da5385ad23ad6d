"""Soak and chaos: mixed traffic through Pulsar for a long while, with parts of the stack SIGKILLed at random
moments, then a check that nothing was lost, applied twice or left hanging, and that memory stayed flat.

    .venv/bin/python bench/soak.py --minutes 30 --out bench/results/soak.json

The stack is the real one `tg-confidence up` starts (Temporal dev server, broker, FalkorDB, worker, bridge,
each restarted by `up`'s supervisor when it dies), on persistent topics, with signed overrides configured
(one generated identity holding the review and approve roles, and another, the requester every action names,
holding the role 'act': a requester may not approve its own action). Only the model is scripted (an instant
OpenAI-compatible server in this process). The caller behaves as a TrustGraph client that wants an answer:
it resends a request (same id) after 90 s of silence and a follow-up that got no reply; a resent request
never starts a second run (one workflow per request id).

Traffic, at --rate requests/s: questions (one graph query); weak questions (the query finds nothing, so
after the retries the run asks a human, and the caller answers with a signed Pulsar follow-up over the
challenge the stream names); batches of 4 orders (submit or withdraw); batches of 8 (over the approval
limit: approved with a signed follow-up); malformed payloads (answered with an error). Meanwhile one of
--parts is SIGKILLed every --kill-min..--kill-max seconds.

With --sever the caller listens as TrustGraph's clients do, on a non-persistent response topic, and reaches
the broker through a proxy that cuts its connections every --sever-min..--sever-max seconds and refuses it for
1-15 s: what the topic had for it meanwhile is gone. Like `ask`, it looks a run up in Temporal after 5 s of
silence and takes the closing messages (or the request for a decision) it missed (service/run_recovery.py).

Checked afterwards: every request ended (an answer or an error); answers lost (the run completed, the caller
never got its end); dialogs that ended twice for the caller; no run still open; at most one ActionRecord per
run and entity; the records written equal the successes the answers reported; worker and bridge memory (RSS of
each process life, sampled every 5 s) from its first minute to its end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import signal
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pulsar
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from falkordb.asyncio import FalkorDB
from temporalio.client import Client
from temporalio.service import RPCError

from bench.harness import percentile
from contracts.action_path import parse_action_event
from contracts.delivery import DELIVERY_PROPERTY
from contracts.names import workflow_id_for
from contracts.override import Override
from contracts.wire_codec import encode_response
from embedded import demo_graph
from embedded.processes import free_port
from embedded.stack_state import StackState
from overrides.checks import signed_decision
from overrides.signing import new_key_pair
from service.connections import pulsar_client
from service.run_recovery import RunLookup
from tests.scripted_llm import ScriptedLLM, is_action_planning, is_planning, is_routing, is_synthesis
from tests.severable_proxy import SeverableProxy

ROOT = Path(__file__).resolve().parent.parent
REQUEST_TOPIC = "persistent://tg/flow/agent:soak:default"
RESPONSE_TOPIC = "persistent://tg/response/agent:soak:default"
SEVERED_RESPONSE_TOPIC = "non-persistent://tg/response/agent:soak:default"  # --sever: TrustGraph's kind of topic
RESEND_AFTER_S = 90.0
SUCCEEDED = re.compile(r"on \d+ \w+ entities: (\d+) succeeded")  # a batch's answer: "... 3 succeeded, 1 failed."
REQUESTER = "soak-requester"  # the user every action request names: an identity holding the role 'act'
LOOK_UP_AFTER_S = 5.0  # a run silent this long is looked up in Temporal (as `ask` does)
TAG = re.compile(r"\[soak (\w+) ([\w-]+)\]")  # every question carries its kind and the targets' key
CHALLENGE = re.compile(r"over challenge (\S+)\.")
STEP = re.compile(r"tg-confidence override (\S+) (\S+) accept")
KINDS = {"question": 0.35, "weak": 0.15, "batch": 0.25, "approval": 0.1, "malformed": 0.15}
SUPPLIERS = ["Acme Industrial", "Globex Supply", "Initech Components"]


# -- the scripted model ---------------------------------------------------------------------------------------


class Model:
    """Answers by the tag in the question: a counting plan, a plan that finds nothing, or an action batch."""

    def __init__(self, batches: dict[str, tuple[str, list[str]]]) -> None:
        self.batches = batches  # key -> (action, order ids)

    def __call__(self, body: dict[str, Any]) -> tuple[int, str]:
        text = json.dumps(body["messages"])
        tag = TAG.search(text)
        kind, key = (tag.group(1), tag.group(2)) if tag else ("question", "")
        if is_routing(body):
            return 200, json.dumps({"intent": "ACTION" if kind in ("batch", "approval") else "QUERY"})
        if is_action_planning(body):
            action, orders = self.batches[key]
            return 200, json.dumps(
                {
                    "entity_type": "PurchaseOrder",
                    "action_name": action,
                    "entity_ids": orders,
                    "related_class": "",
                    "related_name": "",
                }
            )
        if is_planning(body):
            name = "Nobody Ltd" if kind == "weak" else random.choice(SUPPLIERS)
            query = (
                f"MATCH (po:PurchaseOrder)-[:ISSUED_TO]->(s:Supplier {{name: '{name}'}}) "
                "RETURN s.name AS supplier, count(po) AS orders"
            )
            return 200, json.dumps(
                {"steps": [{"id": "s1", "function": "GraphQuery", "dependencies": [], "arguments": {"query": query}}]}
            )
        if is_synthesis(body):
            return 200, "The supplier has the orders the query counted."
        return 200, "ok"


# -- the caller ---------------------------------------------------------------------------------------------


@dataclass
class Request:
    kind: str
    payload: bytes
    sent: float
    last_heard: float
    messages: list[dict[str, Any]] = field(default_factory=list)
    ended: float | None = None
    ends_taken: int = 0  # end-of-dialog messages the caller took (more than one: an answer delivered twice)
    looked_up: float = 0.0
    resent: int = 0
    answered_override: set[str] = field(default_factory=set)  # challenges already answered
    follow_ups: dict[str, FollowUp] = field(default_factory=dict)

    @property
    def outcome(self) -> str:
        return self.messages[-1]["message_type"] if self.ended else "none"


@dataclass
class FollowUp:
    follow_up_id: str
    payload: bytes
    sent: float
    reply: dict[str, Any] | None = None
    resent: int = 0


class Caller:
    def __init__(
        self,
        pulsar_url: str,
        private_pem: bytes,
        identity: str,
        batches: dict[str, tuple[str, list[str]]],
        orders: list[str],
        rng: random.Random,
        response_topic: str = RESPONSE_TOPIC,
        runs: RunLookup | None = None,
    ) -> None:
        self.pulsar_url = pulsar_url
        self.response_topic = response_topic
        self.runs = runs  # where silent runs are looked up (None: the caller only resends)
        self.recovered = 0  # messages taken from Temporal that the topic had dropped
        self.private = serialization.load_pem_private_key(private_pem, password=None)
        assert isinstance(self.private, Ed25519PrivateKey)
        self.identity = identity
        self.batches = batches
        self.orders = orders
        self.rng = rng
        self.requests: dict[str, Request] = {}
        self.follow_up_of: dict[str, tuple[str, str]] = {}  # follow-up id -> (request id, challenge)
        self.message_ids: dict[tuple[str, str], str] = {}  # (request id, delivery id) -> content
        self.repeated = 0  # a message delivered again (at least once: allowed, the client drops it)
        self.conflicting = 0  # the same message id with other content (never allowed)
        self.send_failures = 0
        self.count = 0

    async def start(self) -> None:
        self.client = pulsar_client(self.pulsar_url)
        self.consumer = await self.client.subscribe(
            self.response_topic, "soak-caller", initial_position=pulsar.InitialPosition.Earliest
        )
        self.producer = await self.client.create_producer(
            REQUEST_TOPIC, batching_enabled=False, send_timeout_millis=10_000
        )
        self.listening = asyncio.create_task(self.listen())

    async def close(self) -> None:
        self.listening.cancel()
        await asyncio.gather(self.listening, return_exceptions=True)
        await self.client.close()

    async def send(self, request_id: str, payload: bytes) -> bool:
        try:
            await self.producer.send(payload, properties={"id": request_id})
            return True
        except Exception:  # the broker is down: resent later, like any caller would
            self.send_failures += 1
            return False

    def new_request(self) -> tuple[str, Request]:
        self.count += 1
        kind = self.rng.choices(list(KINDS), weights=list(KINDS.values()))[0]
        request_id = f"soak-{self.count}-{uuid.uuid4().hex[:8]}"
        # Letters only: a code with digits in it would be a name the request gives that the graph does not hold,
        # which holds an action's targets for a human (actions/scope.py).
        key = "".join(chr(ord("a") + int(c, 16)) for c in uuid.uuid4().hex[:10])
        supplier = self.rng.choice(SUPPLIERS)
        if kind == "malformed":
            payload = json.dumps({"question": ["not", "text"]}).encode()
        elif kind == "question":
            payload = json.dumps(
                {"question": f"How many purchase orders does {supplier} have? [soak question {key}]"}
            ).encode()
        elif kind == "weak":
            payload = json.dumps({"question": f"Who is the rival of {supplier}? [soak weak {key}]"}).encode()
        else:
            size = 4 if kind == "batch" else 8
            orders = self.rng.sample(self.orders, size)
            action = self.rng.choice(["submit", "withdraw"])
            self.batches[key] = (action, orders)
            payload = json.dumps(
                {
                    "question": f"{action.capitalize()} purchase orders {', '.join(orders)} [soak {kind} {key}]",
                    "user": REQUESTER,
                }
            ).encode()
        now = time.monotonic()
        request = Request(kind, payload, now, now)
        self.requests[request_id] = request
        return request_id, request

    async def listen(self) -> None:
        while True:
            try:
                message = await self.consumer.receive()
            except Exception:  # the broker went away: the client reconnects
                await asyncio.sleep(0.5)
                continue
            try:
                await self.consumer.acknowledge(message)
            except Exception:
                pass
            request_id = message.properties().get("id", "")
            try:
                body = json.loads(message.data())
            except ValueError:
                continue
            await self.take(request_id, body, str(message.properties().get(DELIVERY_PROPERTY) or ""))

    async def take(self, request_id: str, body: dict[str, Any], delivery_id: str = "") -> None:
        """`delivery_id`: the message's (contracts/delivery.py); the chunks of one answer share a message_id."""
        if request_id in self.follow_up_of:
            owner, challenge = self.follow_up_of[request_id]
            self.requests[owner].follow_ups[challenge].reply = body
            return
        request = self.requests.get(request_id)
        if request is None:
            return
        request.last_heard = time.monotonic()
        key = (request_id, delivery_id or str(body.get("message_id") or ""))
        content = str(body.get("content") or "") + str(body.get("error") or "")
        if key[1] and key in self.message_ids:
            self.repeated += 1
            if self.message_ids[key] != content:
                self.conflicting += 1
            return
        if key[1]:
            self.message_ids[key] = content
        request.messages.append(body)
        if body.get("end_of_dialog"):
            request.ends_taken += 1
            request.ended = request.ended or time.monotonic()
        asked = CHALLENGE.search(content)
        step = STEP.search(content)
        if asked and step and asked.group(1) not in request.answered_override:
            request.answered_override.add(asked.group(1))
            await self.answer_override(request_id, request, step.group(1), step.group(2), asked.group(1))

    async def answer_override(
        self, request_id: str, request: Request, workflow_id: str, step_id: str, challenge: str
    ) -> None:
        """Sign `accept` over the challenge the stream named and send it as a Pulsar follow-up."""
        decision = signed_decision(
            Override(step_id=step_id, decision="accept", by=self.identity, reason="soak"),
            self.private,
            workflow_id,
            challenge,
        )
        payload = json.dumps(
            {
                "question": decision.model_dump_json(exclude_defaults=True),
                "state": "override",
                "correlation_id": workflow_id,
            }
        ).encode()
        follow_up_id = f"{request_id}-override-{len(request.follow_ups) + 1}"
        self.follow_up_of[follow_up_id] = (request_id, challenge)
        request.follow_ups[challenge] = FollowUp(follow_up_id, payload, time.monotonic())
        await self.send(follow_up_id, payload)

    async def recover_silent(self) -> None:
        """What `ask` does: a run silent for LOOK_UP_AFTER_S is looked up in Temporal, and the messages that ended
        its dialog (or the one asking for a decision) that the topic dropped are taken from there."""
        if self.runs is None:
            return
        now = time.monotonic()
        for request_id, request in list(self.requests.items()):
            if request.ended is not None or request.kind == "malformed":
                continue
            if now - request.last_heard < LOOK_UP_AFTER_S or now - request.looked_up < LOOK_UP_AFTER_S:
                continue
            request.looked_up = now
            outcome = await self.runs.outcome(workflow_id_for(request_id))
            if outcome is None:
                continue
            for message in outcome.handover:
                before = len(request.messages)
                await self.take(request_id, json.loads(encode_response(message)), message.delivery_id)
                self.recovered += len(request.messages) - before

    async def resend_silent(self) -> None:
        """At-least-once from the caller's side: a request (or follow-up) not heard from is sent again."""
        now = time.monotonic()
        for request_id, request in list(self.requests.items()):
            if request.ended is None and now - request.last_heard > RESEND_AFTER_S:
                request.resent += 1
                request.last_heard = now
                await self.send(request_id, request.payload)
            for follow_up in request.follow_ups.values():
                if request.ended is None and follow_up.reply is None and now - follow_up.sent > RESEND_AFTER_S / 3:
                    follow_up.resent += 1
                    follow_up.sent = now
                    await self.send(follow_up.follow_up_id, follow_up.payload)


# -- the stack and the chaos ----------------------------------------------------------------------------------


@dataclass
class Chaos:
    data: Path
    parts: list[str]
    kill_min_s: float
    kill_max_s: float
    rng: random.Random
    kills: list[tuple[float, str]] = field(default_factory=list)

    async def run(self, started: float) -> None:
        while True:
            await asyncio.sleep(self.rng.uniform(self.kill_min_s, self.kill_max_s))
            # `up` gives a part up after 5 restarts within 300 s (embedded/supervisor.py): stay under that.
            now = time.monotonic() - started
            allowed = [p for p in self.parts if sum(1 for t, killed in self.kills if killed == p and now - t < 300) < 4]
            if not allowed:
                continue
            part = self.rng.choice(allowed)
            record = StackState(self.data).read()
            running = record.part(part) if record else None
            if running is None or not running.process.alive():
                continue
            os.kill(running.process.pid, signal.SIGKILL)
            self.kills.append((round(time.monotonic() - started, 1), part))
            print(f"[{time.monotonic() - started:7.1f}s] killed {part} (pid {running.process.pid})", flush=True)


@dataclass
class Memory:
    """RSS of each worker and bridge process life, sampled every 5 s."""

    data: Path
    lives: dict[tuple[str, int], list[tuple[float, float]]] = field(default_factory=dict)

    async def run(self, started: float) -> None:
        while True:
            record = StackState(self.data).read()
            for key in ("worker", "bridge"):
                part = record.part(key) if record else None
                if part is None or not part.process.alive():
                    continue
                rss = rss_mb(part.process.pid)
                if rss is not None:
                    self.lives.setdefault((key, part.process.pid), []).append((time.monotonic() - started, rss))
            await asyncio.sleep(5)

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key in ("worker", "bridge"):
            lives = [samples for (k, _), samples in self.lives.items() if k == key]
            longest = max(lives, key=len, default=[])
            warm = [rss for t, rss in longest if t - longest[0][0] >= 60] or [rss for _, rss in longest]
            out[key] = {
                "lives": len(lives),
                "longest_life_s": round(longest[-1][0] - longest[0][0]) if longest else 0,
                "rss_after_1_min_mb": round(warm[0]) if warm else None,
                "rss_end_mb": round(longest[-1][1]) if longest else None,
                "rss_max_mb": round(max((rss for s in lives for _, rss in s), default=0)),
                # the longest life, one sample a minute: flat, or growing?
                "longest_life_rss_by_minute_mb": [round(rss) for t, rss in longest if int(t - longest[0][0]) % 60 < 5],
            }
        return out


def rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


async def sever(
    proxy: SeverableProxy,
    least_s: float,
    most_s: float,
    rng: random.Random,
    started: float,
    cuts: list[tuple[float, float]],
) -> None:
    """Cut the caller off from the broker every least_s..most_s seconds, for 1-15 s each time."""
    while True:
        await asyncio.sleep(rng.uniform(least_s, most_s))
        refused = round(rng.uniform(1.0, 15.0), 1)
        proxy.sever(refused)
        cuts.append((round(time.monotonic() - started, 1), refused))
        print(f"[{time.monotonic() - started:7.1f}s] caller cut off for {refused} s", flush=True)


async def start_stack(
    data: Path, llm_url: str, env: dict[str, str]
) -> tuple[asyncio.subprocess.Process, dict[str, int], asyncio.Task[None]]:
    ports = {name: free_port() for name in ("temporal", "ui", "pulsar", "falkordb", "metrics")}
    up = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "cli",
        "up",
        "--llm-base-url",
        llm_url,
        "--llm-model",
        "scripted",
        "--http-port",
        "0",
        "--data-dir",
        str(data),
        "--temporal-port",
        str(ports["temporal"]),
        "--ui-port",
        str(ports["ui"]),
        "--pulsar-port",
        str(ports["pulsar"]),
        "--falkordb-port",
        str(ports["falkordb"]),
        "--metrics-port",
        str(ports["metrics"]),
        env={**os.environ, **env},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        cwd=ROOT,
    )
    assert up.stdout is not None
    while True:
        line = (await asyncio.wait_for(up.stdout.readline(), 300)).decode()
        if not line:
            raise RuntimeError(f"tg-confidence up exited with {await up.wait()}")
        print("up:", line.rstrip(), flush=True)
        if line.startswith("serving"):
            break
    return up, ports, asyncio.create_task(echo(up.stdout))


async def echo(stream: asyncio.StreamReader) -> None:
    """`up`'s later lines (the supervisor's restarts) go to this bench's log."""
    while line := await stream.readline():
        print("up:", line.decode().rstrip(), flush=True)


# -- the checks ---------------------------------------------------------------------------------------------


async def check(caller: Caller, temporal_address: str, falkordb_url: str, graph: str) -> dict[str, Any]:
    client = await Client.connect(temporal_address)
    unanswered = []
    for request_id, request in caller.requests.items():
        if request.ended is None:
            try:
                status = (await client.get_workflow_handle(workflow_id_for(request_id)).describe()).status
                state = status.name if status else "unknown"
            except RPCError as exc:
                state = f"no run ({exc.message})"
            unanswered.append({"id": request_id, "kind": request.kind, "run": state, "messages": len(request.messages)})
    open_runs = [w.id async for w in client.list_workflows("ExecutionStatus = 'Running'")]
    db = FalkorDB.from_url(falkordb_url)
    g = db.select_graph(graph)
    twice = (
        await g.ro_query(
            "MATCH (r:ActionRecord) WITH r.run_id AS run, r.entity_id AS entity, r.action AS "
            "action, count(r) AS n WHERE n > 1 RETURN run, entity, action, n"
        )
    ).result_set
    records = (
        await g.ro_query("MATCH (r:ActionRecord) WHERE r.run_id STARTS WITH 'agent-soak-' RETURN count(r)")
    ).result_set[0][0]
    await db.aclose()
    reported = answered = 0
    for request in caller.requests.values():
        for m in request.messages:
            event = parse_action_event(str(m.get("content") or ""))
            if event and event["type"] == "action_complete":
                reported += int(event["results"]["succeeded"])
            if m.get("end_of_dialog") and m.get("message_type") == "answer":
                answered += sum(int(n) for n in SUCCEEDED.findall(str(m.get("content") or "")))
    follow_ups = [f for r in caller.requests.values() for f in r.follow_ups.values()]
    latency = {
        kind: sorted(r.ended - r.sent for r in caller.requests.values() if r.kind == kind and r.ended) for kind in KINDS
    }
    return {
        "requests": len(caller.requests),
        "answers_lost": sum(1 for u in unanswered if u["run"] == "COMPLETED"),
        "dialogs_ended_twice": sum(1 for r in caller.requests.values() if r.ends_taken > 1),
        "messages_recovered_from_temporal": caller.recovered,
        "by_kind": dict(Counter(r.kind for r in caller.requests.values())),
        "outcomes": dict(Counter(f"{r.kind}:{r.outcome}" for r in caller.requests.values())),
        "unanswered": unanswered,
        "open_runs": open_runs,
        "actions_applied_twice": [list(row) for row in twice],
        "action_records": records,
        # Progress events travel like any message: one the topic dropped while the caller was cut off is not
        # recovered (only the closing messages are), so the answers' own counts are the ones that must match.
        "action_successes_reported": reported,
        "action_successes_answered": answered,
        "requests_resent": sum(r.resent for r in caller.requests.values()),
        "send_failures": caller.send_failures,
        "follow_ups": len(follow_ups),
        "follow_up_replies": dict(Counter((f.reply or {}).get("message_type", "none") for f in follow_ups)),
        "follow_ups_resent": sum(f.resent for f in follow_ups),
        "messages_delivered_again": caller.repeated,
        "messages_conflicting": caller.conflicting,
        "malformed_answered_with_error": sum(
            1 for r in caller.requests.values() if r.kind == "malformed" and r.outcome == "error"
        ),
        "example_messages": {
            kind: [
                f"{m.get('message_type')}: {str(m.get('content') or m.get('error'))[:160]}"
                for m in next(r for r in caller.requests.values() if r.kind == kind).messages
            ]
            for kind in KINDS
            if any(r.kind == kind for r in caller.requests.values())
        },
        "latency_s": {
            kind: {"n": len(v), "p50": round(percentile(v, 0.5), 2), "p99": round(percentile(v, 0.99), 2)}
            for kind, v in latency.items()
            if v
        },
    }


async def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--minutes", type=float, default=30.0, help="how long traffic and kills go on")
    p.add_argument("--drain-minutes", type=float, default=15.0, help="how long to wait for the last answers")
    p.add_argument("--rate", type=float, default=0.7, help="new requests per second")
    p.add_argument(
        "--parts", nargs="+", default=["worker", "bridge", "temporal", "pulsar"], help="which parts may be killed"
    )
    p.add_argument("--kill-min", type=float, default=40.0, help="least seconds between kills")
    p.add_argument("--kill-max", type=float, default=100.0, help="most seconds between kills")
    p.add_argument(
        "--sever",
        action="store_true",
        help="listen on a non-persistent response topic through a proxy that keeps cutting the caller off",
    )
    p.add_argument("--sever-min", type=float, default=20.0, help="least seconds between cuts")
    p.add_argument("--sever-max", type=float, default=60.0, help="most seconds between cuts")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", type=Path, help="write the figures here as JSON")
    args = p.parse_args()
    rng = random.Random(args.seed)
    data = Path(tempfile.mkdtemp(prefix="tgca-soak-"))
    private_pem, public = new_key_pair()
    identity = {"name": "soak", "public_key": public, "roles": ["review", "approve"]}
    requester = {"name": REQUESTER, "public_key": new_key_pair()[1], "roles": ["act"]}
    response_topic = SEVERED_RESPONSE_TOPIC if args.sever else RESPONSE_TOPIC
    env = {
        "TGCA_REQUEST_TOPICS": json.dumps([REQUEST_TOPIC]),
        "TGCA_RESPONSE_TOPIC": response_topic,
        "TGCA_AGENT__OVERRIDE_KEYS": json.dumps([identity, requester]),
        "TGCA_AGENT__MAX_RETRIES": "1",
        "TGCA_AGENT__OVERRIDE_TIMEOUT_S": "900",
        "TGCA_AGENT__ACTION_APPROVAL_ABOVE": "5",
        "TGCA_ACTION_LATENCY_MS": "50",
        "TGCA_LOG_LEVEL": "WARNING",
    }
    # Orders that submit or withdraw can move back and forth (about half of each batch succeeds).
    orders = [
        o["po_number"] for o in demo_graph.generate().nodes["PurchaseOrder"] if o["status"] in ("draft", "submitted")
    ]
    batches: dict[str, tuple[str, list[str]]] = {}
    with ScriptedLLM(Model(batches)) as llm:
        up, ports, echoing = await start_stack(data, llm.base_url, env)
        broker_url = f"pulsar://127.0.0.1:{ports['pulsar']}"
        proxy = await SeverableProxy(broker_url).start() if args.sever else None
        runs = RunLookup(address=f"127.0.0.1:{ports['temporal']}") if args.sever else None
        caller = Caller(
            proxy.url if proxy else broker_url, private_pem, "soak", batches, orders, rng, response_topic, runs
        )
        await caller.start()
        started = time.monotonic()
        chaos = Chaos(data, args.parts, args.kill_min, args.kill_max, rng)
        memory = Memory(data)
        background = [asyncio.create_task(chaos.run(started)), asyncio.create_task(memory.run(started))]
        cuts: list[tuple[float, float]] = []
        if proxy is not None:
            background.append(asyncio.create_task(sever(proxy, args.sever_min, args.sever_max, rng, started, cuts)))
        try:
            while time.monotonic() - started < args.minutes * 60:
                request_id, request = caller.new_request()
                await caller.send(request_id, request.payload)
                await caller.recover_silent()
                await caller.resend_silent()
                llm.requests.clear()  # the scripted server keeps every body; not needed here
                await asyncio.sleep(rng.expovariate(args.rate))
            background[0].cancel()  # no more kills: let everything finish
            if proxy is not None:
                background[-1].cancel()  # nor cuts
            print(f"traffic over after {len(caller.requests)} requests; draining", flush=True)
            deadline = time.monotonic() + args.drain_minutes * 60
            while time.monotonic() < deadline and any(r.ended is None for r in caller.requests.values()):
                await caller.recover_silent()
                await caller.resend_silent()
                await asyncio.sleep(2)
            figures = await check(
                caller, f"127.0.0.1:{ports['temporal']}", f"redis://127.0.0.1:{ports['falkordb']}", "procurement"
            )
        finally:
            for task in background:
                task.cancel()
            await caller.close()
            if proxy is not None:
                proxy.close()
            up.send_signal(signal.SIGINT)
            await asyncio.wait_for(up.wait(), 120)
            echoing.cancel()
    figures.update(
        {
            "minutes": args.minutes,
            "rate_per_s": args.rate,
            "seed": args.seed,
            "kills": dict(Counter(part for _, part in chaos.kills)),
            "kill_times": chaos.kills,
            "caller_cut_off": len(cuts),
            "cut_times_and_seconds": cuts,
            "memory": memory.summary(),
        }
    )
    text = json.dumps(figures, indent=2)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    asyncio.run(main())
