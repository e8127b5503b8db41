"""OpenAI's Batch API for `--batch`: a JSONL file of /v1/chat/completions requests (Files API, purpose "batch"),
one batch over it (`batches.create`, 24 h window), polled with `batches.retrieve`, answers read from its output and
error files (`files.content`). Through the official SDK and the backend's own client, so a base URL's credentials
and headers apply as on the live path.

Limits (OpenAI's Batch API guide, https://platform.openai.com/docs/guides/batch, "Rate limits"): a batch holds at
most 50,000 requests and its input file at most 200 MB.

The output and error files are streamed and read line by line within the batch's ResultFileBounds; each line
becomes a ResultLine (engine/batch.py sorts them with models/batching.sort_results).
"""

import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar
from urllib.parse import urlsplit

from empathybench.errors import BackendUnavailableError
from empathybench.models.base import (
    ChatRequest,
    RequestRejectedError,
    TransientBackendError,
)
from empathybench.models.batching import (
    BatchLimits,
    BatchStatus,
    EntryFailure,
    EntryOutcome,
    ResultLine,
    result_object,
)
from empathybench.models.openai_backend import OpenAIBackend, _to_response
from empathybench.models.reply_bounds import FileLine, ReadCounter, ResultFileBounds, bounded_lines
from empathybench.models.sdk_errors import mapped_call
from empathybench.redaction import redact

OPENAI_BATCH_LIMITS = BatchLimits(max_requests=50_000, max_bytes=200 * 1024 * 1024)
CHAT_ENDPOINT = "/v1/chat/completions"
# OpenAI's batch statuses, in the progress display's words.
_STATES = {
    "validating": "validating",
    "in_progress": "in_progress",
    "finalizing": "finalizing",
    "cancelling": "finalizing",
    "completed": "ended",
    "failed": "ended",
    "expired": "ended",
    "cancelled": "ended",
}
# A result line's error code that says the request never ran (retried in the next batch).
_NOT_RUN = {"batch_expired": "expired", "batch_cancelled": "cancelled"}
MAX_MESSAGE_CHARS = 300

T = TypeVar("T")


class OpenAIBatchClient:
    provider = "openai"
    limits = OPENAI_BATCH_LIMITS

    def __init__(self, backend: OpenAIBackend) -> None:
        self.backend = backend

    def entry(self, custom_id: str, request: ChatRequest) -> dict[str, Any]:
        body = self.backend.request_body(request)  # the live request's body, byte for byte
        return {"custom_id": custom_id, "method": "POST", "url": CHAT_ENDPOINT, "body": body}

    def reply_limit(self, request: ChatRequest) -> int:
        return self.backend.reply_limit(request)

    async def submit(self, entries: Sequence[dict[str, Any]]) -> str:
        client = self.backend._get_client()
        content = "".join(json.dumps(e, ensure_ascii=False, separators=(",", ":")) + "\n" for e in entries)
        uploaded = await self._call(
            lambda: client.files.create(
                file=("empathybench-batch.jsonl", content.encode("utf-8"), "application/jsonl"), purpose="batch"
            )
        )
        batch = await self._call(
            lambda: client.batches.create(
                input_file_id=uploaded.id,
                endpoint=CHAT_ENDPOINT,
                completion_window="24h",
                metadata={"created_by": "empathybench"},
            )
        )
        return str(batch.id)

    async def poll(self, batch_id: str) -> BatchStatus:
        client = self.backend._get_client()
        batch = await self._call(lambda: client.batches.retrieve(batch_id), lost=True)
        counts = getattr(batch, "request_counts", None)
        status = str(getattr(batch, "status", "") or "")
        failure = None
        if status == "failed":  # the input file did not validate: sending it again would fail the same way
            errors = getattr(getattr(batch, "errors", None), "data", None) or []
            messages = [str(getattr(e, "message", None) or getattr(e, "code", None) or "error") for e in errors]
            failure = redact("; ".join(messages[:3]) or "the batch failed")[:MAX_MESSAGE_CHARS]
        return BatchStatus(
            state=_STATES.get(status, "in_progress"),
            raw_status=status[:40],
            failure=failure,
            counts={name: int(getattr(counts, name, 0) or 0) for name in ("total", "completed", "failed") if counts},
        )

    async def results(self, batch_id: str, bounds: ResultFileBounds) -> list[ResultLine]:
        client = self.backend._get_client()
        batch = await self._call(lambda: client.batches.retrieve(batch_id), lost=True)
        counter = ReadCounter(bounds, urlsplit(self.backend.base_url).hostname or "the server")
        lines: list[ResultLine] = []
        for label, file_id in (
            ("output file", getattr(batch, "output_file_id", None)),
            ("error file", getattr(batch, "error_file_id", None)),
        ):
            if not file_id or counter.read > bounds.max_total_bytes:
                continue

            async def read(label: str = label, file_id: str = file_id) -> list[ResultLine]:
                found: list[ResultLine] = []
                async with client.files.with_streaming_response.content(file_id) as response:
                    async for line in bounded_lines(response.iter_bytes(), counter):
                        found.append(result_line(label, line))
                return found

            lines += await self._call(read)
        return lines

    async def _call(self, make: Callable[[], Awaitable[T]], *, lost: bool = False) -> T:
        """One SDK call with the live path's error mapping; `lost`: a 404 means the batch is gone (rejected)."""
        where = self.backend.base_url
        not_found = (
            RequestRejectedError(404, "batch not found (HTTP 404)")
            if lost
            else BackendUnavailableError(f"{where} has no Files/Batches API (HTTP 404); run without --batch")
        )
        return await mapped_call(
            self.backend._openai,
            make,
            where=where,
            not_found=not_found,
            key_name=self.backend.key_name,
            cut_off="reading a result file failed",
            message_chars=MAX_MESSAGE_CHARS,
        )


