"""The Files and Batches endpoints of the fake OpenAI server (`FakeOpenAIServer.batches`), as the real API behaves:

- `POST /v1/files` (multipart: `purpose`, `file`) stores a file; `GET /v1/files/{id}/content` returns its bytes;
- `POST /v1/batches` (`input_file_id`, `endpoint` "/v1/chat/completions", `completion_window` "24h") creates a batch
  in status "validating"; each `GET /v1/batches/{id}` moves it one step on: validating -> in_progress -> finalizing
  -> completed (or "expired"); `POST /v1/batches/{id}/cancel` makes it "cancelling", then "cancelled";
- when it completes, each input line is answered as the chat endpoint answers it (the same answer function, the
  same reasoning-model 400s), in the output file `{"id", "custom_id", "response": {"status_code", "request_id",
  "body"}, "error": null}`; failed lines go to the error file; lines a batch never ran (expired, cancelled) go to
  the error file with `"response": null, "error": {"code": "batch_expired" | "batch_cancelled", "message"}`.

Knobs for tests: `hold` keeps batches in "in_progress" until cleared; `invalidate_next_batches(n)` fails the
validation of the next n batches (status "failed" with `errors`); `fail_next_entries(n)` answers the next n lines
500 (error file); `expire_next_batches(n)` makes the next n batches expire with only their first half answered;
`alter_results(kind, entry, batches)` alters the output file of the next batches (fake_batch_results.py). A file
of 1 MB or more is downloaded gzip-compressed when the client accepts it.
Counters: `batches_created`, `files_uploaded`, `retrieves`, `entries_answered`. None of this counts as a
chat-completions request (`FakeOpenAIServer.requests_total`).
"""

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler
from typing import Any

from empathybench.testing.fake_batch_results import ResultAlterations, openai_format, render_results, send_file

# The server and its request handler are typed Any: importing their module here would make an import circle.

CHAT_ENDPOINT = "/v1/chat/completions"
STEPS = ("validating", "in_progress", "finalizing", "completed")


def _error(message: str, kind: str = "invalid_request_error", code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


@dataclass
class _File:
    id: str
    filename: str
    purpose: str
    content: bytes
    created_at: int = field(default_factory=lambda: int(time.time()))

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "file",
            "bytes": len(self.content),
            "created_at": self.created_at,
            "filename": self.filename,
            "purpose": self.purpose,
            "status": "processed",
        }


@dataclass
class _Batch:
    id: str
    input_file_id: str
    lines: list[dict[str, Any]]
    metadata: Any
    echo: str = ""  # credentials of the create request, repeated in the answers in echo mode
    status: str = "validating"
    expire: bool = False
    output_file_id: str | None = None
    error_file_id: str | None = None
    completed: int = 0
    failed: int = 0
    created_at: int = field(default_factory=lambda: int(time.time()))
    errors: list[dict[str, Any]] | None = None

    def as_dict(self) -> dict[str, Any]:
        now = int(time.time())
        return {
            "id": self.id,
            "object": "batch",
            "endpoint": CHAT_ENDPOINT,
            "errors": {"object": "list", "data": self.errors} if self.errors else None,
            "input_file_id": self.input_file_id,
            "completion_window": "24h",
            "status": self.status,
            "output_file_id": self.output_file_id,
            "error_file_id": self.error_file_id,
            "created_at": self.created_at,
            "in_progress_at": now if self.status != "validating" else None,
            "expires_at": self.created_at + 86400,
            "completed_at": now if self.status == "completed" else None,
            "expired_at": now if self.status == "expired" else None,
            "cancelled_at": now if self.status == "cancelled" else None,
            "request_counts": {"total": len(self.lines), "completed": self.completed, "failed": self.failed},
            "metadata": self.metadata,
        }


