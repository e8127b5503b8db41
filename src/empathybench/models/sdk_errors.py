"""The engine's error for a failed call through an official SDK (`openai` or `anthropic`).

Both SDKs are generated from one template: their exception classes have the same names and meanings (status errors
by HTTP status, timeouts, connection failures, bodies that failed validation), so one mapping serves both. What
differs, how an error body states its message, is the caller's `message` function.
"""

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from empathybench.errors import BackendUnavailableError
from empathybench.models.base import RequestRejectedError, TransientBackendError, parse_retry_after
from empathybench.models.http_clients import connection_failure
from empathybench.models.reply_bounds import refused_reply
from empathybench.redaction import redact

T = TypeVar("T")


def sdk_message(exc: Any) -> str:
    """The SDK's own message of an error."""
    return str(getattr(exc, "message", exc))


def sdk_failures(sdk: Any) -> tuple[type[Exception], ...]:
    """The exceptions of an SDK call that `engine_error` maps (HTTP status errors, timeouts, dropped connections,
    bodies the SDK or we could not read)."""
    return (sdk.APIStatusError, sdk.APIConnectionError, sdk.APIResponseValidationError, ValueError)


def engine_error(
    sdk: Any,
    exc: Exception,
    *,
    where: str,
    not_found: Exception,
    key_name: str,
    message: Callable[[Any], str] = sdk_message,
    message_chars: int | None = None,
) -> Exception:
    """The engine's error for a failed call to `where` (one of `sdk_failures(sdk)`): 429 and 5xx/408 (529 is
    Anthropic's "overloaded") retried with Retry-After, a refused key stops the run naming `key_name`, 404 is
    `not_found`, other 4xx reject the request (`message(exc)` cut at `message_chars`), timeouts, dropped
    connections and unreadable bodies retried; a reply past its size limit is that refusal (retried as a server
    fault)."""
    refused = refused_reply(exc)
    if refused is not None:
        return refused
    if isinstance(exc, sdk.RateLimitError):
        retry_after = parse_retry_after(exc.response.headers.get("retry-after"))
        return TransientBackendError("rate_limited", redact(f"HTTP 429: {message(exc)}")[:300], retry_after)
    if isinstance(exc, sdk.AuthenticationError | sdk.PermissionDeniedError):
        return BackendUnavailableError(f"{where} refused the API key (HTTP {exc.status_code}); check {key_name}")
    if isinstance(exc, sdk.NotFoundError):
        return not_found
    if isinstance(exc, sdk.APIStatusError):
        status = exc.status_code
        if status >= 500 or status == 408:
            retry_after = parse_retry_after(exc.response.headers.get("retry-after"))
            return TransientBackendError("server_error", f"HTTP {status}", retry_after)
        return RequestRejectedError(status, redact(f"HTTP {status}: {message(exc)}")[:message_chars])
    if isinstance(exc, sdk.APITimeoutError) and not connection_failure(exc):  # before APIConnectionError
        return TransientBackendError("timeout", "request timed out")
    if isinstance(exc, sdk.APIConnectionError):
        return TransientBackendError("connection", redact(f"connection failed: {exc.__cause__ or exc}"))
    return TransientBackendError("malformed", redact(f"malformed response body: {exc}"))


async def mapped_call(
    sdk: Any,
    make: Callable[[], Awaitable[T]],
    *,
    where: str,
    not_found: Exception,
    key_name: str,
    cut_off: str,
    message: Callable[[Any], str] = sdk_message,
    message_chars: int | None = None,
) -> T:
    """`await make()` (a call of the batch APIs) with its failures as the engine's: a streamed read the network cut
    off (the HTTP library's own error, which the SDK does not map) as a retried connection failure, "`cut_off`: ...",
    and the SDK's failures as `engine_error` maps them."""
    import httpx2  # the SDKs' HTTP library, loaded with them

    try:
        return await make()
    except httpx2.HTTPError as exc:
        raise TransientBackendError("connection", redact(f"{cut_off}: {exc}")) from exc
    except sdk_failures(sdk) as exc:
        raise engine_error(
            sdk,
            exc,
            where=where,
            not_found=not_found,
            key_name=key_name,
            message=message,
            message_chars=message_chars,
        ) from exc
