"""A run is a directory: run.json, samples.jsonl (appended and flushed per item), summary.json, report.html.

Safety rules of a run directory:
- one run at a time: an OS lock on `run.lock` (released by the OS when the process dies, even by kill -9);
- every intact record is kept: damaged lines of samples.jsonl are moved, byte for byte, to samples.damaged.jsonl
  and their items asked again;
- every record says which run it belongs to (fingerprint, model, session); records of another run are refused,
  never adopted, and a lost or unreadable run.json is rebuilt only from records that match;
- accounting survives sessions: run.json keeps the creation time and one entry per session; totals add them up.
"""

import contextlib
import json
import math
import os
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from empathybench.errors import UserError
from empathybench.redaction import dumps_redacted

try:
    import fcntl
except ImportError:  # not POSIX: runs go unlocked
    fcntl = None  # type: ignore[assignment]

RUN_FILE = "run.json"
SAMPLES_FILE = "samples.jsonl"
DAMAGED_FILE = "samples.damaged.jsonl"
SUMMARY_FILE = "summary.json"
LOCK_FILE = "run.lock"
# Counters that add up over the sessions of a run (items_* describe the run's state and are not added).
USAGE_COUNTERS = (
    "calls",
    "cache_hits",
    "retries",
    "prompt_tokens",
    "completion_tokens",
    "truncated",
    "cached_input_tokens",
    "cache_write_input_tokens",
)