class FakeOpenAIBatches:
    def __init__(
        self,
        server: Any,
        *,
        reasoning_rejection: Callable[[dict[str, Any]], dict[str, Any] | None],
        echo: Callable[[BaseHTTPRequestHandler], str],
    ) -> None:
        self.server = server
        self._reasoning_rejection = reasoning_rejection
        self._echo_of = echo
        self._lock = threading.Lock()
        self.files: dict[str, _File] = {}
        self.batches: dict[str, _Batch] = {}
        self.hold = False
        self._fail_entries = 0
        self._expire_batches = 0
        self._invalid_batches = 0
        self.files_uploaded = 0
        self.batches_created = 0
        self.retrieves = 0
        self.entries_answered = 0
        self.alterations = ResultAlterations()

    def alter_results(self, kind: str, entry: int = 0, batches: int | None = 1) -> None:
        """Alter the output file of the next `batches` batches (None: every one) at request `entry`'s line."""
        self.alterations.add(kind, entry, batches)

    def fail_next_entries(self, n: int) -> None:
        with self._lock:
            self._fail_entries += n

    def invalidate_next_batches(self, n: int) -> None:
        """The next n batches fail validation (status "failed" with `errors`), as a malformed input file does."""
        with self._lock:
            self._invalid_batches += n

    def expire_next_batches(self, n: int) -> None:
        with self._lock:
            self._expire_batches += n

    # --- routes ----------------------------------------------------------------------------------------

    def serve_post(self, handler: Any, path: str, raw: bytes) -> None:
        if path == "/v1/files":
            status, payload = self._upload(handler, raw)
        elif path == "/v1/batches":
            status, payload = self._create(raw, self._echo(handler))
        elif path.startswith("/v1/batches/") and path.endswith("/cancel"):
            status, payload = self._cancel(path.split("/")[3])
        else:
            status, payload = 404, _error(f"no route POST {path}", "not_found_error")
        handler.send_json(status, payload)

    def serve_get(self, handler: Any, path: str) -> None:
        parts = path.split("/")  # "", "v1", "files"|"batches", id, ["content"]
        with self._lock:
            if parts[2] == "files" and len(parts) == 5 and parts[4] == "content" and parts[3] in self.files:
                send_file(handler, self.files[parts[3]].content, "application/octet-stream")
                return
            if parts[2] == "files" and len(parts) == 4 and parts[3] in self.files:
                handler.send_json(200, self.files[parts[3]].as_dict())
                return
            if parts[2] == "batches" and len(parts) == 4 and parts[3] in self.batches:
                self.retrieves += 1
                batch = self.batches[parts[3]]
                self._advance(batch)
                handler.send_json(200, batch.as_dict())
                return
        handler.send_json(404, _error(f"No such object: {parts[-1]}", "invalid_request_error"))

    # --- behaviour -------------------------------------------------------------------------------------

    def _upload(self, handler: Any, raw: bytes) -> tuple[int, Any]:
        content_type = handler.headers.get("Content-Type") or ""
        if not content_type.startswith("multipart/form-data"):
            return 400, _error("files must be uploaded as multipart/form-data")
        message = BytesParser(policy=HTTP).parsebytes(b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + raw)
        fields: dict[str, tuple[str | None, bytes]] = {}
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            if isinstance(name, str):
                fields[name] = (part.get_filename(), part.get_payload(decode=True) or b"")
        if "file" not in fields or "purpose" not in fields:
            return 400, _error("'file' and 'purpose' are required")
        purpose = fields["purpose"][1].decode("utf-8", "replace")
        if purpose != "batch":
            return 400, _error(f"purpose {purpose!r} is not supported by this fake")
        with self._lock:
            self.files_uploaded += 1
            name, content = fields["file"]
            stored = _File(f"file-fake-{self.files_uploaded}", name or "upload", purpose, content)
            self.files[stored.id] = stored
        return 200, stored.as_dict()

    def _echo(self, handler: Any) -> str:
        """The credentials a careless server repeats in its answers (echo mode), as the chat endpoint does."""
        return self._echo_of(handler) if self.server.echo_auth else ""

    def _create(self, raw: bytes, echo: str = "") -> tuple[int, Any]:
        try:
            body = json.loads(raw)
        except ValueError:
            return 400, _error("body must be JSON")
        if not isinstance(body, dict):
            return 400, _error("body must be a JSON object")
        if body.get("endpoint") != CHAT_ENDPOINT:
            return 400, _error(f"endpoint must be {CHAT_ENDPOINT} in this fake", code="invalid_value")
        if body.get("completion_window") != "24h":
            return 400, _error("completion_window must be 24h", code="invalid_value")
        with self._lock:
            stored = self.files.get(str(body.get("input_file_id")))
            if stored is None:
                return 404, _error(f"No such File object: {body.get('input_file_id')}")
            lines: list[dict[str, Any]] = []
            errors: list[dict[str, Any]] = []
            seen: set[str] = set()
            for number, line in enumerate(stored.content.decode("utf-8", "replace").splitlines(), start=1):
                try:
                    entry = json.loads(line)
                except ValueError:
                    errors.append({"code": "invalid_json_line", "line": number, "message": "not JSON"})
                    continue
                custom_id = entry.get("custom_id") if isinstance(entry, dict) else None
                if not isinstance(custom_id, str) or entry.get("url") != CHAT_ENDPOINT or entry.get("method") != "POST":
                    errors.append({"code": "invalid_request", "line": number, "message": "bad line"})
                elif custom_id in seen:
                    errors.append({"code": "duplicate_custom_id", "line": number, "message": "duplicate custom_id"})
                else:
                    seen.add(custom_id)
                    lines.append(entry)
            self.batches_created += 1
            batch = _Batch(f"batch_fake_{self.batches_created}", stored.id, lines, body.get("metadata"), echo=echo)
            if not errors and self._invalid_batches > 0:
                self._invalid_batches -= 1
                errors.append({"code": "invalid_request", "line": 1, "message": "fake validation failure"})
            if errors:
                batch.status, batch.errors = "failed", errors
            elif self._expire_batches > 0:
                self._expire_batches -= 1
                batch.expire = True
            self.batches[batch.id] = batch
        return 200, batch.as_dict()

    def _cancel(self, batch_id: str) -> tuple[int, Any]:
        with self._lock:
            batch = self.batches.get(batch_id)
            if batch is None:
                return 404, _error(f"No such Batch object: {batch_id}")
            if batch.status in ("validating", "in_progress", "finalizing"):
                batch.status = "cancelling"
            return 200, batch.as_dict()

    def _advance(self, batch: _Batch) -> None:
        """One step of the lifecycle per retrieve (under the lock)."""
        if batch.status == "cancelling":
            self._finish(batch, "cancelled", answered=0)
        elif batch.status in STEPS[:-1]:
            if self.hold and batch.status == "in_progress":
                return
            following = STEPS[STEPS.index(batch.status) + 1]
            if following == "completed":
                if batch.expire:
                    self._finish(batch, "expired", answered=(len(batch.lines) + 1) // 2)
                else:
                    self._finish(batch, "completed", answered=len(batch.lines))
            else:
                batch.status = following

    def _finish(self, batch: _Batch, status: str, *, answered: int) -> None:
        output: list[dict[str, Any]] = []
        failures: list[dict[str, Any]] = []
        for number, entry in enumerate(batch.lines):
            custom_id = entry["custom_id"]
            line_id = f"batch_req_fake_{batch.id}_{number}"
            if number >= answered:
                code = "batch_expired" if status == "expired" else "batch_cancelled"
                message = "This request could not be executed before the completion window expired."
                error = {"code": code, "message": message if status == "expired" else "The batch was cancelled."}
                failures.append({"id": line_id, "custom_id": custom_id, "response": None, "error": error})
                batch.failed += 1
                continue
            code, body = self._answer(entry.get("body"), number, batch.echo)
            line = {
                "id": line_id,
                "custom_id": custom_id,
                "response": {"status_code": code, "request_id": f"req_fake_{number}", "body": body},
                "error": None,
            }
            if code == 200:
                output.append(line)
                batch.completed += 1
            else:
                failures.append(line)
                batch.failed += 1
        altered = self.alterations.take([entry["custom_id"] for entry in batch.lines])
        for lines, attribute in ((output, "output_file_id"), (failures, "error_file_id")):
            if lines:
                alterations = altered if attribute == "output_file_id" else []
                content = render_results(lines, alterations, openai_format(), self.alterations.bomb_bytes)
                stored = _File(
                    f"file-fake-out-{len(self.files) + 1}", f"{batch.id}_{attribute}.jsonl", "batch_output", content
                )
                self.files[stored.id] = stored
                setattr(batch, attribute, stored.id)
        batch.status = status

    def _answer(self, body: Any, number: int, echo: str = "") -> tuple[int, dict[str, Any]]:
        """The status and body the chat endpoint would give this line's body (under the lock)."""
        if self._fail_entries > 0:
            self._fail_entries -= 1
            return 500, _error("internal error (fake batch line)", "server_error")
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return 400, _error("body must be a JSON object with messages")
        rejection = self._reasoning_rejection(body)
        if rejection is not None:
            return 400, rejection
        try:
            completion = self.server._completion(number, body, echo)
        except Exception as exc:
            return 500, _error(f"fake server error: {exc}", "server_error")
        self.entries_answered += 1
        return 200, completion
