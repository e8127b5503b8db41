"""The Message Batches endpoints of the fake Anthropic server (`FakeAnthropicServer.batches`), as the API behaves:

- `POST /v1/messages/batches` `{"requests": [{"custom_id", "params"}]}` (custom_id 1-64 of [A-Za-z0-9_-], unique)
  creates a batch, `processing_status` "in_progress", with `request_counts`;
- each `GET /v1/messages/batches/{id}` counts one poll; the second poll finds it "ended" with a `results_url`
  (`hold` keeps it "in_progress" until cleared); `POST .../{id}/cancel` ends it with its entries "canceled";
- `GET .../{id}/results` is JSONL, one `{"custom_id", "result": {"type": "succeeded", "message"} | {"type":
  "errored", "error": {"type": "error", "error": {"type", "message"}}} | {"type": "expired"} | {"type":
  "canceled"}}` per request; each params is answered as `POST /v1/messages` answers it under the create request's
  anthropic-version (the same 400s, as errored `invalid_request_error` results).

Knobs: `hold`, `error_next_entries(n)` (api_error results), `expire_next_entries(n)` (expired results),
`alter_results(kind, entry, batches)` (the results file of the next batches altered: fake_batch_results.py; a file
of 1 MB or more is downloaded gzip-compressed when the client accepts it). Counters:
`batches_created`, `retrieves`, `entries_answered`; none of it is recorded in the server's `requests`.
"""

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from empathybench.testing.fake_batch_results import ResultAlterations, anthropic_format, render_results, send_file

# The server and its request handler are typed Any: importing their module here would make an import circle.

_CUSTOM_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
POLLS_TO_END = 2


@dataclass
class _Batch:
    id: str
    requests: list[dict[str, Any]]
    version: str
    created_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat())
    polls: int = 0
    ended: bool = False
    cancelled: bool = False
    results: list[dict[str, Any]] = field(default_factory=list)
    results_file: bytes = b""  # the results as served (altered when asked to)

    def as_dict(self, base_url: str) -> dict[str, Any]:
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        if self.ended:
            for line in self.results:
                counts[line["result"]["type"]] += 1
        else:
            counts["processing"] = len(self.requests)
        created = datetime.fromisoformat(self.created_at)
        return {
            "id": self.id,
            "type": "message_batch",
            "processing_status": "ended" if self.ended else "in_progress",
            "request_counts": counts,
            "created_at": self.created_at,
            "expires_at": (created + timedelta(hours=24)).isoformat(),
            "ended_at": datetime.now(UTC).isoformat() if self.ended else None,
            "archived_at": None,
            "cancel_initiated_at": self.created_at if self.cancelled else None,
            "results_url": f"{base_url}/v1/messages/batches/{self.id}/results" if self.ended else None,
        }


