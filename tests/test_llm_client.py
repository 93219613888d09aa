"""The client against real loopback servers: routing, caps, breaker, timeouts."""

from __future__ import annotations

import asyncio
import gc
import socket
import sys

import pytest

from npc_mind.llm import (
    BreakerConfig,
    Endpoint,
    EndpointError,
    LLMClient,
    LLMSettings,
    RejectedError,
    build_messages,
)
from tests.support import decision_world as world
from tests.support.fault_llm_server import Fault, FaultServer

MESSAGES = build_messages(world.SCHEMA, world.board())


async def decide_many(client: LLMClient, count: int) -> list[object]:
    return await asyncio.gather(
        *(client.decide(MESSAGES, world.SCHEMA) for _ in range(count)), return_exceptions=True
    )


def test_least_in_flight_routing_spreads_concurrent_requests() -> None:
    with FaultServer(default=Fault(latency=0.2)) as a, FaultServer(default=Fault(latency=0.2)) as b:

        async def run() -> list[object]:
            async with LLMClient([Endpoint(a.base_url), Endpoint(b.base_url)]) as client:
                return await decide_many(client, 6)

        answers = asyncio.run(run())
    assert all(getattr(answer, "intent", None) == "attack" for answer in answers), answers
    assert (len(a.seen), len(b.seen)) == (3, 3)


def test_concurrency_cap_per_endpoint_queues_the_rest(fault_server: FaultServer) -> None:
    fault_server.default = Fault(latency=0.1)

    async def run() -> list[object]:
        async with LLMClient([Endpoint(fault_server.base_url, max_in_flight=2)]) as client:
            return await decide_many(client, 5)

    answers = asyncio.run(run())
    assert len([a for a in answers if getattr(a, "intent", None) == "attack"]) == 5
    assert fault_server.max_active == 2


def test_breaker_stops_calls_after_consecutive_failures(fault_server: FaultServer) -> None:
    fault_server.default = Fault("http_500")
    breaker = BreakerConfig(failure_threshold=3, cooldown=600.0)

    async def run() -> list[object]:
        async with LLMClient([Endpoint(fault_server.base_url)], breaker=breaker) as client:
            results = [await decide_many(client, 1) for _ in range(5)]
            return [r[0] for r in results]

    results = asyncio.run(run())
    reasons = [getattr(r, "reason", None) for r in results]
    assert reasons == ["http_error"] * 3 + ["breaker_open"] * 2
    assert isinstance(results[0], EndpointError) and isinstance(results[4], RejectedError)
    assert len(fault_server.seen) == 3  # no call was made while open


def test_read_timeout_is_an_endpoint_error(fault_server: FaultServer) -> None:
    fault_server.default = Fault("never_ends")
    settings = LLMSettings(read_timeout=0.2)

    async def run() -> list[object]:
        async with LLMClient([Endpoint(fault_server.base_url)], settings=settings) as client:
            return await decide_many(client, 1)

    (result,) = asyncio.run(run())
    assert isinstance(result, EndpointError) and result.reason == "timeout"


def test_cancelling_a_request_closes_its_connection(fault_server: FaultServer) -> None:
    fault_server.default = Fault(latency=30.0)

    async def run() -> None:
        async with LLMClient([Endpoint(fault_server.base_url)]) as client:
            task = asyncio.create_task(client.decide(MESSAGES, world.SCHEMA))
            while not fault_server.seen:
                await asyncio.sleep(0.005)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            for _ in range(2000):
                if fault_server.closed_by_client():
                    break
                await asyncio.sleep(0.005)
            assert client.pool.states()[0]["in_flight"] == 0

    asyncio.run(run())
    assert fault_server.closed_by_client() == 1


def test_a_server_that_closes_streams_after_the_last_chunk() -> None:
    """llama-server closes a streamed response's connection shortly after it ends; a client that put
    the connection back in its pool sent the next request into that close and lost it."""
    with FaultServer(linger_close=0.05) as server:

        async def run() -> list[object]:
            async with LLMClient([Endpoint(server.base_url)]) as client:
                return [await client.decide(MESSAGES, world.SCHEMA) for _ in range(4)]

        answers = asyncio.run(run())
    assert [getattr(a, "intent", None) for a in answers] == ["attack"] * 4
    assert all(seen.headers.get("connection") == "close" for seen in server.seen)


def test_a_request_carries_its_snapshot_and_the_prompt_is_built_off_the_main_thread() -> None:
    from npc_mind.decision import DecisionHub
    from tests.support.scripted_transport import FakeClock, ScriptedTransport

    clock = FakeClock()
    transport = ScriptedTransport(clock)
    hub = DecisionHub(transport, world.SCHEMA)
    hub.add(1, world.rules())
    board = world.board(threat=0.6)
    hub.tick_all(clock(), {1: board})
    ((request, _),) = transport.requests.values()
    assert request.messages == ()  # no text made on the main thread
    board["threat"] = 0.1  # the request works on a frozen snapshot
    assert request.chat() == build_messages(world.SCHEMA, world.board(threat=0.6))


def test_cancel_after_close_is_harmless(fault_server: FaultServer) -> None:
    from npc_mind.llm import LLMTransport
    from npc_mind.llm.transport import Request

    fault_server.default = Fault(latency=5.0)
    transport = LLMTransport([Endpoint(fault_server.base_url)])
    ticket = transport.submit(Request(1, 1, (), world.SCHEMA, 0.0, 5.0, world.board()), lambda _: None)
    transport.close()
    ticket.cancel()  # no write to the closed (maybe reused) wake-up descriptor, no exception
    assert ticket.cancelled


def test_a_fault_server_stopped_while_connections_arrive_leaves_no_socket_open() -> None:
    """The tests' own server, stopped right after clients connect (its handlers not started, some
    connections not yet given a transport), closes every one: a socket left open is a
    ResourceWarning, which fails whichever test the garbage collector finds it in."""
    leaked: list[str] = []
    hook = sys.unraisablehook
    sys.unraisablehook = lambda unraisable: leaked.append(str(unraisable.exc_value))
    try:
        for connections in list(range(1, 8)) * 8:
            server = FaultServer().start()
            clients = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(connections)]
            server.stop()
            for client in clients:
                client.close()
            gc.collect()
    finally:
        sys.unraisablehook = hook
    assert leaked == []
