"""The HTTP client under the official SDKs: one of the SDKs' own, never a hand-made one.

`httpx` (the default) is the SDKs' own default client (httpx2 with their timeouts, connection limits, proxies from
the environment, TLS verification against the system's authorities or `SSL_CERT_FILE`). `aiohttp` is their
`DefaultAioHttpClient` (the extra `aiohttp`): less CPU per call (bench/results/http_clients.md), but it reports
refused and dropped connections as timeouts (read back by `connection_failure`) and it is the less travelled path,
so it is a choice, not the default. Either way the SDK builds every request itself: headers, auth, idempotency
keys, retry counters. The choice is `EMPATHYBENCH_HTTP_CLIENT`.
"""

import os
from typing import Any

from empathybench.errors import ModelConfigError

HTTP_CLIENTS = ("httpx", "aiohttp")
DEFAULT_HTTP_CLIENT = "httpx"
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
    try:
        import aiohttp  # noqa: F401  # the SDKs' aiohttp client needs it installed
    except ImportError:
        raise ModelConfigError(
            f"{HTTP_CLIENT_VARIABLE}=aiohttp needs the aiohttp extra: pip install 'empathybench[aiohttp]'"
        ) from None
    return sdk.DefaultAioHttpClient()


def connection_failure(exc: BaseException) -> bool:
    """Whether an SDK error reported as a timeout was a failure to connect or a dropped connection: the SDKs' aiohttp
    client reports those as timeouts, which would hide an unreachable server (the engine stops early for those)."""
    try:
        import aiohttp
    except ImportError:  # pragma: no cover - a dependency
        return False
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        if isinstance(link, aiohttp.ServerTimeoutError | TimeoutError):
            return False
        if isinstance(link, aiohttp.ClientConnectionError | ConnectionError):
            return True
        link = link.__cause__ or link.__context__
    return False
