"""Result files of the fake batch servers altered as a broken or hostile server would alter them (issue 29).

Both fakes (fake_openai_batch, fake_anthropic_batch) take `alter_results(kind, entry=0, batches=1)`: the next
`batches` batches that end (None: every one) get their result file altered at the line of the request that was
number `entry` (0-based, in the order sent) of the first of them, wherever it is in the later ones (a request
asked again is altered again), when it was answered with success:

- "cut": the file ends in the middle of that line (a download cut short: the lines after it are lost too);
- "junk": a line that is not JSON is put before it;
- "unknown_id": a copy of it naming a custom_id that was never asked is put after it;
- "duplicate": a second line for the same custom_id with another answer ("INJECTED" before its text) after it;
- "duplicate_same": the same line twice;
- "wrong_model": the answer names another model;
- "snapshot_model": the answer names a dated snapshot of the model asked (the same model: to be taken);
- "error_body": an error object stands where the answer belongs;
- "huge_line": the answer's text is padded to `bomb_bytes` bytes (the fakes serve large files gzip-compressed).
"""

import copy
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

ALTERATIONS = (
    "cut",
    "junk",
    "unknown_id",
    "duplicate",
    "duplicate_same",
    "wrong_model",
    "snapshot_model",
    "error_body",
    "huge_line",
)
JUNK_LINE = "this line is not JSON {"
UNKNOWN_ID = "never-asked-0000"
INJECTED = "INJECTED "
# Served gzip-compressed (when the client accepts it) from this size on, as large downloads often are.
COMPRESS_FROM_BYTES = 1_000_000


@dataclass
class _Pending:
    kind: str
    entry: int
    batches: int | None
    custom_id: str | None = None  # the request altered, once known


class ResultAlterations:
    """The alterations waiting for the next batches to end (thread-safe: the fake serves from many threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: list[_Pending] = []
        self.bomb_bytes = 5_000_000

    def add(self, kind: str, entry: int = 0, batches: int | None = 1) -> None:
        if kind not in ALTERATIONS:
            raise ValueError(f"unknown alteration {kind!r}; known: {', '.join(ALTERATIONS)}")
        with self._lock:
            self._pending.append(_Pending(kind, entry, batches))

    def take(self, custom_ids: list[str]) -> list[tuple[str, str]]:
        """The alterations of the batch ending now, which holds `custom_ids` in order: (kind, custom_id altered);
        each counted against its number of batches."""
        with self._lock:
            for pending in self._pending:
                if pending.custom_id is None and pending.entry < len(custom_ids):
                    pending.custom_id = custom_ids[pending.entry]
            taken = [(p.kind, p.custom_id) for p in self._pending if p.custom_id is not None]
            for pending in self._pending:
                if pending.batches is not None:
                    pending.batches -= 1
            self._pending = [p for p in self._pending if p.batches is None or p.batches > 0]
        return taken


@dataclass(frozen=True)
class ResultFormat:
    """Where a provider's result line keeps its answer."""

    answer: Callable[[dict[str, Any]], dict[str, Any] | None]  # the answer object of a successful line, else None
    get_text: Callable[[dict[str, Any]], str]
    set_text: Callable[[dict[str, Any], str], None]
    put_error: Callable[[dict[str, Any]], None]  # an error object where the line's answer belongs
    snapshot_suffix: str  # what the provider appends to a model's name for a dated snapshot


