"""LLM decisions benchmark (`scripts/bench llm`): writes docs/benchmarks/llm.md and prints it.

1. Main-thread cost of `DecisionHub.tick_all` for 100 and 1,000 NPCs against a bare dict update per
   NPC in the same frames (goal: at most 3x per NPC), with a real transport to the real local model.
2. The main thread's frame time p50/p99/max with 0 and 4 requests in flight (GIL stalls show there).
3. Decisions per second and latency percentiles against the model at concurrency 1, 2 and 4 (the
   endpoint's default mode: choice on the local llama-server).
4. Request shapes against the model, in the same run: the request of before (`today's`) beside the
   stable-prefix shapes in each mode (schema, json, choice): p50/p95 latency, tier shares, cut answers.
5. A fixed scenario set (situation -> expected intent) in 3 intent orders: each shape's agreement
   beside the "always the first listed intent" null model.
6. Whether llama-server frees its slot when a request is cancelled (its `/slots`), streaming or not.
7. The main thread's frame time while the loop thread reads a hostile answer (10 MB, a gzip bomb)
   from the fault server, against a normal answer in the same run, with the response caps and
   without them (section `stall`).
8. The server's decision `step()` with one live decision after 20,000 spawn/despawn cycles of
   decisions with their own persona, against a fresh server in the same run (section `churn`).
9. Goodput under overload: answers per second with 1, 100 and 1,000 NPCs asking whenever they are not
   pending, against one NPC asking back to back in the same run, and 1,000 NPCs on 2 and 3 local
   llama-servers (section `goodput`; it starts its own servers, 2 slots each).

`--only shapes,scenarios` runs some sections (names: tick, frames, throughput, shapes, scenarios, slots,
stall, churn, goodput); the stored file keeps the sections it did not run.

The local llama-server runs with one thread (`-t 1`) and 4 slots; `NPC_MIND_LLM_URL` adds endpoints
to the scenario comparison and replaces the local model elsewhere.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import numpy as np

from npc_mind.decision import DecisionConfig, DecisionHub, DecisionMade, Rule, RuleChooser
from npc_mind.llm import (
    DecisionSchema,
    Endpoint,
    LLMClient,
    LLMError,
    LLMSettings,
    LLMTransport,
    LocalLlamaServer,
    TransportConfig,
    build_messages,
    endpoints_from_env,
)
from npc_mind.llm.prompt import Example, MemoryFact, PromptConfig, stable_messages
from npc_mind.llm.schema import Answer
from npc_mind.llm.shape import RequestShape
from npc_mind.llm.transport import Request
from tools.bench_quotes import publish

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "benchmarks" / "llm.md"
INTENTS = ("attack", "take_cover", "flee", "patrol", "call_backup", "investigate")
SCHEMA = DecisionSchema(INTENTS)
# Situation -> the intent a sensible guard picks. Small on purpose: a yardstick, not an eval suite.
SCENARIOS = [
    ({"situation": "an enemy charges at me, my friends are beside me", "enemy_visible": 1.0,
      "enemy_distance_m": 3.0, "health": 0.9, "allies_near": 2.0}, "attack"),
    ({"situation": "I am badly wounded and alone, an enemy is far away", "enemy_visible": 1.0,
      "enemy_distance_m": 20.0, "health": 0.15, "allies_near": 0.0}, "flee"),
    ({"situation": "I heard a noise behind the wall", "enemy_visible": 0.0, "noise_heard": 1.0,
      "health": 1.0, "allies_near": 1.0}, "investigate"),
    ({"situation": "all is quiet", "enemy_visible": 0.0, "noise_heard": 0.0, "health": 1.0,
      "allies_near": 1.0}, "patrol"),
    ({"situation": "five enemies are coming and I am alone", "enemy_visible": 1.0, "enemies_count": 5.0,
      "health": 0.7, "allies_near": 0.0}, "call_backup"),
    ({"situation": "someone is shooting at me, a wall is close", "incoming_fire": 1.0, "enemy_visible": 1.0,
      "cover_near": 1.0, "health": 0.6}, "take_cover"),
    ({"situation": "a grenade landed next to me", "grenade_near": 1.0, "health": 0.8, "cover_near": 0.0},
     "flee"),
    ({"situation": "an enemy aims at me from the street, a cart is next to me", "enemy_visible": 1.0,
      "enemy_distance_m": 8.0, "health": 0.5, "cover_near": 1.0}, "take_cover"),
]  # fmt: skip
# Few-shot examples for the scenario comparison: other situations than the scenarios'.
EXAMPLES = (
    Example("Situation: a bandit swings a sword at me.", "attack", 0.9),
    Example("Situation: the tower is on fire and I am hurt.", "flee", 1.0),
    Example("Situation: footsteps in the dark corridor.", "investigate", 0.5),
    Example("Situation: a calm night on the wall.", "patrol", 0.1),
)
# What the prompt showed of a memory before (11-digit engine ids), and shows now (type, strength).
MEMORIES = (
    MemoryFact("hostile", 94_371_225_118, 0.81, 0.9),
    MemoryFact("observation", 94_371_230_007, 0.4, 0.3),
)


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q)) if values else float("nan")


def rules() -> RuleChooser:
    return RuleChooser([Rule("take_cover", "threat", 0.5), Rule("flee", "health", 0.2, below=True)], "patrol")


# -- 1. main-thread tick cost ------------------------------------------------------------------
# The frames measured: quiet, every NPC has decided and waits (the common frame); busy, threats flip
# on a few NPCs every frame (0.5%, at least one) and every NPC re-plans every 2 s, either in lockstep
# (all NPCs spawned in one frame re-plan in the same frame: the worst case, once every 2 s) or
# staggered (`replan_jitter=0.5`: intervals of 1-2 s, so re-plans spread over the frames).
MODES = {
    "quiet": DecisionConfig(replan_interval=3600.0, watched=("threat",), min_gap=0.5),
    "busy, lockstep re-plans": DecisionConfig(replan_interval=2.0, watched=("threat",), min_gap=0.5),
    "busy, staggered re-plans": DecisionConfig(
        replan_interval=2.0, watched=("threat",), min_gap=0.5, replan_jitter=0.5
    ),
}


def tick_round(endpoint: Endpoint, npcs: int, mode: str, frames: int) -> dict[str, list[float]]:
    """One round: a fresh hub on a real transport, settled (80 frames), then `frames` frames, each timing the
    baseline pass and `tick_all` back to back, in alternating order (ABAB...: each side goes first
    in half the frames, so neither always finds the boards in cache), with the same clock."""
    config = MODES[mode]
    busy = mode != "quiet"
    boards = {n: {"threat": 0.2, "health": 1.0, "x": 0.0, "y": 0.0} for n in range(npcs)}
    rng = np.random.default_rng(npcs)
    tick_ns: list[float] = []
    dict_ns: list[float] = []
    tick_first: list[bool] = []
    asked: list[float] = []
    with (
        LLMTransport([endpoint], config=TransportConfig(max_queue=64)) as transport,
        DecisionHub(transport, SCHEMA, config=config) as hub,
    ):
        for n in range(npcs):
            hub.add(n, rules())
        hub.tick_all(time.monotonic(), boards)  # everyone asks once: the spawn frame is not measured
        while not busy and any(d.pending for d in hub.decisions.values()):
            time.sleep(0.01)
            hub.tick_all(time.monotonic(), boards)
        # Settle past the spawn frame's aftermath: the threats that flipped during everyone's first
        # min_gap all ask in one frame when it ends (0.5 s); that burst is the spawn's, not a re-plan.
        for frame in range(-80, frames):
            if busy:
                for n in rng.integers(0, npcs, size=max(1, npcs // 200)).tolist():
                    boards[n]["threat"] = 0.9 if boards[n]["threat"] < 0.5 else 0.2
            before = hub.stats.dispatched
            if frame % 2:
                started = time.perf_counter_ns()
                for board in boards.values():  # the baseline: one store into each NPC's blackboard
                    board["x"] = frame
                middle = time.perf_counter_ns()
                hub.tick_all(time.monotonic(), boards)
                ended = time.perf_counter_ns()
                base, tick = middle - started, ended - middle
            else:
                started = time.perf_counter_ns()
                hub.tick_all(time.monotonic(), boards)
                middle = time.perf_counter_ns()
                for board in boards.values():
                    board["x"] = frame
                ended = time.perf_counter_ns()
                tick, base = middle - started, ended - middle
            if frame >= 0:
                dict_ns.append(base / npcs)
                tick_ns.append(tick / npcs)
                tick_first.append(frame % 2 == 0)
                asked.append(hub.stats.dispatched - before)
            hub.drain_events()
            time.sleep(0.008)  # the rest of a frame, when the loop thread gets the GIL
    return {"tick": tick_ns, "dict": dict_ns, "asked": asked, "tick_first": tick_first}


def round_ratio(run: dict[str, list]) -> float:
    """Same position, same method: median tick_all / median store over the frames where both went
    first, likewise where both went second; the geometric mean of the two."""
    ratios = []
    for first in (True, False):
        tick = [t for t, f in zip(run["tick"], run["tick_first"], strict=True) if f == first]
        store = [d for d, f in zip(run["dict"], run["tick_first"], strict=True) if f == first]
        ratios.append(statistics.median(tick) / statistics.median(store))
    return float(np.sqrt(ratios[0] * ratios[1]))


def store_first_ratio(run: dict[str, list]) -> float:
    """The previous method, for comparison: `tick_all` always right after the store (warm boards)."""
    tick = [t for t, f in zip(run["tick"], run["tick_first"], strict=True) if not f]
    store = [d for d, f in zip(run["dict"], run["tick_first"], strict=True) if not f]
    return statistics.median(tick) / statistics.median(store)


def tick_costs(endpoint: Endpoint, rounds: int = 3, frames: int = 300) -> list[dict[str, object]]:
    """Every (NPCs, mode) pair, `rounds` times, the rounds interleaved (round 1 of every pair, then
    round 2 ...) so that a slow spell of the machine hits all of them alike. Per round the ratio is
    `round_ratio`; reported: the median round and the range."""
    pairs = [(npcs, mode) for npcs in (100, 1000) for mode in MODES]
    results: dict[tuple[int, str], list[dict[str, list[float]]]] = {pair: [] for pair in pairs}
    for _ in range(rounds):
        for npcs, mode in pairs:
            results[npcs, mode].append(tick_round(endpoint, npcs, mode, frames))
    rows = []
    for (npcs, mode), runs in results.items():
        ratios = [round_ratio(r) for r in runs]
        middle = runs[ratios.index(statistics.median_high(ratios))]
        asked = [a for r in runs for a in r["asked"]]
        rows.append({
            "npcs": npcs,
            "mode": mode,
            "frames": sum(len(r["tick"]) for r in runs),
            "tick_ns": statistics.median(middle["tick"]),
            "tick_p99_ns": percentile([t for r in runs for t in r["tick"]], 99),
            "dict_ns": statistics.median(middle["dict"]),
            "ratio": statistics.median_high(ratios),
            "ratios": ratios,
            "store_first": statistics.median(store_first_ratio(r) for r in runs),
            "asked_p50": statistics.median(asked),
            "asked_max": max(asked),
        })  # fmt: skip
    return rows


def dispatch_cost(endpoint: Endpoint, npcs: int = 200, rounds: int = 5) -> dict[str, float]:
    """Main-thread cost of one request: snapshot, prompt, submit to the loop thread (all accepted)."""
    boards = {n: {"threat": 0.2, "health": 1.0, "x": 0.0, "y": 0.0} for n in range(npcs)}
    per_request_us = []
    for _ in range(rounds):
        with (
            LLMTransport([endpoint], config=TransportConfig(max_queue=npcs)) as transport,
            DecisionHub(transport, SCHEMA) as hub,
        ):
            for n in range(npcs):
                hub.add(n, rules())
            started = time.perf_counter_ns()
            hub.tick_all(time.monotonic(), boards)
            per_request_us.append((time.perf_counter_ns() - started) / npcs / 1000)
            assert hub.metrics()["dispatched"] == npcs and not hub.metrics()["fallback_reasons"]
    return {"p50": statistics.median(per_request_us), "max": max(per_request_us)}


# -- 2. frame time with requests in flight -----------------------------------------------------
def game_work() -> None:
    """About a millisecond of pure-Python game logic (the main thread's own work in a frame)."""
    total = 0.0
    for i in range(12_000):
        total += (i * 0.5) % 7.0
    if total < 0:
        raise AssertionError


def frame_times(endpoint: Endpoint, in_flight: int, seconds: float = 8.0) -> dict[str, float]:
    boards = {n: {"threat": 0.2, "health": 1.0} for n in range(100)}
    calm = DecisionConfig(replan_interval=3600.0, min_gap=0.0)
    busy = DecisionConfig(soft_deadline=0.3, hard_deadline=30.0, replan_interval=0.01, min_gap=0.0)
    frames: list[float] = []
    answered = 0
    with LLMTransport([endpoint]) as transport:
        idle_hub = DecisionHub(transport, SCHEMA, config=calm)
        asking_hub = DecisionHub(transport, SCHEMA, config=busy)
        for n in range(100 - in_flight):
            idle_hub.add(n, rules())
        for n in range(100 - in_flight, 100):
            asking_hub.add(n, rules())
        stop = time.monotonic() + seconds
        while time.monotonic() < stop:
            started = time.perf_counter()
            now = time.monotonic()
            idle_hub.tick_all(now, boards)
            asking_hub.tick_all(now, boards)
            game_work()
            frames.append(time.perf_counter() - started)
            answered += sum(isinstance(e, DecisionMade) for e in asking_hub.drain_events())
            idle_hub.drain_events()
        idle_hub.close()
        asking_hub.close()
    ms = [f * 1000 for f in frames]
    return {
        "in_flight": in_flight,
        "frames": len(ms),
        "p50": percentile(ms, 50),
        "p99": percentile(ms, 99),
        "max": max(ms),
        "answers": answered,
    }


# -- 3. throughput and latency -----------------------------------------------------------------
async def _throughput(endpoint: Endpoint, concurrency: int, per_worker: int) -> dict[str, float]:
    latencies: list[float] = []
    failures = 0
    boards = [situation for situation, _ in SCENARIOS]

    async def worker(index: int, client: LLMClient) -> None:
        nonlocal failures
        for i in range(per_worker):
            messages = build_messages(SCHEMA, boards[(index + i) % len(boards)])
            started = time.monotonic()
            try:
                await client.decide(messages, SCHEMA)
                latencies.append(time.monotonic() - started)
            except LLMError:
                failures += 1

    async with LLMClient([endpoint]) as client:
        await client.decide(build_messages(SCHEMA, boards[0]), SCHEMA)  # warm the prompt cache once
        started = time.monotonic()
        await asyncio.gather(*(worker(i, client) for i in range(concurrency)))
        wall = time.monotonic() - started
    ms = [s * 1000 for s in latencies]
    return {
        "concurrency": concurrency,
        "requests": concurrency * per_worker,
        "per_s": len(latencies) / wall,
        "p50": percentile(ms, 50),
        "p95": percentile(ms, 95),
        "failures": failures,
    }


# -- 4. request shapes ------------------------------------------------------------------------
LEGACY_REQUEST_KEY = "_npc_mind_request"  # what the server wrote into every board, sorted first


def legacy_messages(schema: DecisionSchema, board: dict, memories: tuple = MEMORIES) -> list[dict[str, str]]:
    """The prompt as shipped before the stable-prefix shapes, byte for byte, for the same-run comparison:
    the request counter first, two decimals, memories with their raw entity ids, an example answer."""
    example = f'{{"intent": "{schema.intents[0]}", "urgency": 0.5}}'
    system = (
        "You are the tactical mind of a guard in a game world. Choose what to do next. "
        f"Reply with one JSON object: intent (one of {', '.join(schema.intents)}), "
        "urgency (a number from 0.0 to 1.0) and optionally target_id (an entity id). "
        f"Example: {example}"
    )

    def number(value: object) -> str:
        return f"{value:.2f}" if isinstance(value, float) else str(value)[:40]

    facts = [f"- {key}: {number(value)}" for key, value in sorted(board.items())]
    lines = ["Situation:", *facts[:16], "You remember:"]
    lines += [
        f"- {m.memory_type} about entity {m.entity}: recall {m.retrievability:.2f}, salience {m.salience:.2f}"
        for m in memories
    ]
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n".join(lines)}]


@dataclasses.dataclass
class Shape:
    """One request shape of the comparison: a mode on the endpoint, the prompt it is sent with."""

    name: str
    mode: str  # schema / json / choice, or "legacy" (today's request)
    prompt: PromptConfig | None = None

    def messages(self, schema: DecisionSchema, board: dict, counter: int) -> list[dict[str, str]]:
        if self.mode == "legacy":
            return legacy_messages(schema, {**board, LEGACY_REQUEST_KEY: counter})
        return build_messages(schema, board, MEMORIES, self.prompt)


SHAPES = [
    Shape("today's: counter + ids in the prompt, response_format, max_tokens 48", "legacy"),
    Shape("schema: stable prefix + short situation, response_format", "schema", PromptConfig()),
    Shape("json: stable prefix, prefilled answer, no-whitespace grammar", "json", PromptConfig()),
    Shape("choice: stable prefix, one token over the intents' first tokens", "choice", PromptConfig()),
]


async def _one(
    client: LLMClient, endpoint: Endpoint, shape: RequestShape, messages: list, *,
    slot: int | None = None, legacy: bool = False,
) -> dict:  # fmt: skip
    """One non-streamed request (to read its finish_reason): latency, answer or failure. slot: the
    server slot it must use (llama-server's `id_slot`), so each shape meets only its own cache."""
    body = client._body(messages, shape.schema, shape) | {"stream": False}
    if slot is not None:
        body["id_slot"] = slot
    if legacy:  # the schema as it was: an optional target_id the prompt invited
        properties = body["response_format"]["json_schema"]["schema"]["properties"]
        properties["target_id"] = {"type": "integer", "minimum": 0}
    started = time.monotonic()
    try:
        response = await client._http.post(endpoint.chat_url, json=body)  # type: ignore[union-attr]
        choice = response.json()["choices"][0]
        answer: Answer | None = shape.parse(choice["message"]["content"])
        failure = ""
    except (httpx.HTTPError, KeyError, ValueError, LLMError) as error:
        choice, answer, failure = {}, None, error.__class__.__name__
    return {
        "latency": time.monotonic() - started,
        "answer": answer,
        "cut": choice.get("finish_reason") == "length",
        "failure": failure,
    }


async def _shape_client(
    endpoint: Endpoint, shape: Shape, schema: DecisionSchema, slot: int | None = None
) -> tuple:
    """A client for `shape` and its request shape, with the shape's prefix cached: in its own slot
    (`slot`) by one untimed request, else by `prepare` (the warm-up a hub runs at start)."""
    mode = "schema" if shape.mode == "legacy" else shape.mode
    declared = Endpoint(endpoint.base_url, endpoint.max_in_flight, kind=endpoint.kind, mode=mode)
    client = LLMClient([declared], LLMSettings(max_tokens=48, read_timeout=60.0))
    await client.__aenter__()
    request_shape = await client.shape(declared, schema)
    if slot is not None or shape.mode == "legacy":
        messages = shape.messages(schema, SCENARIOS[-1][0], 0)
        await _one(client, declared, request_shape, messages, slot=slot, legacy=shape.mode == "legacy")
    else:
        await client.prepare(schema, stable_messages(schema, shape.prompt))
    return client, declared, request_shape


async def _shapes(endpoint: Endpoint, per_shape: int) -> list[dict[str, object]]:
    """Every shape `per_shape` times over the scenarios, interleaved (one request of each shape in
    turn), so a slow spell of the machine hits all shapes alike; each shape in its own server slot,
    where the previous request was another situation (as for one hub's NPCs in a game)."""
    slots = endpoint.kind == "llama" or endpoint.mode == "auto"
    clients = [
        await _shape_client(endpoint, shape, SCHEMA, index if slots else None)
        for index, shape in enumerate(SHAPES)
    ]
    results: list[list[dict]] = [[] for _ in SHAPES]
    try:
        for i in range(per_shape):
            board = SCENARIOS[i % len(SCENARIOS)][0]
            for index, shape in enumerate(SHAPES):
                client, declared, request_shape = clients[index]
                messages = shape.messages(SCHEMA, board, i + 1)
                slot = index if slots else None
                legacy = shape.mode == "legacy"
                result = await _one(client, declared, request_shape, messages, slot=slot, legacy=legacy)
                results[index].append(result)
    finally:
        for client, _, _ in clients:
            await client.__aexit__(None, None, None)
    tiers = DecisionConfig()
    rows = []
    for shape, (_, _, request_shape), runs in zip(SHAPES, clients, results, strict=True):
        ms = [r["latency"] * 1000 for r in runs]
        valid = [r for r in runs if r["answer"] is not None]
        tier = [tiers.classify(r["latency"]) if r["answer"] is not None else 3 for r in runs]
        rows.append({
            "name": shape.name, "mode": request_shape.mode, "requests": len(runs),
            "p50": percentile(ms, 50), "p95": percentile(ms, 95),
            "tier1": tier.count(1), "tier2": tier.count(2), "tier3": tier.count(3),
            "valid": len(valid), "cut": sum(r["cut"] for r in runs),
        })  # fmt: skip
    return rows


# -- 5. scenario agreement ---------------------------------------------------------------------
def _orders() -> list[tuple[str, ...]]:
    """The intents as listed, reversed, and rotated by half: a model that takes the first listed
    intent scores the same as the null model in every order."""
    half = len(INTENTS) // 2
    return [INTENTS, INTENTS[::-1], INTENTS[half:] + INTENTS[:half]]


SCENARIO_SHAPES = [
    Shape("today's", "legacy"),
    Shape("schema", "schema", PromptConfig()),
    Shape("json", "json", PromptConfig()),
    Shape("choice", "choice", PromptConfig()),
    Shape("json + 4 few-shot examples", "json", PromptConfig(examples=EXAMPLES)),
    Shape("choice + 4 few-shot examples", "choice", PromptConfig(examples=EXAMPLES)),
]


async def _agreement(endpoint: Endpoint, shape: Shape) -> dict[str, object]:
    agreed = valid = first = 0
    picks: list[str] = []
    for order in _orders():
        schema = DecisionSchema(order)
        client, declared, request_shape = await _shape_client(endpoint, shape, schema)
        try:
            for counter, (situation, expected) in enumerate(SCENARIOS):
                messages = shape.messages(schema, situation, counter)
                legacy = shape.mode == "legacy"
                answer = (await _one(client, declared, request_shape, messages, legacy=legacy))["answer"]
                if answer is None:
                    picks.append("-")
                    continue
                valid += 1
                agreed += answer.intent == expected
                first += answer.intent == order[0]
                picks.append(answer.intent)
        finally:
            await client.__aexit__(None, None, None)
    return {"valid": valid, "agreed": agreed, "first": first, "picks": picks, "mode": request_shape.mode}


def null_model_agreement() -> int:
    """How often "always the first listed intent" is right over the same scenarios and orders."""
    return sum(order[0] == expected for order in _orders() for _, expected in SCENARIOS)


# -- 6. does a cancel free the slot? -----------------------------------------------------------
def slot_release(server: LocalLlamaServer, stream: bool) -> dict[str, object]:
    """Cancel a request from the main thread once its slot is busy; time until `/slots` shows it idle."""
    settings = LLMSettings(stream=stream, max_tokens=48)
    messages = tuple(build_messages(SCHEMA, SCENARIOS[0][0]))
    # schema mode: a decision long enough (up to 48 tokens) to cancel mid-generation
    endpoint = Endpoint(server.base_url, server.parallel, kind="llama", mode="schema")
    with LLMTransport([endpoint], settings) as transport:
        request = Request(0, 1, messages, SCHEMA, time.monotonic(), 30.0)
        started = time.monotonic()
        transport.submit(request, lambda outcome: None)
        natural = _wait(lambda: not any(server.slots_busy()), 30.0, started)  # uncancelled, for scale
        request = Request(0, 2, messages, SCHEMA, time.monotonic(), 30.0)
        ticket = transport.submit(request, lambda outcome: None)
        _wait(lambda: any(server.slots_busy()), 10.0, time.monotonic())
        time.sleep(0.05)
        cancelled_at = time.monotonic()
        ticket.cancel()
        freed = _wait(lambda: not any(server.slots_busy()), 30.0, cancelled_at)
    return {"stream": stream, "natural_ms": natural * 1000, "freed_ms": freed * 1000}


def raw_slot_release(server: LocalLlamaServer, stream: bool) -> dict[str, object]:
    """The same with a long free-text generation (300 tokens), where the difference is plain."""
    body = {"messages": [{"role": "user", "content": "Tell a long story about a castle guard."}]}
    body |= {"max_tokens": 300, "stream": stream}

    async def run() -> float:
        async with httpx.AsyncClient(timeout=httpx.Timeout(30.0, connect=2.0)) as client:
            task = asyncio.create_task(client.post(f"{server.base_url}/chat/completions", json=body))
            while not any(server.slots_busy()):
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.3)
            cancelled_at = time.monotonic()
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            return _wait(lambda: not any(server.slots_busy()), 30.0, cancelled_at)

    return {"stream": stream, "freed_ms": asyncio.run(run()) * 1000}


