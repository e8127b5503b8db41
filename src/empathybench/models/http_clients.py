"""The HTTP client under the official SDKs: one of the SDKs' own, never a hand-made one.

`aiohttp` (the default) is the SDKs' `DefaultAioHttpClient` (their `aiohttp` extra, a dependency of EmpathyBench):
the one of the two that costs the harness least CPU per call (bench/results/http_clients.md). `httpx` is the SDKs'
plain default client. Both take proxies from the environment and verify TLS as the SDKs do (the system's authorities
or `SSL_CERT_FILE`), and the SDK builds every request itself: headers, auth, idempotency keys, retry counters. The
choice is `EMPATHYBENCH_HTTP_CLIENT` (bench/bench_http_clients.py measures both beside each other).
"""

import os
from typing import Any

from empathybench.errors import ModelConfigError

HTTP_CLIENTS = ("httpx", "aiohttp")
DEFAULT_HTTP_CLIENT = "aiohttp"
HTTP_CLIENT_VARIABLE = "EMPATHYBENCH_HTTP_CLIENT"


def http_client_name() -> str:
    """The HTTP client asked for by the environment (DEFAULT_HTTP_CLIENT when unset)."""
    name = os.environ.get(HTTP_CLIENT_VARIABLE, "").strip().lower() or DEFAULT_HTTP_CLIENT
    if name not in HTTP_CLIENTS:
        raise ModelConfigError(f"{HTTP_CLIENT_VARIABLE}={name[:40]!r}: choose one of {', '.join(HTTP_CLIENTS)}")
    return name


def sdk_http_client(sdk: Any) -> Any | None:
    """The `http_client` for an SDK client (the `openai` or `anthropic` module): None for the SDK's default."""
    if http_client_name() == "httpx":
        return None
    try:  # a dependency; missing only in an environment assembled by hand
        import aiohttp  # noqa: F401  # the SDKs' aiohttp client needs it installed
    except ImportError:
        raise ModelConfigError(
            "the aiohttp HTTP client needs aiohttp (pip install 'openai[aiohttp]'); "
            f"or set {HTTP_CLIENT_VARIABLE}=httpx"
        ) from None
    return sdk.DefaultAioHttpClient()
