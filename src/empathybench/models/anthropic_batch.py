"""Anthropic's Message Batches API for `--batch`: `messages.batches.create` with one `params` per request (the
live path's `messages.create` arguments, so model arguments, extended thinking and the API version header apply
as live), polled with `retrieve` until `processing_status` is "ended", answers read with `results` (JSONL, one
`succeeded` / `errored` / `canceled` / `expired` result per custom_id). Through the official SDK and the backend's
own client.

Limits (Anthropic's batch processing guide, https://docs.claude.com/en/docs/build-with-claude/batch-processing,
"Batch limitations"): at most 100,000 Message requests or 256 MB per batch, whichever is reached first.

The results file is streamed and read line by line within the batch's ResultFileBounds (not with the SDK's JSONL
decoder, which stops at the first line it cannot parse); each line becomes a ResultLine (engine/batch.py sorts
them with models/batching.sort_results).
"""

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar
from urllib.parse import urlsplit

from empathybench.errors import BackendUnavailableError
from empathybench.models.anthropic_backend import AnthropicBackend, _field, _to_response, error_message
from empathybench.models.base import ChatRequest, RequestRejectedError, TransientBackendError
from empathybench.models.batching import (
    BatchLimits,
    BatchStatus,
    EntryFailure,
    EntryOutcome,
    ResultLine,
    result_object,
)
from empathybench.models.reply_bounds import FileLine, ReadCounter, ResultFileBounds, bounded_lines
from empathybench.models.sdk_errors import mapped_call
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

    def reply_limit(self, request: ChatRequest) -> int:
        return self.backend.reply_limit(request)

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

    async def results(self, batch_id: str, bounds: ResultFileBounds) -> list[ResultLine]:
        client = self.backend._get_client()
        # The SDK's results(): the batch's results_url, asked for as a stream (handed over unread by the client).
        decoder = await self._call(lambda: client.messages.batches.results(batch_id), lost=True)
        counter = ReadCounter(bounds, urlsplit(self.backend.base_url).hostname or "the server")

        async def read() -> list[ResultLine]:
            try:
                return [result_line(line) async for line in bounded_lines(decoder.http_response.aiter_bytes(), counter)]
            finally:
                await decoder.http_response.aclose()

        return await self._call(read)

    async def _call(self, make: Callable[[], Awaitable[T]], *, lost: bool = False) -> T:
        """One SDK call with the live path's error mapping; `lost`: a 404 means the batch is gone (rejected)."""
        not_found = (
            RequestRejectedError(404, "batch not found (HTTP 404)")
            if lost
            else BackendUnavailableError(
                f"{self.backend.base_url} has no Message Batches API (HTTP 404); run without --batch"
            )
        )
        return await mapped_call(
            self.backend._anthropic,
            make,
            where=self.backend.where,
            not_found=not_found,
            key_name=self.backend.key_name,
            cut_off="reading the batch results failed",
            message=error_message,
            message_chars=MAX_MESSAGE_CHARS,
        )


def result_line(line: FileLine) -> ResultLine:
    """One line of the results file as a ResultLine: its request and outcome, or its problem."""
    where = f"results line {line.number}"
    data = result_object(where, line)
    if isinstance(data, ResultLine):
        return data
    result = data.get("result")
    outcome = _outcome(result)
    if isinstance(outcome, EntryFailure) and outcome.kind == "malformed":
        kind = _field(result, "type")
        problem = (
            "an error object where the answer belongs"
            if kind == "error" or _field(_field(result, "message"), "type") == "error"
            else f"no answer ({outcome.message})"
        )
        return ResultLine(where, data["custom_id"], outcome, problem)
    return ResultLine(where, data["custom_id"], outcome)


def _outcome(result: Any) -> EntryOutcome:
    """One result of the results file (a JSON object) as a reply (parsed as a live reply is) or a failure."""
    kind = _field(result, "type")
    if kind == "succeeded":
        try:
            return _to_response(_field(result, "message"))
        except TransientBackendError as exc:
            return EntryFailure("malformed", str(exc), retryable=True)
    if kind in ("expired", "canceled"):
        return EntryFailure("expired" if kind == "expired" else "cancelled", f"request {kind}", retryable=True)
    if kind == "errored":
        error = _field(_field(result, "error"), "error")
        error_type = str(_field(error, "type") or "")
        message = redact(f"{error_type}: {_field(error, 'message') or ''}")[:MAX_MESSAGE_CHARS]
        retryable = error_type in _RETRYABLE_ERRORS
        return EntryFailure("failed" if retryable else "rejected", message, retryable=retryable)
    return EntryFailure("malformed", "result of unknown type", retryable=True)