def render_results(
    lines: list[dict[str, Any]], alterations: list[tuple[str, str]], form: ResultFormat, bomb_bytes: int
) -> bytes:
    """The JSONL file of `lines` with `alterations` ((kind, custom_id) pairs) applied."""
    lines = copy.deepcopy(lines)
    texts: list[str | None] = []
    cut_at: int | None = None
    extra_after: dict[int, list[str]] = {}
    extra_before: dict[int, list[str]] = {}
    positions = {line.get("custom_id"): index for index, line in enumerate(lines)}
    for kind, custom_id in alterations:
        index = positions.get(custom_id)
        if index is None or form.answer(lines[index]) is None:
            continue
        line = lines[index]
        answer = form.answer(line)
        assert answer is not None
        if kind == "wrong_model":
            answer["model"] = "some-other-model"
        elif kind == "snapshot_model":
            answer["model"] = f"{answer['model']}{form.snapshot_suffix}"
        elif kind == "error_body":
            form.put_error(line)
        elif kind == "huge_line":
            form.set_text(answer, "a" * bomb_bytes)
        elif kind == "cut":
            cut_at = index if cut_at is None else min(cut_at, index)
        elif kind == "junk":
            extra_before.setdefault(index, []).append(JUNK_LINE)
        elif kind == "unknown_id":
            extra_after.setdefault(index, []).append(json.dumps({**line, "custom_id": UNKNOWN_ID}))
        elif kind == "duplicate_same":
            extra_after.setdefault(index, []).append(json.dumps(line))
        elif kind == "duplicate":
            other = copy.deepcopy(line)
            other_answer = form.answer(other)
            assert other_answer is not None
            form.set_text(other_answer, INJECTED + form.get_text(other_answer))
            extra_after.setdefault(index, []).append(json.dumps(other))
    for index, line in enumerate(lines):
        texts += extra_before.get(index, [])
        texts.append(json.dumps(line))
        texts += extra_after.get(index, [])
    content = "".join(f"{text}\n" for text in texts if text is not None)
    if cut_at is not None:
        whole = json.dumps(lines[cut_at])
        start = content.index(whole)
        content = content[: start + len(whole) // 2]
    return content.encode("utf-8")


def openai_format() -> ResultFormat:
    def answer(line: dict[str, Any]) -> dict[str, Any] | None:
        response = line.get("response")
        if not isinstance(response, dict) or response.get("status_code") != 200:
            return None
        return response.get("body") if isinstance(response.get("body"), dict) else None

    def put_error(line: dict[str, Any]) -> None:
        line["response"]["body"] = {"error": {"message": "internal error (fake)", "type": "server_error"}}

    def set_text(body: dict[str, Any], text: str) -> None:
        body["choices"][0]["message"]["content"] = text

    return ResultFormat(
        answer=answer,
        get_text=lambda body: str(body["choices"][0]["message"]["content"]),
        set_text=set_text,
        put_error=put_error,
        snapshot_suffix="-2024-07-18",
    )


def anthropic_format() -> ResultFormat:
    def answer(line: dict[str, Any]) -> dict[str, Any] | None:
        result = line.get("result")
        if not isinstance(result, dict) or result.get("type") != "succeeded":
            return None
        return result.get("message") if isinstance(result.get("message"), dict) else None

    def put_error(line: dict[str, Any]) -> None:
        line["result"]["message"] = {"type": "error", "error": {"type": "api_error", "message": "fake api_error"}}

    def set_text(message: dict[str, Any], text: str) -> None:
        message["content"][-1]["text"] = text

    return ResultFormat(
        answer=answer,
        get_text=lambda message: str(message["content"][-1]["text"]),
        set_text=set_text,
        put_error=put_error,
        snapshot_suffix="-20241022",
    )


def send_file(handler: Any, content: bytes, content_type: str) -> None:
    """A result file as a download: gzip-compressed from COMPRESS_FROM_BYTES on when the client accepts gzip."""
    import gzip

    headers = {"Content-Type": content_type}
    if len(content) >= COMPRESS_FROM_BYTES and "gzip" in (handler.headers.get("Accept-Encoding") or ""):
        content = gzip.compress(content, compresslevel=6)
        headers["Content-Encoding"] = "gzip"
    handler.send_response(200)
    for name, value in headers.items():
        handler.send_header(name, value)
    handler.send_header("Content-Length", str(len(content)))
    handler.end_headers()
    handler.wfile.write(content)
    handler.wfile.flush()