def _wait(condition: Callable[[], bool], limit: float, since: float) -> float:
    while time.monotonic() - since < limit:
        if condition():
            return time.monotonic() - since
        time.sleep(0.005)
    return float("inf")


# -- 7. main-thread stall while a hostile answer is read ----------------------------------------
STALL_CASES = [
    ("normal answer", {"kind": "ok"}, None),
    ("10 MB answer, default caps", {"kind": "oversized", "size": 10 << 20}, None),
    ("10 MB answer, caps 64 MiB", {"kind": "oversized", "size": 10 << 20}, 64 << 20),
    ("gzip bomb (1 GB inflated), default caps", {"kind": "gzip_bomb", "size": 1 << 30}, None),
    ("gzip bomb (60 MB inflated), caps 64 MiB", {"kind": "gzip_bomb", "size": 60 << 20}, 64 << 20),
]


SERVE = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from tests.support.fault_llm_server import Fault, FaultServer
with FaultServer(default=Fault(**json.loads(sys.argv[2]))) as server:
    print(server.port, flush=True)
    sys.stdin.read()
"""


def response_stall(requests: int = 4) -> list[dict[str, object]]:
    """Frames of ~1 ms of game work back to back on the main thread while, one after another,
    `requests` requests per case are read on the loop thread from a fault server in another process
    (its own work must not hold this process's GIL); per case the frame p50/p99/max."""
    rows = []
    for name, fault, cap in STALL_CASES:
        server = subprocess.Popen(
            [sys.executable, "-c", SERVE, str(ROOT), json.dumps(fault)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            port = int(server.stdout.readline())  # type: ignore[union-attr]
            settings = LLMSettings(read_timeout=60.0)
            if cap is not None:
                settings = LLMSettings(read_timeout=60.0, max_response_bytes=cap, max_decoded_bytes=cap)
            frames: list[float] = []
            outcomes: set[str] = set()
            with LLMTransport([Endpoint(f"http://127.0.0.1:{port}/v1")], settings) as transport:
                for index in range(requests):
                    done: list[object] = []
                    request = Request(1, index, (), SCHEMA, time.monotonic(), 60.0, {"threat": 0.5})
                    transport.submit(request, done.append)
                    while not done:
                        started = time.perf_counter()
                        game_work()
                        frames.append(time.perf_counter() - started)
                    outcomes.add(getattr(done[0], "reason", "") or "applied")
        finally:
            server.communicate("", timeout=30)
        ms = [f * 1000 for f in frames]
        rows.append({
            "case": name, "frames": len(ms), "p50": percentile(ms, 50), "p99": percentile(ms, 99),
            "max": max(ms), "outcome": ", ".join(sorted(outcomes)),
        })  # fmt: skip
    base = rows[0]["max"]
    for row in rows:
        row["ratio"] = row["max"] / base  # type: ignore[operator]
    return rows


def stall_lines() -> list[str]:
    lines = [
        "## Main-thread frames while a hostile answer is read",
        "",
        "Frames of ~1 ms of pure-Python game work back to back on the main thread while the loop",
        "thread reads 4 answers, one after another, from the fault server (in another process).",
        "Max ratio: the longest frame against the normal answer's longest frame, same run.",
        "",
        "| case | frames | p50 ms | p99 ms | max ms | max ratio | outcome |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in response_stall():
        lines.append(
            f"| {r['case']} | {r['frames']} | {r['p50']:.2f} | {r['p99']:.2f} | {r['max']:.2f} | "
            f"{r['ratio']:.1f}x | {r['outcome']} |"
        )
    return lines


# -- 7. step() after decision churn ----------------------------------------------------------
def churn_lines(cycles: int = 20_000, rounds: int = 3, frames: int = 300) -> list[str]:
    from npc_mind.server import ClockMode
    from npc_mind.server.core import MindServer
    from npc_mind.server.decisions import DecisionSettings

    def step_us(server: MindServer, handle: int) -> float:
        costs = []
        for _ in range(frames):
            server.request_decision(handle, {"threat": 0.5})  # no endpoint: one tier-3 fallback each
            started = time.perf_counter()
            server.update()
            costs.append(time.perf_counter() - started)
        return statistics.median(costs) * 1e6

    fresh, churned = MindServer(ClockMode.MANUAL), MindServer(ClockMode.MANUAL)
    live = [server.add_decision(DecisionSettings(intents=("patrol",))) for server in (fresh, churned)]
    started = time.perf_counter()
    for index in range(cycles):
        churned.remove(churned.add_decision(DecisionSettings(intents=("patrol",), persona=f"guard {index}")))
    spent = time.perf_counter() - started
    lines = [
        "## Decision `step()` after spawn/despawn churn",
        "",
        f"{cycles:,} decisions added and removed, each with its own persona (its own hub), took "
        f"{spent:.2f} s; then one live decision asks every frame ({frames} frames per round, median).",
        f"Hubs left: {len(churned.decisions.hubs)} (one per live configuration).",
        "",
        "| round | fresh server us | after churn us | ratio |",
        "|---|---|---|---|",
    ]
    for index in range(rounds):
        a, b = step_us(fresh, live[0]), step_us(churned, live[1])
        lines.append(f"| {index + 1} | {a:.1f} | {b:.1f} | {b / a:.2f}x |")
    return lines


# -- 9. goodput under overload -----------------------------------------------------------------
FRAME = 1 / 60  # the game's frame: the main thread sleeps out what its work left of it
GOODPUT_SETTINGS = {"soft_deadline": 0.3, "hard_deadline": 0.8}  # AsyncLLMDecision's defaults


_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) the process `pid` has used, from /proc (0 where unreadable)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICKS


def machine_busy_seconds() -> float:
    """CPU time (seconds, all cores) the whole machine has spent busy, from /proc/stat (0 where
    unreadable): what the other work on a shared machine took is this less the measured processes."""
    try:
        fields = [int(f) for f in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return 0.0
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle and iowait
    return (sum(fields[:8]) - idle) / _TICKS


def goodput_run(
    urls: str, npcs: int, seconds: float, settle: float = 3.0, pids: tuple[int, ...] = ()
) -> dict[str, object]:
    """`npcs` decisions through `MindServer` (what `AsyncLLMDecision` nodes are), each asking again in
    every frame in which it is not pending, 60 frames a second; counted over `seconds` after `settle`.
    pids: the local servers' processes, whose CPU use (cores, over the counted seconds) is reported
    beside this process's (the game's)."""
    from collections import Counter

    from npc_mind.server import ClockMode
    from npc_mind.server.core import MindServer
    from npc_mind.server.decisions import DecisionSettings

    load = os.getloadavg()[0]
    server = MindServer(ClockMode.MANUAL, llm_endpoint=urls)
    settings = DecisionSettings(intents=INTENTS, **GOODPUT_SETTINGS)
    handles = [server.add_decision(settings) for _ in range(npcs)]
    # Every request the next situation (an NPC's own, then the next NPC's ...): a prompt the model has
    # cached whole would make one NPC asking the same thing back to back an unfair yardstick.
    situations = [situation for situation, _ in SCENARIOS]
    asked = 0
    for hub in server.decisions.hubs.values():
        hub.prepared.result(timeout=300)  # type: ignore[union-attr]  # kinds, slots, warmed caches
    ended: Counter[str] = Counter()
    frame_ms: list[float] = []
    asks_counted = 0
    cpu_before: list[float] = []
    machine_before = 0.0
    pending = server.decisions.pending
    start = time.monotonic()
    measure_from, stop = start + settle, start + settle + seconds
    try:
        while (now := time.monotonic()) < stop:
            if now >= measure_from and not cpu_before:
                cpu_before = [cpu_seconds(pid) for pid in (os.getpid(), *pids)]
                machine_before = machine_busy_seconds()
            began = time.perf_counter()
            asked_before = asked
            for index, handle in enumerate(handles):
                if not pending(handle):
                    asked += 1
                    server.request_decision(handle, situations[(index + asked) % len(situations)])
            events = server.update()
            spent = time.perf_counter() - began
            if now >= measure_from:
                frame_ms.append(spent * 1000)
                asks_counted += asked - asked_before
                for event in events:
                    if event.signal == "decision_made":
                        ended[f"tier{event.args[2]}"] += 1
                    elif event.signal == "decision_fallback":
                        ended[str(event.args[1])] += 1
            time.sleep(max(0.0, FRAME - spent))
        processes = (os.getpid(), *pids)
        cpu = [cpu_seconds(pid) - before for pid, before in zip(processes, cpu_before, strict=True)]
        machine = machine_busy_seconds() - machine_before
        transport = next(iter(server.decisions.transports.values()))
        states = transport.client.pool.states()
    finally:
        server.close()
    answers = ended["tier1"] + ended["tier2"]
    return {
        "npcs": npcs,
        "endpoints": len(states),
        "answers_s": answers / seconds,
        "tier1": ended["tier1"] / answers if answers else 0.0,
        "ended": ended,
        "opened": sum(int(s["breaker_opened"]) for s in states),  # type: ignore[call-overload]
        "slots": sum(int(s["slots"]) for s in states),  # type: ignore[call-overload]
        "service_ms": [s["service_ms"] for s in states],
        "pace_ms": [s["pace_ms"] for s in states],
        "sent": [s["sent"] for s in states],
        "answered": [s["answered"] for s in states],
        "missed": [s["missed"] for s in states],
        "frame_p50": percentile(frame_ms, 50),
        "frame_p99": percentile(frame_ms, 99),
        "ask_us": sum(frame_ms) * 1000 / asks_counted if asks_counted else 0.0,
        "game_cores": cpu[0] / seconds,
        "server_cores": [c / seconds for c in cpu[1 : len(states) + 1]],
        "other_cores": max(0.0, machine - sum(cpu)) / seconds,  # the shared machine's other work
        "load": load,
    }


def back_to_back(endpoint: Endpoint, seconds: float) -> float:
    """Answers per second of one caller awaiting `LLMClient.decide` in a loop (no game, no frames)."""

    async def run() -> float:
        boards = [situation for situation, _ in SCENARIOS]
        # A loaded machine can take longer than the default read timeout for an uncached prompt.
        async with LLMClient([endpoint], LLMSettings(read_timeout=60.0)) as client:
            await client.decide(build_messages(SCHEMA, boards[0]), SCHEMA)
            answers = asked = 0
            stop = time.monotonic() + seconds
            while time.monotonic() < stop:
                asked += 1
                with contextlib.suppress(LLMError):
                    await client.decide(build_messages(SCHEMA, boards[asked % len(boards)]), SCHEMA)
                    answers += 1
            return answers / seconds

    return asyncio.run(run())


def _pooled(rounds: list[dict[str, object]], seconds: float) -> dict[str, object]:
    """One case's rounds as one row: answers and fallbacks summed, the rest per round (the spread)."""
    from collections import Counter

    ended: Counter[str] = Counter()
    for r in rounds:
        ended.update(r["ended"])  # type: ignore[arg-type]
    answers = ended["tier1"] + ended["tier2"]
    return {
        **rounds[-1],
        "answers_s": answers / (seconds * len(rounds)),
        "tier1": ended["tier1"] / answers if answers else 0.0,
        "ended": ended,
        "opened": sum(int(r["opened"]) for r in rounds),  # type: ignore[call-overload]
        "frame_p50": statistics.median(float(r["frame_p50"]) for r in rounds),  # type: ignore[arg-type]
        "frame_p99": max(float(r["frame_p99"]) for r in rounds),  # type: ignore[arg-type]
        "ask_us": statistics.median(float(r["ask_us"]) for r in rounds),  # type: ignore[arg-type]
        "game_cores": statistics.mean(float(r["game_cores"]) for r in rounds),  # type: ignore[arg-type]
        "server_cores": [
            statistics.mean(cores) for cores in zip(*(r["server_cores"] for r in rounds), strict=True)  # type: ignore[call-overload]
        ],
        "other_cores": statistics.mean(float(r["other_cores"]) for r in rounds),  # type: ignore[arg-type]
        "answered": [sum(a) for a in zip(*(r["answered"] for r in rounds), strict=True)],  # type: ignore[call-overload]
        "sent": [sum(a) for a in zip(*(r["sent"] for r in rounds), strict=True)],  # type: ignore[call-overload]
        "loads": [float(r["load"]) for r in rounds],  # type: ignore[arg-type]
        "per_round": [float(r["answers_s"]) for r in rounds],  # type: ignore[arg-type]
    }


# Near-linear scaling: at least this share of what the cores allow (`scaling_bound`).
NEAR_LINEAR = 0.8
SERVER_THREADS = 1  # `LocalLlamaServer`'s default `-t`, what the benchmark starts


def scaling_bound(run: dict[str, object], single: dict[str, object], cores: int) -> float:
    """The most answers/s `run`'s servers can give against `single`'s (one server), by the cores: each
    server uses at most its threads' cores, all of them at most the machine's cores less what the
    game's process and the machine's other work took in that run (a shared machine's other work is
    not ours to count as free)."""

    def usable(r: dict[str, object]) -> float:
        free = cores - float(r["game_cores"]) - float(r["other_cores"])  # type: ignore[arg-type]
        return max(0.0, min(int(r["endpoints"]) * SERVER_THREADS, free))  # type: ignore[call-overload]

    base = usable(single)
    return usable(run) / base if base else 0.0


def goodput_lines(seconds: float = 10.0, rounds: int = 2) -> list[str]:
    """1, 100 and 1,000 NPCs against one local llama-server, and 1,000 against 2 and 3, same run: the
    cases in `rounds` interleaved rounds (every case once per round, the baseline first), so that a
    busy spell of the shared machine hits the baseline and the measured runs alike."""
    configured = endpoints_from_env()
    servers: list[LocalLlamaServer] = []
    try:
        if configured:
            endpoints = configured
        else:
            # nice 0, not the in-game 10: on a shared machine nice 10 leaves the model almost no CPU.
            # The in-game configuration (LocalLlamaServer's defaults: one thread, 2 slots).
            servers = [LocalLlamaServer(niceness=0).start() for _ in range(3)]
            endpoints = [s.endpoint() for s in servers]
        urls = [",".join(e.base_url for e in endpoints[:k]) for k in range(1, len(endpoints) + 1)]
        pids = tuple(s._process.pid for s in servers if s._process is not None)
        cases = [(urls[0], n) for n in (1, 100, 1000)] + [(url, 1000) for url in urls[1:]]
        results: dict[tuple[str, int], list[dict[str, object]]] = {case: [] for case in cases}
        for index in range(rounds):
            for url, npcs in cases:
                results[url, npcs].append(goodput_run(url, npcs, seconds, pids=pids))
                print(f"bench llm: goodput round {index + 1} {results[url, npcs][-1]}", flush=True)
        raw = back_to_back(endpoints[0], seconds)
    finally:
        for server in servers:
            server.stop()
    runs = [_pooled(results[case], seconds) for case in cases]
    one = float(runs[0]["answers_s"])  # type: ignore[arg-type]
    single = next(float(r["answers_s"]) for r in runs if r["npcs"] == 1000)  # type: ignore[arg-type]
    baseline = runs[0]["per_round"]

    def ratio(value: object, base: float) -> str:
        return f"{float(value) / base:.2f}x" if base else "n/a"  # type: ignore[arg-type]

    def round_ratios(run: dict[str, object]) -> str:
        pairs = zip(run["per_round"], baseline, strict=True)  # type: ignore[call-overload]
        return " / ".join(f"{a / b:.2f}" if b else "n/a" for a, b in pairs)

    lines = [
        "## LLM goodput under overload",
        "",
        f"`benchmarks/bench_llm.py --only goodput`, {time.strftime('%Y-%m-%d %H:%M')}, load average at "
        f"start {os.getloadavg()[0]:.1f} (a shared machine: other work competes for its 2 cores; each",
        "row gives the load average at the start of each of its rounds).",
        "Each local llama-server: SmolLM2-135M, `-t 1`, 2 slots (`LocalLlamaServer`'s defaults), nice 0",
        "(not the in-game 10: on a shared machine that leaves the model almost no CPU).",
        "NPCs are `MindServer` decisions (what `AsyncLLMDecision` nodes are), with the node's default",
        "deadlines (300 / 800 ms);",
        "each asks again in every frame in which it is not pending (each request the next of the 8",
        f"scenario situations), 60 frames a second. {rounds} rounds, each running every row once in",
        f"the order shown ({seconds:.0f} s counted after 3 s to settle): baseline and measured runs",
        "interleaved. Answers: `decision_made` (tier 1 or 2) per second over the rounds. Ratio:",
        "against one NPC asking back to back through the same path (the first row; per round: that",
        "round's rows; goal: at least 0.8x at 1,000 NPCs). Scaling: against 1,000 NPCs on one",
        "endpoint. Fallbacks: how the other requests ended, all at once in tier 3 but `timeout`.",
        "Answered / sent per server: the requests each endpoint answered and was sent, over the rounds",
        "(settling included): how the work was spread.",
        "us/ask: the main thread's time (asks and `update()`) per ask, over the counted frames. Cores:",
        "CPU time per second (/proc) of the game's process (main and loop thread) and of each server;",
        "others: the whole machine's busy time (/proc/stat) less those, the shared machine's other work.",
        "",
        "| endpoints | NPCs | answers/s | ratio | ratio per round | scaling | tier 1 | fallbacks "
        "| breaker opened | service ms | answered / sent per server | main-thread ms/frame p50 / p99 "
        "| us/ask | cores game | cores servers | cores others | load average |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        ended = r["ended"]
        fallbacks = ", ".join(
            f"{reason} {count:,}" for reason, count in sorted(ended.items()) if not reason.startswith("tier")  # type: ignore[attr-defined]
        ) or "none"
        scaling = ratio(r["answers_s"], single) if r["npcs"] == 1000 else "-"
        service = " / ".join(f"{ms:.0f}" if ms is not None else "-" for ms in r["service_ms"])  # type: ignore[attr-defined]
        loads = " / ".join(f"{load:.1f}" for load in r["loads"])  # type: ignore[attr-defined]
        cores = " / ".join(f"{c:.2f}" for c in r["server_cores"]) or "-"  # type: ignore[attr-defined]
        shares = " / ".join(f"{a} of {n}" for a, n in zip(r["answered"], r["sent"], strict=True))  # type: ignore[call-overload]
        lines.append(
            f"| {r['endpoints']} | {r['npcs']:,} | {r['answers_s']:.2f} | "
            f"{ratio(r['answers_s'], one)} | {round_ratios(r)} | {scaling} | {float(r['tier1']):.0%} | "  # type: ignore[arg-type]
            f"{fallbacks} | {r['opened']} | {service} | {shares} | "
            f"{r['frame_p50']:.2f} / {r['frame_p99']:.2f} | "
            f"{float(r['ask_us']):.1f} | {float(r['game_cores']):.2f} | {cores} | "  # type: ignore[arg-type]
            f"{float(r['other_cores']):.2f} | {loads} |"  # type: ignore[arg-type]
        )
    crowd = [r for r in runs if r["npcs"] == 1000]
    goodput = float(crowd[0]["answers_s"]) / one if one else 0.0  # type: ignore[arg-type]
    opened = sum(int(r["opened"]) for r in runs)  # type: ignore[call-overload]
    waited = sum(int(r["ended"]["timeout"]) for r in runs)  # type: ignore[index]
    ended = sum(sum(r["ended"].values()) for r in runs)  # type: ignore[attr-defined]
    machine_cores = os.cpu_count() or 1
    scalings = []
    for r in crowd:
        gain = float(r["answers_s"]) / single if single else 0.0  # type: ignore[arg-type]
        bound = scaling_bound(r, crowd[0], machine_cores) if pids else None
        verdict = "" if bound is None or r is crowd[0] else (
            f", bound {bound:.2f}x: {'met' if gain >= NEAR_LINEAR * bound else 'missed'}"
        )
        scalings.append(f"{r['endpoints']}: {gain:.2f}x{verdict}")
    lines += [
        "",
        f"One caller awaiting `LLMClient.decide` back to back (no game loop) on one endpoint, after the "
        f"rounds: {raw:.2f} answers/s.",
        "",
        f"Goals: 1,000 NPCs get {goodput:.2f}x one NPC's answers/s on one endpoint (at least 0.8x): "
        f"{'met' if goodput >= 0.8 else 'missed'}. Breakers opened on these healthy servers: {opened} "
        f"(goal 0): {'met' if opened == 0 else 'missed'}. Requests that waited out their deadline "
        f"(`timeout`, each one that an endpoint held): {waited:,} of {ended:,} ended. Scaling with "
        f"endpoints ({'; '.join(scalings)}): goal near-linear up to the cores, at least "
        f"{NEAR_LINEAR:.0%} of the bound they allow: k servers of {SERVER_THREADS} thread each use at "
        f"most min(k x {SERVER_THREADS}, {machine_cores} cores less the game's and the other work's cores in "
        "that row), against the same for one server.",
    ]
    return lines


def merge_sections(old: str, new: str) -> str:
    """`old` with each `## ` section of `new` in place of its namesake (or appended): a partial run
    (`--only`) keeps the stored sections it did not run."""

    def split(text: str) -> tuple[str, dict[str, str]]:
        head, *parts = text.split("\n## ")
        return head, {part.split("\n", 1)[0]: "## " + part for part in parts}

    head, sections = split(old)
    _, fresh = split(new)
    merged = {**sections, **fresh}
    return "\n".join([head.rstrip("\n") + "\n", *(body.rstrip("\n") + "\n" for body in merged.values())])


# -- report ------------------------------------------------------------------------------------
def tick_section(endpoint: Endpoint) -> list[str]:
    """Section 1: the main-thread cost of `tick_all`."""
    print("bench llm: tick cost", flush=True)
    lines = [
        "## Main-thread cost of `tick_all` per NPC (real transport to the model)",
        "",
        "Baseline: one `board[key] = value` store per NPC, timed in the same frames as `tick_all`,",
        "back to back with the same clock, in alternating order (each goes first in half the frames).",
        "3 rounds of 300 frames per row (a fresh hub each, 80 frames to settle, ~8 ms sleep between",
        "frames), the rounds of all rows interleaved. Ratio of a round: median `tick_all` / median",
        "store over the frames where both went first, likewise where both went second, geometric",
        "mean of the two; shown: the median round and the range of the three. Goal: at most 3x.",
        "",
        "Quiet: every NPC has decided and waits for its next re-plan. Busy: threats flip on 0.5% of",
        "the NPCs (at least one) every frame and every NPC re-plans every 2 s, against 4 model slots",
        "and a queue of 64 (so most requests end at once in tier 3 `queue_full` or at the watchdog):",
        "*lockstep*, NPCs spawned in one frame all re-plan in the same frame every 2 s (exact",
        "intervals, the default); *staggered*, `DecisionConfig(replan_jitter=0.5)` draws each",
        "interval in 1-2 s, so re-plans spread over the frames. Requests/frame: dispatches per",
        "measured frame (p50 / max); the lockstep rows' max is the frame where the NPCs still in",
        "step since their spawn re-plan together (threat changes have moved the others).",
        "Store-first ratio: the method of earlier runs, `tick_all` always right after the store",
        "(which leaves the boards in cache for it), from the same frames (their median round).",
        "",
        "| NPCs | frames | requests/frame p50 / max | tick_all ns/NPC p50 | p99 | store ns/NPC "
        "| ratio | ratio range (3 rounds) | store-first ratio |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in tick_costs(endpoint):
        low, high = min(r["ratios"]), max(r["ratios"])  # type: ignore[type-var]
        lines.append(
            f"| {r['npcs']} | {r['mode']} ({r['frames']}) | {r['asked_p50']:.0f} / {r['asked_max']} | "
            f"{r['tick_ns']:.0f} | {r['tick_p99_ns']:.0f} | {r['dict_ns']:.0f} | "
            f"{r['ratio']:.2f}x | {low:.2f}-{high:.2f}x | {r['store_first']:.2f}x |"
        )
    r = dispatch_cost(endpoint)
    lines += [
        "",
        f"One request costs the main thread {r['p50']:.1f} us (p50 of 5 rounds of 200 dispatches, "
        f"max {r['max']:.1f} us): re-plan check, snapshot, request, hand-over, cover action and event "
        "(the prompt text and JSON are made on the loop thread; a refused request skips most of it).",
    ]
    return lines


def frames_section(endpoint: Endpoint) -> list[str]:
    """Section 2: frame times with requests in flight."""
    print("bench llm: frame times", flush=True)
    lines = [
        "",
        "## Frame time with requests in flight",
        "",
        "A frame: `tick_all` for 100 NPCs plus ~1 ms of pure-Python game work, back to back for 8 s.",
        "",
        "| requests in flight | frames | p50 ms | p99 ms | max ms | answers applied |",
        "|---|---|---|---|---|---|",
    ]
    for in_flight in (0, 4):
        r = frame_times(endpoint, in_flight)
        lines.append(
            f"| {in_flight} | {r['frames']} | {r['p50']:.2f} | {r['p99']:.2f} | {r['max']:.2f} | "
            f"{r['answers']} |"
        )
    return lines


def throughput_section(endpoint: Endpoint) -> list[str]:
    """Section 3: decisions per second."""
    print("bench llm: throughput", flush=True)
    lines = [
        "",
        "## Decisions per second against the model",
        "",
        "Streamed `LLMClient.decide` calls in the endpoint's default mode (choice on the local",
        "llama-server, 4 slots), the prompt cache warmed by one request first.",
        "",
        "| concurrency | requests | decisions/s | p50 ms | p95 ms | failures |",
        "|---|---|---|---|---|---|",
    ]
    for concurrency in (1, 2, 4):
        r = asyncio.run(_throughput(endpoint, concurrency, per_worker=max(3, 12 // concurrency)))
        lines.append(
            f"| {concurrency} | {r['requests']} | {r['per_s']:.2f} | {r['p50']:.0f} | {r['p95']:.0f} | "
            f"{r['failures']} |"
        )
    return lines


PER_SHAPE = 40
SECTIONS = ("tick", "frames", "throughput", "shapes", "scenarios", "slots", "stall", "churn", "goodput")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(SECTIONS), help=f"sections: {', '.join(SECTIONS)}")
    parser.add_argument("--out", type=Path, default=OUT, help="the markdown file written")
    args = parser.parse_args(argv)
    chosen = {name.strip() for name in args.only.split(",")}

    def want(section: str) -> bool:
        return section in chosen

    lines = [
        "# LLM decisions benchmark",
        "",
        f"`scripts/bench llm` on {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {time.strftime('%Y-%m-%d')}, load average at start "
        f"{os.getloadavg()[0]:.1f} (other work on the machine shows in the tails). Model: "
        "SmolLM2-135M-Instruct Q4_1 in the project's llama-server (`-t 1`, 4 slots, nice 10), unless "
        "`NPC_MIND_LLM_URL` is set.",
        "",
    ]
    configured = endpoints_from_env()
    # goodput starts its own servers; stall and churn use none
    uses_model = bool(chosen - {"goodput", "stall", "churn"})
    server = None if configured or not uses_model else LocalLlamaServer(threads=1, parallel=4).start()
    endpoint = configured[0] if configured else server.endpoint() if server else None
    try:
        sections = (("tick", tick_section), ("frames", frames_section), ("throughput", throughput_section))
        for section, build in sections:
            if want(section):
                lines += build(endpoint)
        named = [("local SmolLM2-135M", endpoint)] if server else []
        named += [(f"NPC_MIND_LLM_URL #{i + 1}", e) for i, e in enumerate(configured or [])]
        if want("shapes"):
            print("bench llm: request shapes", flush=True)
            lines += [
                "",
                "## Request shapes against the model (same run)",
                "",
                f"Each shape {PER_SHAPE} times over the scenarios below, the shapes interleaved (one",
                "request of each in turn), one at a time, not streamed (to read `finish_reason`). On",
                "llama-server each shape has its own slot (`id_slot`), cached with its prefix by a first",
                "untimed request; the previous request in a slot was always another situation, so each",
                "request evaluates its whole situation (shapes sharing a slot reused each other's).",
                "Two recalled memories in every prompt. Tiers as the watchdog counts them (300 / 800 ms); an",
                "invalid answer counts as tier 3. Cut: `finish_reason` `length` (the answer did not end).",
                "",
            ]
            for name, candidate in named:
                lines += [
                    f"{name}:",
                    "",
                    "| shape | mode used | requests | p50 ms | p95 ms | tier 1 | tier 2 | tier 3 | valid "
                    "| cut |",
                    "|---|---|---|---|---|---|---|---|---|---|",
                ]
                for r in asyncio.run(_shapes(candidate, PER_SHAPE)):
                    n = r["requests"]
                    lines.append(
                        f"| {r['name']} | {r['mode']} | {n} | {r['p50']:.0f} | {r['p95']:.0f} | "
                        f"{r['tier1'] / n:.0%} | {r['tier2'] / n:.0%} | {r['tier3'] / n:.0%} | "
                        f"{r['valid']}/{n} | {r['cut']} |"
                    )
                lines.append("")
        if want("scenarios"):
            print("bench llm: scenario agreement", flush=True)
            total = len(SCENARIOS) * len(_orders())
            lines += [
                "",
                f"## Scenario agreement ({len(SCENARIOS)} situations x 3 intent orders -> expected intent)",
                "",
                "The intents listed as defined, reversed and rotated by half; the null model always answers",
                f"the first intent listed: {null_model_agreement()}/{total}.",
                "",
                "| endpoint | shape | mode used | valid | agreement | null model | answered the first listed "
                "| picks (intents as defined) |",
                "|---|---|---|---|---|---|---|---|",
            ]
            for name, candidate in named:
                for shape in SCENARIO_SHAPES:
                    r = asyncio.run(_agreement(candidate, shape))
                    picks = ", ".join(str(p) for p in r["picks"][: len(SCENARIOS)])  # type: ignore[index]
                    lines.append(
                        f"| {name} | {shape.name} | {r['mode']} | {r['valid']}/{total} | "
                        f"{r['agreed']}/{total} | {null_model_agreement()}/{total} | {r['first']}/{total} "
                        f"| {picks} |"
                    )
            expected = ", ".join(intent for _, intent in SCENARIOS)
            lines += ["", f"Expected: {expected}."]
        if want("slots"):
            lines += ["", "## Does llama-server free its slot when a request is cancelled?", ""]
            if server is None:
                lines.append("Not measured: `NPC_MIND_LLM_URL` points at another server.")
            else:
                print("bench llm: slots on cancel", flush=True)
                lines += [
                    "Measured on `/slots`: time from `Ticket.cancel()` on the main thread until no slot is",
                    "busy.",
                    "",
                    "| request | streaming | uncancelled run ms | slot idle after cancel, ms |",
                    "|---|---|---|---|",
                ]
                freed = {}
                for stream in (True, False):
                    r = slot_release(server, stream)
                    lines.append(
                        f"| decision, schema mode (48 tokens) | {stream} | {r['natural_ms']:.0f} | "
                    f"{r['freed_ms']:.0f} |"
                    )
                for stream in (True, False):
                    r = raw_slot_release(server, stream)
                    freed[stream] = r["freed_ms"]
                    lines.append(f"| free text (300 tokens) | {stream} | - | {r['freed_ms']:.0f} |")
                verdict = (
                    "a streaming request frees its slot on cancel; a non-streaming one keeps it busy until "
                    "its generation ends (the client streams by default for this reason)"
                    if freed[True] * 4 < freed[False]
                    else "streaming and non-streaming requests free their slot after about the same time"
                )
                lines += ["", f"This run: {verdict}."]
        if want("stall"):
            print("bench llm: stall on hostile answers", flush=True)
            lines += ["", *stall_lines()]
        if want("churn"):
            print("bench llm: step after churn", flush=True)
            lines += ["", *churn_lines()]
        if want("goodput"):
            print("bench llm: goodput under overload", flush=True)
            lines += ["", *goodput_lines()]
    finally:
        if server is not None:
            server.stop()
    text = "\n".join(lines) + "\n"
    if chosen != set(SECTIONS) and args.out.exists():
        text = merge_sections(args.out.read_text(), text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)
    if args.out == OUT:
        publish("llm")  # the figure the README quotes
    return 0


if __name__ == "__main__":
    sys.exit(main())