class FakeMessageBatches:
    def __init__(self, server: Any, error_body: Callable[[int, str, int], dict[str, Any]]) -> None:
        self.server = server
        self._error_body = error_body
        self._lock = threading.Lock()
        self.batches: dict[str, _Batch] = {}
        self.hold = False
        self._error_entries = 0
        self._expire_entries = 0
        self.batches_created = 0
        self.retrieves = 0
        self.entries_answered = 0
        self.alterations = ResultAlterations()

    def alter_results(self, kind: str, entry: int = 0, batches: int | None = 1) -> None:
        """Alter the results file of the next `batches` batches (None: every one) at request `entry`'s line."""
        self.alterations.add(kind, entry, batches)

    def error_next_entries(self, n: int) -> None:
        with self._lock:
            self._error_entries += n

    def expire_next_entries(self, n: int) -> None:
        with self._lock:
            self._expire_entries += n

    def serve(self, handler: Any, method: str, raw: bytes) -> None:
        refused = self.server.refusal(handler, 0)
        if refused is not None:
            handler.send_json(*refused)
            return
        path = handler.path.split("?", 1)[0].rstrip("/")
        parts = path.split("/")  # "", "v1", "messages", "batches", [id, [action]]
        with self._lock:
            batch = self.batches.get(parts[4]) if len(parts) > 4 else None
            if method == "POST" and len(parts) == 4:
                status, payload = self._create(raw, handler.headers["anthropic-version"])
            elif batch is None:
                status, payload = 404, self._error_body(404, f"Not found: {method} {path}", 0)
            elif method == "POST" and len(parts) == 6 and parts[5] == "cancel":
                if not batch.ended:
                    batch.cancelled = True
                    self._end(batch)
                status, payload = 200, batch.as_dict(self.server.base_url)
            elif method == "GET" and len(parts) == 5:
                self.retrieves += 1
                batch.polls += 1
                if not batch.ended and not self.hold and batch.polls >= POLLS_TO_END:
                    self._end(batch)
                status, payload = 200, batch.as_dict(self.server.base_url)
            elif method == "GET" and len(parts) == 6 and parts[5] == "results" and batch.ended:
                send_file(handler, batch.results_file, "application/binary")
                return
            else:
                status, payload = 404, self._error_body(404, f"Not found: {method} {path}", 0)
        handler.send_json(status, payload)

    def _create(self, raw: bytes, version: str) -> tuple[int, Any]:
        try:
            body = json.loads(raw)
        except ValueError:
            return 400, self._error_body(400, "body must be JSON", 0)
        requests = body.get("requests") if isinstance(body, dict) else None
        if not isinstance(requests, list) or not requests:
            return 400, self._error_body(400, "requests: Field required (a non-empty list)", 0)
        seen: set[str] = set()
        for number, request in enumerate(requests):
            custom_id = request.get("custom_id") if isinstance(request, dict) else None
            if not isinstance(custom_id, str) or not _CUSTOM_ID.match(custom_id):
                return 400, self._error_body(400, f"requests.{number}.custom_id: String should match pattern", 0)
            if custom_id in seen:
                return 400, self._error_body(400, f"requests.{number}.custom_id: duplicate custom_id {custom_id}", 0)
            if not isinstance(request.get("params"), dict):
                return 400, self._error_body(400, f"requests.{number}.params: Field required", 0)
            seen.add(custom_id)
        self.batches_created += 1
        batch = _Batch(f"msgbatch_fake_{self.batches_created}", requests, version)
        self.batches[batch.id] = batch
        return 200, batch.as_dict(self.server.base_url)

    def _end(self, batch: _Batch) -> None:
        batch.ended = True
        for number, request in enumerate(batch.requests):
            result: dict[str, Any]
            if batch.cancelled:
                result = {"type": "canceled"}
            elif self._expire_entries > 0:
                self._expire_entries -= 1
                result = {"type": "expired"}
            elif self._error_entries > 0:
                self._error_entries -= 1
                result = {"type": "errored", "error": self._error_body(500, "fake api_error in batch", number)}
            else:
                result = self._answer(request["params"], batch.version, number)
            batch.results.append({"custom_id": request["custom_id"], "result": result})
        altered = self.alterations.take([request["custom_id"] for request in batch.requests])
        batch.results_file = render_results(batch.results, altered, anthropic_format(), self.alterations.bomb_bytes)

    def _answer(self, params: dict[str, Any], version: str, number: int) -> dict[str, Any]:
        server = self.server
        problem = server._invalid(params, version)
        if problem is not None:
            return {"type": "errored", "error": self._error_body(400, problem, number)}
        try:
            text = server.answer(params)
        except Exception as exc:
            return {"type": "errored", "error": self._error_body(500, f"fake server error: {exc}", number)}
        thinking = server.thinking_text(params) if isinstance(params.get("thinking"), dict) else None
        self.entries_answered += 1
        return {"type": "succeeded", "message": server._message(number, params, text, "", thinking)}
