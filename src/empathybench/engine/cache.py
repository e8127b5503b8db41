"""Response cache in SQLite: WAL mode, so two runs can share it at once.

The cache is an optimisation, never a reason to fail a run: a damaged or foreign file is moved aside and a new
one started; a cache that stays locked or breaks mid-run is bypassed for the rest of the run. Each case is said
once, in one line, and every answer still reaches samples.jsonl.
"""

import contextlib
import hashlib
import json
import sqlite3
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from empathybench.models.base import ChatRequest, ChatResponse
from empathybench.redaction import dumps_redacted, redact_data

CACHE_FORMAT = 1
_COLUMNS = ("key", "created", "body")
# How long a read or write waits for another process's write lock. Writes take milliseconds, so a longer wait
# means something is wrong; the run then goes on without the cache instead of stalling or failing.
BUSY_TIMEOUT_S = 10.0

Warn = Callable[[str], None]


def warn_on_stderr(message: str) -> None:
    sys.stderr.write(f"warning: {message}\n")


def cache_key(identity: dict[str, Any], request: ChatRequest, *, repetition: int, attempt: int) -> str:
    """Everything that changes an answer: model identity (provider, model, base URL), messages,
    every sampling setting (including the seed), the repetition and the attempt index."""
    material = {
        "format": CACHE_FORMAT,
        "model": identity,
        "messages": request.messages_as_dicts(),
        "sampling": request.sampling.as_dict(),
        "repetition": repetition,
        "attempt": attempt,
    }
    encoded = json.dumps(material, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(encoded.encode("utf-8")).hexdigest()


class ForeignCacheError(sqlite3.DatabaseError):
    """An SQLite file that is not an EmpathyBench response cache."""


def _is_damaged(exc: sqlite3.Error) -> bool:
    """The file itself is bad (moved aside); anything else (locked, read-only, no space) is only bypassed."""
    text = str(exc).lower()
    return isinstance(exc, ForeignCacheError) or any(w in text for w in ("not a database", "malformed", "corrupt"))


class ResponseCache:
    def __init__(self, path: Path, *, busy_timeout_s: float = BUSY_TIMEOUT_S, warn: Warn | None = None) -> None:
        self.path = path
        self._warn = warn or warn_on_stderr
        self._busy_timeout_s = busy_timeout_s
        self._db: sqlite3.Connection | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = self._connect()
        except (OSError, sqlite3.Error) as exc:
            if isinstance(exc, sqlite3.Error) and _is_damaged(exc) and path.exists():
                self._db = self._move_aside_and_restart(exc)
            else:
                self._warn(f"response cache {path} unavailable ({exc}); this run goes on without it")

    @property
    def enabled(self) -> bool:
        return self._db is not None

    def _connect(self) -> sqlite3.Connection:
        # autocommit; the busy timeout lets a second run wait briefly for the writer instead of failing
        db = sqlite3.connect(self.path, timeout=self._busy_timeout_s, isolation_level=None, check_same_thread=False)
        try:
            # Checked before anything is written, so a file that is not ours is moved aside untouched.
            tables = {
                row[0]
                for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                if not row[0].startswith("sqlite_")  # SQLite's own (e.g. sqlite_stat1 after ANALYZE)
            }
            if tables - {"responses"}:
                raise ForeignCacheError(f"not an EmpathyBench cache (tables {', '.join(sorted(tables))})")
            if "responses" in tables:
                self._check_columns(db)
            self._use_wal(db)
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, created REAL NOT NULL, body TEXT NOT NULL)"
            )
        except BaseException:
            db.close()
            raise
        return db

    def _use_wal(self, db: sqlite3.Connection) -> None:
        # Switching the journal mode needs the file to itself and SQLite answers "locked" at once, without the busy
        # timeout, while another process is opening the same new file: so retry here for as long as a write would
        # wait. The mode is stored in the file, so only the first opener of a new cache ever switches it.
        deadline = time.monotonic() + self._busy_timeout_s
        pause_s = 0.005
        while True:
            try:
                if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                    db.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc).lower() or time.monotonic() + pause_s > deadline:
                    raise
            time.sleep(pause_s)
            pause_s = min(pause_s * 2, 0.1)

    @staticmethod
    def _check_columns(db: sqlite3.Connection) -> None:
        columns = tuple(row[1] for row in db.execute("PRAGMA table_info(responses)"))
        if columns != _COLUMNS:
            raise ForeignCacheError(f"not an EmpathyBench cache (columns {', '.join(columns)})")

    def _move_aside_and_restart(self, reason: sqlite3.Error) -> sqlite3.Connection | None:
        """Keep the broken file for inspection under a new name and start an empty cache."""
        aside = self.path.with_name(f"{self.path.name}.broken-{time.strftime('%Y%m%d-%H%M%S')}")
        try:
            for suffix in ("", "-wal", "-shm"):
                source = self.path.with_name(self.path.name + suffix)
                if source.exists():
                    source.replace(aside.with_name(aside.name + suffix))
            db = self._connect()
        except (OSError, sqlite3.Error) as exc:
            self._warn(
                f"response cache {self.path} is broken ({reason}) and cannot be replaced ({exc}); "
                "this run goes on without it"
            )
            return None
        self._warn(f"response cache {self.path} was broken ({reason}); moved it to {aside.name} and started a new one")
        return db

    def _give_up(self, action: str, exc: Exception) -> None:
        self._warn(f"response cache {self.path}: {action} failed ({exc}); this run goes on without the cache")
        db, self._db = self._db, None
        if db is not None:
            with contextlib.suppress(sqlite3.Error):
                db.close()

    def get(self, key: str) -> ChatResponse | None:
        if self._db is None:
            return None
        try:
            row = self._db.execute("SELECT body FROM responses WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error as exc:
            self._give_up("reading", exc)
            return None
        if row is None:
            return None
        try:
            body = redact_data(json.loads(row[0]))  # also an entry written before its key was known as a secret
            return ChatResponse(
                text=str(body["text"]),
                finish_reason=body.get("finish_reason"),
                prompt_tokens=int(body.get("prompt_tokens", 0)),
                completion_tokens=int(body.get("completion_tokens", 0)),
                model=body.get("model"),
                reasoning=body.get("reasoning"),
                truncated=bool(body.get("truncated", False)),
                cached_input_tokens=int(body.get("cached_input_tokens", 0)),
                cache_write_input_tokens=int(body.get("cache_write_input_tokens", 0)),
            )
        except (TypeError, ValueError, KeyError, AttributeError):
            return None  # an unreadable entry is a miss: the call is asked again and the entry replaced

    def put(self, key: str, response: ChatResponse) -> None:
        if self._db is None:
            return
        body = {
            "text": response.text,
            "finish_reason": response.finish_reason,
            "prompt_tokens": response.prompt_tokens,
            "completion_tokens": response.completion_tokens,
            "model": response.model,
        }
        if response.reasoning is not None:
            body["reasoning"] = response.reasoning
        if response.truncated:
            body["truncated"] = True
        if response.cached_input_tokens:
            body["cached_input_tokens"] = response.cached_input_tokens
        if response.cache_write_input_tokens:
            body["cache_write_input_tokens"] = response.cache_write_input_tokens
        try:
            self._db.execute(
                "INSERT OR REPLACE INTO responses (key, created, body) VALUES (?, ?, ?)",
                (key, time.time(), dumps_redacted(body)),
            )
        except (sqlite3.Error, ValueError) as exc:
            # The answer is already in hand and goes to samples.jsonl; only the cache copy is lost.
            self._give_up("writing", exc)

    def count(self) -> int:
        if self._db is None:
            return 0
        return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None