def result_line(label: str, line: FileLine) -> ResultLine:
    """One line of an output or error file (`label`) as a ResultLine: its request and outcome, or its problem."""
    where = f"{label} line {line.number}"
    data = result_object(where, line)
    if isinstance(data, ResultLine):
        return data
    custom_id = data["custom_id"]
    error = data.get("error")
    response = data.get("response")
    if isinstance(error, dict):
        code = str(error.get("code") or "")
        message = redact(str(error.get("message") or code or "error"))[:MAX_MESSAGE_CHARS]
        kind = _NOT_RUN.get(code, "failed")
        return ResultLine(where, custom_id, EntryFailure(kind, f"{code}: {message}" if code else message, True))
    if not isinstance(response, dict):
        failure = EntryFailure("malformed", "result line without response or error", retryable=True)
        return ResultLine(where, custom_id, failure, "neither a response nor an error")
    status = response.get("status_code")
    body = response.get("body")
    if status == 200 and not isinstance(body, dict):
        failure = EntryFailure("malformed", "status 200 without a body", retryable=True)
        return ResultLine(where, custom_id, failure, "status 200 without an answer")
    if status != 200 or not isinstance(body, dict):
        detail = body.get("error") if isinstance(body, dict) else None
        message = detail.get("message") if isinstance(detail, dict) else None
        text = redact(f"HTTP {status}: {message or 'no answer'}")[:MAX_MESSAGE_CHARS]
        retryable = not isinstance(status, int) or status >= 500 or status in (408, 429)
        return ResultLine(where, custom_id, EntryFailure("failed" if retryable else "rejected", text, retryable))
    outcome = to_chat_response(body)
    if isinstance(outcome, EntryFailure):  # status 200 without a completion: something else stands for the body
        problem = "an error object where the answer belongs" if "error" in body else f"no answer ({outcome.message})"
        return ResultLine(where, custom_id, EntryFailure("malformed", outcome.message, True), problem)
    return ResultLine(where, custom_id, outcome)


def to_chat_response(body: dict[str, Any]) -> EntryOutcome:
    """A chat completion body of a result line, parsed exactly as a live reply is."""
    try:
        return _to_response(body)
    except TransientBackendError as exc:
        return EntryFailure("failed", str(exc), retryable=True)
    except (TypeError, ValueError, AttributeError) as exc:  # a body no parser expected: as a malformed reply
        return EntryFailure("failed", redact(f"malformed result body: {exc}")[:MAX_MESSAGE_CHARS], retryable=True)
