"""The Pulsar edge: how many runs' final messages a non-persistent response topic drops, side by side for
pulsar-lite's own settings and the embedded stack's (embedded/parts.BROKER_SETTINGS), with every core kept busy
as the local model keeps them.

Each round is what a run ends with: `--explains` explain messages of `--explain-kb` each, then a small final
message, back to back from one producer (batching off, each send awaited, as the worker publishes), to one
consumer in another process (the asyncio client, Exclusive, position latest, as `ask` subscribes). A round whose
final message never arrives is an answer lost at the edge; the broker told the producer it took every one.
Trials alternate the two settings, each on a fresh broker; the table gives each setting's median over trials.

With `--stall S` the consumer process is stopped (SIGSTOP) before the rounds are sent and let go S seconds later:
a caller whose process got no CPU for that long, as under a model that keeps every core busy. The broker pings
each connection every 30 s and closes one whose Pong is late by its liveness timeout; what it held for a closed
connection is gone, and so is what did not fit under its write buffer's high water mark meanwhile.

    .venv/bin/python -m bench.pulsar_edge                       # 5 trials of 200 rounds, cores busy
    .venv/bin/python -m bench.pulsar_edge --trials 3 --no-load  # the same on an idle machine
    .venv/bin/python -m bench.pulsar_edge --trials 3 --stall 45 --rounds 20
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import signal
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pulsar

from embedded.parts import BROKER_SETTINGS, pulsar_broker
from embedded.processes import free_port
from service.connections import pulsar_client

SETTINGS = {"pulsar-lite defaults": {}, "embedded stack": BROKER_SETTINGS}


def spin() -> None:
    """One core's worth of load (the model's llama.cpp threads keep every core busy)."""
    while True:
        pass


async def consume(url: str, topic: str, rounds: int, quiet_s: float) -> None:
    """The consumer process: subscribe, say so, then count finals until `quiet_s` pass with nothing new."""
    client = pulsar_client(url)
    consumer = await client.subscribe(
        topic,
        f"rr-{uuid.uuid4().hex}",
        consumer_type=pulsar.ConsumerType.Exclusive,
        initial_position=pulsar.InitialPosition.Latest,
    )
    print("subscribed", flush=True)
    finals: set[int] = set()
    explains = 0
    # One receive in flight, and silence counted in one-second waits: a process stopped and let go finds every
    # timer it had expired at once, and a receive given up on would drop the message handed to it later.
    receiving: asyncio.Future[pulsar.Message] | None = None
    silent_s = 0
    while len(finals) < rounds and silent_s < quiet_s:
        receiving = receiving or asyncio.ensure_future(consumer.receive())
        done, _ = await asyncio.wait({receiving}, timeout=1.0)
        if not done:
            silent_s += 1
            continue
        message, receiving, silent_s = receiving.result(), None, 0
        await consumer.acknowledge(message)
        kind, number = message.properties().get("kind", ""), message.properties().get("round", "0")
        if kind == "final":
            finals.add(int(number))
        else:
            explains += 1
    print(json.dumps({"finals": len(finals), "explains": explains}), flush=True)
    if receiving is not None:
        receiving.cancel()
    await client.close()


async def trial(
    settings: dict[str, int], rounds: int, explains: int, explain_kb: int, data: Path, stall_s: float = 0.0
) -> dict[str, int]:
    port = free_port()
    broker = pulsar_broker(data / uuid.uuid4().hex, port, settings=settings)
    broker.start()
    try:
        await broker.wait_ready(30)
        url, topic = f"pulsar://127.0.0.1:{port}", f"non-persistent://tg/response/edge-{uuid.uuid4().hex[:8]}"
        reader = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bench.pulsar_edge",
            "--consume",
            url,
            topic,
            str(rounds),
            stdout=asyncio.subprocess.PIPE,
        )
        assert reader.stdout is not None
        assert (await asyncio.wait_for(reader.stdout.readline(), 30)).strip() == b"subscribed"
        await asyncio.sleep(0.5)  # the consumer's first permits reach the broker
        client = pulsar_client(url)
        producer = await client.create_producer(topic, batching_enabled=False, send_timeout_millis=10000)
        payload = b"x" * (explain_kb * 1024)
        stalled_at = time.monotonic()
        if stall_s:
            os.kill(reader.pid, signal.SIGSTOP)
        for n in range(rounds):
            for _ in range(explains):
                await producer.send(payload, properties={"kind": "explain", "round": str(n)})
            await producer.send(b"final", properties={"kind": "final", "round": str(n)})
        if stall_s:
            await asyncio.sleep(max(0.0, stall_s - (time.monotonic() - stalled_at)))
            os.kill(reader.pid, signal.SIGCONT)
        await client.close()
        counted = json.loads((await asyncio.wait_for(reader.stdout.readline(), 120)).decode())
        await reader.wait()
        return {"lost": rounds - counted["finals"], "explains_lost": rounds * explains - counted["explains"]}
    finally:
        broker.stop()


async def main(args: argparse.Namespace) -> None:
    load = (
        []
        if args.no_load
        else [multiprocessing.Process(target=spin, daemon=True) for _ in range(multiprocessing.cpu_count())]
    )
    for process in load:
        process.start()
    results: dict[str, list[dict[str, int]]] = {name: [] for name in SETTINGS}
    started = time.time()
    try:
        with tempfile.TemporaryDirectory() as data:
            for t in range(args.trials):
                names = list(SETTINGS) if t % 2 == 0 else list(reversed(SETTINGS))  # alternate who goes first
                for name in names:
                    outcome = await trial(
                        SETTINGS[name], args.rounds, args.explains, args.explain_kb, Path(data), args.stall
                    )
                    results[name].append(outcome)
                    print(
                        f"trial {t + 1} {name}: {outcome['lost']} of {args.rounds} final messages lost, "
                        f"{outcome['explains_lost']} explain messages lost",
                        flush=True,
                    )
    finally:
        for process in load:
            process.kill()
    print(
        f"\n{args.trials} trials of {args.rounds} rounds ({args.explains} x {args.explain_kb} KB explain, then "
        f"the final message); {'idle machine' if args.no_load else f'{len(load)} cores busy'}"
        f"{f'; consumer stopped for {args.stall:g} s' if args.stall else ''}; "
        f"{time.time() - started:.0f} s\n"
    )
    print("| broker settings | final messages lost, median (per trial) | explain messages lost, median |")
    print("|---|---|---|")
    for name, outcomes in results.items():
        lost = [o["lost"] for o in outcomes]
        print(
            f"| {name} | {statistics.median(lost):g} of {args.rounds} ({', '.join(map(str, lost))}) | "
            f"{statistics.median(o['explains_lost'] for o in outcomes):g} |"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--explains", type=int, default=3, help="explain messages before each final one")
    parser.add_argument("--explain-kb", type=int, default=50, help="size of each explain message")
    parser.add_argument("--no-load", action="store_true", help="leave the cores idle")
    parser.add_argument("--stall", type=float, default=0.0, help="stop the consumer this long while rounds are sent")
    parser.add_argument("--consume", nargs=3, metavar=("URL", "TOPIC", "ROUNDS"), help=argparse.SUPPRESS)
    parsed = parser.parse_args()
    if parsed.consume:
        asyncio.run(consume(parsed.consume[0], parsed.consume[1], int(parsed.consume[2]), quiet_s=10))
    else:
        asyncio.run(main(parsed))
