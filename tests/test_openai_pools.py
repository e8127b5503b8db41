"""The OpenAI backend spreads its calls over several SDK clients (connection pools) over the wire (issue 13).

What must hold: every call still goes through the official SDK client and is answered; the pools together open
no more connections than there are calls in flight; a run with one call at a time uses one pool; closing the
backend closes every pool.
"""

import asyncio
import time

from empathybench.models.base import ChatRequest, Message, Sampling
from empathybench.models.openai_backend import CALLS_PER_POOL, POOL_SHARDS, OpenAIBackend
from empathybench.testing.fake_openai import FakeOpenAIServer

SAMPLING = Sampling(temperature=0.0, max_tokens=20, seed=3)


def request(index: int) -> ChatRequest:
    return ChatRequest((Message("user", f"Item {index}. Rate: <score>"),), SAMPLING)


def open_connections(server: FakeOpenAIServer) -> int:
    with server._lock:
        return len(server._connections)


def wait_for_connections(server: FakeOpenAIServer, at_most: int, timeout_s: float = 5.0) -> int:
    deadline = time.monotonic() + timeout_s
    while open_connections(server) > at_most and time.monotonic() < deadline:
        time.sleep(0.02)
    return open_connections(server)


def test_many_calls_in_flight_are_spread_over_the_pools() -> None:
    calls = 64
    with FakeOpenAIServer(latency_s=0.3) as server:
        backend = OpenAIBackend("fake", base_url=server.base_url, api_key="sk-test-pools")
        busiest: list[int] = []
        pools: list[int] = []

        async def run() -> list[str]:
            async def one(index: int) -> str:
                response = await backend.complete(request(index))
                return response.text

            tasks = [asyncio.create_task(one(index)) for index in range(calls)]
            await asyncio.sleep(0)  # every task has picked its pool (before its first await); none answered
            busiest.append(max(backend._in_flight))
            pools.append(len(backend._shards))
            contexts.update(id(client._client._transport._pool._ssl_context) for client in backend._shards)
            try:
                return await asyncio.gather(*tasks)
            finally:
                connections_during_run.append(open_connections(server))
                await backend.aclose()

        connections_during_run: list[int] = []
        contexts: set[int] = set()
        texts = asyncio.run(run())
        assert len(texts) == calls and all(texts)
        assert server.requests_total == calls
        assert server.max_in_flight == calls  # spreading the calls does not hold any back
        assert backend._shards == []  # closed: no client left
        assert pools == [POOL_SHARDS] and calls == POOL_SHARDS * CALLS_PER_POOL
        assert busiest == [CALLS_PER_POOL]  # the least busy pool takes each call
        assert len(contexts) == 1  # one TLS context (CA bundle loaded once) for every pool
        assert connections_during_run[0] <= calls
        assert wait_for_connections(server, 0) == 0  # closing the backend closed every pool's connections


def test_calls_in_flight_up_to_one_pools_share_keep_one_pool() -> None:
    with FakeOpenAIServer(latency_s=0.2) as server:
        backend = OpenAIBackend("fake", base_url=server.base_url, api_key="sk-test-pools")
        seen: list[tuple[int, int]] = []

        async def run() -> None:
            try:
                for wave in (CALLS_PER_POOL, CALLS_PER_POOL + 1):
                    tasks = [asyncio.create_task(backend.complete(request(index))) for index in range(wave)]
                    await asyncio.sleep(0)
                    seen.append((len(backend._shards), max(backend._in_flight)))
                    await asyncio.gather(*tasks)
            finally:
                await backend.aclose()

        asyncio.run(run())
        # 8 at once: the one pool as before; one more call opens a second pool, which takes it.
        assert seen == [(1, CALLS_PER_POOL), (2, CALLS_PER_POOL)]
        assert server.requests_total == 2 * CALLS_PER_POOL + 1


def test_one_call_at_a_time_uses_one_pool_and_one_connection() -> None:
    with FakeOpenAIServer() as server:
        backend = OpenAIBackend("fake", base_url=server.base_url, api_key="sk-test-pools")
        clients: list[int] = []

        async def run() -> None:
            try:
                for index in range(5):
                    await backend.complete(request(index))
                clients.append(len(backend._shards))
                connections.append(open_connections(server))
            finally:
                await backend.aclose()

        connections: list[int] = []
        asyncio.run(run())
        assert server.requests_total == 5
        assert clients == [1]
        assert connections == [1]  # the keep-alive connection was reused for every call
