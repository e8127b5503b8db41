"""Anthropic's Message Batches API for `--batch`: `messages.batches.create` with one `params` per request (the
live path's `messages.create` arguments, so model arguments, extended thinking and the API version header apply
as live), polled with `retrieve` until `processing_status` is "ended", answers read with `results` (JSONL, one
`succeeded` / `errored` / `canceled` / `expired` result per custom_id). Through the official SDK and the backend's
own client.

Limits (Anthropic's batch processing guide, https://docs.claude.com/en/docs/build-with-claude/batch-processing,
"Batch limitations"): at most 100,000 Message requests or 256 MB per batch, whichever is reached first.
"""

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from empathybench.errors import BackendUnavailableError
from empathybench.models.anthropic_backend import AnthropicBackend, _to_response, engine_error, sdk_failures
from empathybench.models.base import ChatRequest, RequestRejectedError, TransientBackendError
from empathybench.models.batching import BatchLimits, BatchStatus, EntryFailure, EntryOutcome
from empathybench.redaction import redact

ANTHROPIC_BATCH_LIMITS = BatchLimits(max_requests=100_000, max_bytes=256 * 1024 * 1024)
# Error types of an errored result that say "try again" rather than "this request is wrong".
_RETRYABLE_ERRORS = frozenset({"api_error", "overloaded_error", "rate_limit_error", "timeout_error"})
MAX_MESSAGE_CHARS = 300

T = TypeVar("T")


class AnthropicBatchClient:
    provider = "anthropic"
    limits = ANTHROPIC_BATCH_LIMITS

    def __init__(self, backend: AnthropicBackend) -> None:
        self.backend = backend

    def entry(self, custom_id: str, request: ChatRequest) -> dict[str, Any]:
        params = self.backend.request_arguments(request)
        params.update(params.pop("extra_body", {}))  # what the SDK would merge into the live request's body
        return {"custom_id": custom_id, "params": params}

    async def submit(self, entries: Sequence[dict[str, Any]]) -> str:
        client = self.backend._get_client()
        batch = await self._call(lambda: client.messages.batches.create(requests=list(entries)))
        return str(batch.id)

    async def poll(self, batch_id: str) -> BatchStatus:
        client = self.backend._get_client()
        batch = await self._call(lambda: client.messages.batches.retrieve(batch_id), lost=True)
        status = str(getattr(batch, "processing_status", "") or "")
        counts = getattr(batch, "request_counts", None)
        names = ("processing", "succeeded", "errored", "canceled", "expired")
        return BatchStatus(
            state="ended" if status == "ended" else ("finalizing" if status == "canceling" else "in_progress"),
            raw_status=status[:40],
            counts={name: int(getattr(counts, name, 0) or 0) for name in names} if counts else {},
        )

    async def results(self, batch_id: str) -> dict[str, EntryOutcome]:
        client = self.backend._get_client()
        decoder = await self._call(lambda: client.messages.batches.results(batch_id), lost=True)
        outcomes: dict[str, EntryOutcome] = {}
        try:
            async for line in decoder:
                custom_id = getattr(line, "custom_id", None)
                if isinstance(custom_id, str):
                    outcomes[custom_id] = _outcome(getattr(line, "result", None))
        except ValueError as exc:  # a results file cut short: what was read counts, the rest is retried
            raise TransientBackendError("malformed", redact(f"malformed batch results: {exc}")) from exc
        return outcomes

    async def _call(self, make: Callable[[], Awaitable[T]], *, lost: bool = False) -> T:
        """One SDK call with the live path's error mapping; `lost`: a 404 means the batch is gone (rejected)."""
        anthropic = self.backend._anthropic
        try:
            return await make()
        except sdk_failures(anthropic) as exc:
            not_found = (
                RequestRejectedError(404, "batch not found (HTTP 404)")
                if lost
                else BackendUnavailableError(
                    f"{self.backend.base_url} has no Message Batches API (HTTP 404); run without --batch"
                )
            )
            where, chars = self.backend.where, MAX_MESSAGE_CHARS
            raise engine_error(
                anthropic, exc, where=where, not_found=not_found, message_chars=chars, key_name=self.backend.key_name
            ) from exc


def _outcome(result: Any) -> EntryOutcome:
    """One result of the results file as a reply (parsed as a live reply is) or a failure."""
    kind = getattr(result, "type", None)
    if kind == "succeeded":
        try:
            return _to_response(getattr(result, "message", None))
        except TransientBackendError as exc:
            return EntryFailure("failed", str(exc), retryable=True)
    if kind in ("expired", "canceled"):
        return EntryFailure("expired" if kind == "expired" else "cancelled", f"request {kind}", retryable=True)
    if kind == "errored":
        error = getattr(getattr(result, "error", None), "error", None)
        error_type = str(getattr(error, "type", "") or "")
        message = redact(f"{error_type}: {getattr(error, 'message', '')}")[:MAX_MESSAGE_CHARS]
        retryable = error_type in _RETRYABLE_ERRORS
        return EntryFailure("failed" if retryable else "rejected", message, retryable=retryable)
    return EntryFailure("failed", "result of unknown type", retryable=True)