def write_json_atomically(path: Path, data: Any) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    # No secret reaches a shared file, whatever path it took to get here.
    tmp.write_text(dumps_redacted(data, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def parse_record(line: bytes) -> dict[str, Any] | None:
    """One samples.jsonl line as a record, or None when it is not one (cut short, not UTF-8, not an object...)."""
    try:
        record = json.loads(line.decode("utf-8"))
    except ValueError:  # UnicodeDecodeError is a ValueError
        return None
    if not isinstance(record, dict) or not isinstance(record.get("benchmark"), str):
        return None
    if not isinstance(record.get("item_id"), str):
        return None
    return record


def _count(value: Any) -> int:
    """A counter read back from a file a person may have edited: anything but a plain number counts as 0."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return int(value) if math.isfinite(value) else 0


def _seconds(value: Any) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < float("inf")
    return float(value) if ok else 0.0


def add_usage(total: dict[str, Any], part: dict[str, Any]) -> dict[str, Any]:
    summed = {name: _count(total.get(name)) + _count(part.get(name)) for name in USAGE_COUNTERS}
    kinds = dict(total.get("retries_by_kind") or {})
    by_kind = part.get("retries_by_kind")
    for kind, count in (by_kind if isinstance(by_kind, dict) else {}).items():
        kinds[kind] = _count(kinds.get(kind)) + _count(count)
    summed["retries_by_kind"] = kinds
    return summed


def usage_from_records(records: list[dict[str, Any]]) -> dict[str, Any]:
    """A lower bound on a session's usage from its records (failed calls of failed items are not in them)."""
    calls = [call for record in records for call in record.get("calls") or [] if isinstance(call, dict)]
    fresh = [call for call in calls if not call.get("cached")]
    retries = sum(_count(call.get("retries")) for call in fresh)
    return {
        "calls": len(fresh) + retries,
        "cache_hits": len(calls) - len(fresh),
        "retries": retries,
        "prompt_tokens": sum(_count(call.get("prompt_tokens")) for call in fresh),
        "completion_tokens": sum(_count(call.get("completion_tokens")) for call in fresh),
        "cached_input_tokens": sum(_count(call.get("cached_input_tokens")) for call in fresh),
        "cache_write_input_tokens": sum(_count(call.get("cache_write_input_tokens")) for call in fresh),
        "truncated": sum(1 for call in calls if call.get("truncated")),
    }


class RunStore:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.samples_path = directory / SAMPLES_FILE
        self._handle: Any = None
        self._lock: Any = None
        self.notices: list[str] = []  # one line each, for the user: what was repaired or rebuilt
        self.previous: dict[str, Any] | None = None  # the run.json found on open (None: new or rebuilt)
        self.session = 1
        self._tag: dict[str, Any] = {}
        self._records_by_session: dict[int, list[dict[str, Any]]] = {}
        self._session_started = 0.0

    def open(self, fingerprint: str, model: str | None = None) -> dict[tuple[str, str], dict[str, Any]]:
        """Lock and create or reopen the run directory; returns the finished records found there.

        A directory holding a different run (another fingerprint) is refused rather than mixed.
        """
        if self.directory.exists() and not self.directory.is_dir():
            raise UserError(f"--out {self.directory} is a file, not a run directory; choose another --out")
        self.directory.mkdir(parents=True, exist_ok=True)
        self._acquire_lock()
        try:
            self.previous = self._read_previous_run(fingerprint)
            finished = self._read_and_repair(fingerprint, model)
        except BaseException:
            self.close()
            raise
        previous = self.previous or {}
        # A run.json of an older version has no sessions list: it stands for one session.
        known = len(previous.get("sessions") or []) or (1 if previous.get("created") else 0)
        self.session = max([known, *self._records_by_session]) + 1
        self._tag = {"fingerprint": fingerprint, "model": model, "session": self.session, "session_started": now_iso()}
        self._handle = self.samples_path.open("a", encoding="utf-8")
        return finished

    def _acquire_lock(self) -> None:
        if fcntl is None:
            return
        handle = (self.directory / LOCK_FILE).open("a+", encoding="utf-8")
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            handle.close()
            raise UserError(
                f"{self.directory} is in use by another empathybench run (pid {holder}); wait for it to finish "
                "(or stop it), then run the same command again, or choose another --out"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        self._lock = handle

    def _read_previous_run(self, fingerprint: str) -> dict[str, Any] | None:
        run_file = self.directory / RUN_FILE
        if not run_file.exists():
            return None
        try:
            previous = json.loads(run_file.read_text("utf-8"))
            if not isinstance(previous, dict) or not isinstance(previous.get("fingerprint"), str):
                raise ValueError("not a run description")
        except (OSError, ValueError) as exc:
            aside = self.directory / "run.damaged.json"
            os.replace(run_file, aside)
            self.notices.append(f"{run_file} was unreadable ({exc}); moved it to {aside.name}, rebuilding it")
            return None
        if previous["fingerprint"] != fingerprint:
            raise UserError(
                f"{self.directory} holds a run with other settings (model "
                f"{(previous.get('model') or {}).get('spec')}); choose another --out to start a new run"
            )
        return previous

    def _read_and_repair(self, fingerprint: str, model: str | None) -> dict[tuple[str, str], dict[str, Any]]:
        finished: dict[tuple[str, str], dict[str, Any]] = {}
        if not self.samples_path.exists():
            return finished
        raw = self.samples_path.read_bytes()
        intact: list[bytes] = []
        damaged: list[bytes] = []
        foreign: dict[str, Any] | None = None
        untagged = 0
        for line in raw.splitlines(keepends=True):
            # A line without its newline was cut short by a kill mid-write: damaged like any unreadable line.
            record = parse_record(line) if line.endswith(b"\n") else None
            if record is None:
                if line.strip():
                    damaged.append(line)
                continue
            intact.append(line)
            owner = record.get("run")
            if not isinstance(owner, dict):
                untagged += 1
            elif owner.get("fingerprint") != fingerprint:
                foreign = foreign or owner
            elif isinstance(owner.get("session"), int):
                self._records_by_session.setdefault(owner["session"], []).append(record)
            key = (record["benchmark"], record["item_id"])
            if record.get("status") == "ok":
                finished[key] = record
            else:
                finished.pop(key, None)  # errored: run it again
        if foreign is not None:
            raise UserError(
                f"{self.samples_path} holds records of another run (model {foreign.get('model')}, fingerprint "
                f"{str(foreign.get('fingerprint'))[:12]}); choose another --out to start a new run"
            )
        if untagged and self.previous is None:
            # Written by an older version: only run.json could say whose they are, and it is gone.
            raise UserError(
                f"{self.samples_path} holds {untagged} records that do not say which run they belong to and there "
                "is no readable run.json to vouch for them; choose another --out to start a new run"
            )
        if damaged:
            self._set_aside(damaged, intact)
        return finished

    def _set_aside(self, damaged: list[bytes], intact: list[bytes]) -> None:
        """Damaged lines go to samples.damaged.jsonl first (kept forever, byte for byte), then samples.jsonl is
        replaced by its intact lines in one rename: a crash in between duplicates, never loses."""
        aside = self.directory / DAMAGED_FILE
        with aside.open("ab") as handle:
            for line in damaged:
                handle.write(line if line.endswith(b"\n") else line + b"\n")
            handle.flush()
            os.fsync(handle.fileno())
        tmp = self.samples_path.with_name(f".{SAMPLES_FILE}.tmp")
        with tmp.open("wb") as handle:
            handle.write(b"".join(intact))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, self.samples_path)
        self.notices.append(
            f"{len(damaged)} damaged line(s) of {self.samples_path} moved to {aside.name}; "
            f"{len(intact)} intact records kept, the damaged items are asked again"
        )

    def start_session(self, run_info: dict[str, Any]) -> None:
        """Carry the accounting of earlier sessions into `run_info`, open this session in it and write run.json."""
        previous = self.previous or {}
        sessions = [dict(s) for s in previous.get("sessions") or [] if isinstance(s, dict)]
        if not sessions and previous.get("created"):  # run.json of an older version: one session, its totals
            sessions.append(
                {
                    "n": 1,
                    "started": previous.get("created"),
                    "finished": previous.get("finished"),
                    "status": previous.get("status"),
                    "usage": {k: v for k, v in (previous.get("usage") or {}).items() if not k.startswith("items_")},
                    "elapsed_s": previous.get("elapsed_s"),
                }
            )
        known = {s.get("n") for s in sessions}
        for n, records in sorted(self._records_by_session.items()):
            if n not in known:  # run.json was lost: what the records say about their session
                sessions.append(
                    {
                        "n": n,
                        "started": records[0]["run"].get("session_started"),
                        "status": "unknown",
                        "usage": usage_from_records(records),
                        "note": "rebuilt from samples.jsonl: a lower bound",
                    }
                )
        for entry in sessions:
            if entry.get("status") == "running":  # we hold the lock, so that process died (kill -9, power loss)
                entry["status"] = "killed"
                entry["usage"] = usage_from_records(self._records_by_session.get(entry.get("n"), []))
                entry["note"] = "usage rebuilt from samples.jsonl: a lower bound"
        sessions.sort(key=lambda s: _count(s.get("n")))
        run_info["created"] = previous.get("created") or (sessions[0].get("started") if sessions else None) or now_iso()
        if self.previous is None and sessions:
            run_info["rebuilt"] = f"run.json rebuilt from samples.jsonl on {now_iso()}"
        sessions.append(
            {"n": self.session, "started": self._tag.get("session_started"), "status": "running", "pid": os.getpid()}
        )
        run_info["sessions"] = sessions
        self._session_started = time.monotonic()
        self.write_run(run_info)

    def end_session(self, run_info: dict[str, Any], status: str, usage: dict[str, Any]) -> dict[str, Any]:
        """Close this session in `run_info` (status, its own usage and time) and set the run's totals.

        Returns this session's entry; run_info["usage"] and ["elapsed_s"] become the totals over all sessions.
        """
        session = run_info["sessions"][-1]
        session.update(
            status=status,
            finished=now_iso(),
            usage={k: v for k, v in usage.items() if not k.startswith("items_")},
            elapsed_s=round(time.monotonic() - self._session_started, 3),
        )
        session.pop("pid", None)
        totals: dict[str, Any] = {}
        for entry in run_info["sessions"]:
            totals = add_usage(totals, entry.get("usage") if isinstance(entry.get("usage"), dict) else {})
        run_info["usage"] = {**{k: v for k, v in usage.items() if k.startswith("items_")}, **totals}
        run_info["elapsed_s"] = round(sum(_seconds(s.get("elapsed_s")) for s in run_info["sessions"]), 3)
        run_info["status"] = status
        return session

    def append(self, record: dict[str, Any]) -> None:
        # Every record says whose it is, so a lost run.json can never let another run adopt it.
        record.setdefault("run", self._tag)
        # One write of one complete line, then flush: a kill -9 after this returns loses nothing.
        self._handle.write(dumps_redacted(record) + "\n")
        self._handle.flush()

    def write_run(self, data: dict[str, Any]) -> None:
        write_json_atomically(self.directory / RUN_FILE, data)

    def write_summary(self, data: dict[str, Any]) -> None:
        write_json_atomically(self.directory / SUMMARY_FILE, data)

    def close(self) -> None:
        """Close samples.jsonl and release the lock."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None
        if self._lock is not None:
            with contextlib.suppress(OSError):
                self._lock.close()  # closing the descriptor releases the flock
            self._lock = None


def read_samples(directory: Path) -> list[dict[str, Any]]:
    """The latest record per item of a run directory; lines that are not records are skipped."""
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    path = directory / SAMPLES_FILE
    if path.exists():
        for line in path.read_bytes().splitlines():
            record = parse_record(line)
            if record is not None:
                latest[(record["benchmark"], record["item_id"])] = record
    return list(latest.values())
