"""Response cache in SQLite: WAL mode, so two runs can share it at once."""

import hashlib
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from empathybench.models.base import ChatRequest, ChatResponse
from empathybench.redaction import dumps_redacted, redact_data

CACHE_FORMAT = 1


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


class ResponseCache:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        # autocommit; a 30 s busy timeout lets a second run wait for the writer instead of failing
        self._db = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, created REAL NOT NULL, body TEXT NOT NULL)"
        )

    def get(self, key: str) -> ChatResponse | None:
        row = self._db.execute("SELECT body FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        body = redact_data(json.loads(row[0]))  # also an entry written before its key was known as a secret
        return ChatResponse(
            text=body["text"],
            finish_reason=body.get("finish_reason"),
            prompt_tokens=body.get("prompt_tokens", 0),
            completion_tokens=body.get("completion_tokens", 0),
            model=body.get("model"),
        )

    def put(self, key: str, response: ChatResponse) -> None:
        body = {
            "text": response.text,
            "finish_reason": response.finish_reason,
            "prompt_tokens": response.prompt_tokens,
            "completion_tokens": response.completion_tokens,
            "model": response.model,
        }
        self._db.execute(
            "INSERT OR REPLACE INTO responses (key, created, body) VALUES (?, ?, ?)",
            (key, time.time(), dumps_redacted(body)),
        )

    def count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        self._db.close()
