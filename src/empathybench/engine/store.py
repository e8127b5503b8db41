"""A run is a directory: run.json, samples.jsonl (appended and flushed per item), summary.json, report.html."""

import json
import os
from pathlib import Path
from typing import Any

from empathybench.errors import UserError
from empathybench.redaction import dumps_redacted

RUN_FILE = "run.json"
SAMPLES_FILE = "samples.jsonl"
SUMMARY_FILE = "summary.json"


def write_json_atomically(path: Path, data: Any) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    # No secret reaches a shared file, whatever path it took to get here.
    tmp.write_text(dumps_redacted(data, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


class RunStore:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.samples_path = directory / SAMPLES_FILE
        self._handle: Any = None

    def open(self, fingerprint: str) -> dict[tuple[str, str], dict[str, Any]]:
        """Create or reopen the run directory; returns the finished records found there.

        A directory holding a different run (another fingerprint) is refused rather than mixed.
        A line cut short by a kill is dropped: its item simply runs again.
        """
        self.directory.mkdir(parents=True, exist_ok=True)
        run_file = self.directory / RUN_FILE
        if run_file.exists():
            try:
                previous = json.loads(run_file.read_text("utf-8")).get("fingerprint")
            except (OSError, ValueError):
                previous = None
            if previous is not None and previous != fingerprint:
                raise UserError(
                    f"{self.directory} holds a run with other settings; choose another --out to start a new run"
                )
        finished = self._read_and_repair()
        self._handle = self.samples_path.open("a", encoding="utf-8")
        return finished

    def _read_and_repair(self) -> dict[tuple[str, str], dict[str, Any]]:
        finished: dict[tuple[str, str], dict[str, Any]] = {}
        if not self.samples_path.exists():
            return finished
        raw = self.samples_path.read_bytes()
        good_end = 0
        offset = 0
        for line in raw.splitlines(keepends=True):
            offset += len(line)
            if not line.endswith(b"\n"):
                break  # torn last line from a kill mid-write
            try:
                record = json.loads(line)
            except ValueError:
                break
            good_end = offset
            key = (record.get("benchmark"), record.get("item_id"))
            if record.get("status") == "ok":
                finished[key] = record
            else:
                finished.pop(key, None)  # errored: run it again
        if good_end < len(raw):
            with self.samples_path.open("r+b") as handle:
                handle.truncate(good_end)
        return finished

    def append(self, record: dict[str, Any]) -> None:
        # One write of one complete line, then flush: a kill -9 after this returns loses nothing.
        self._handle.write(dumps_redacted(record) + "\n")
        self._handle.flush()

    def write_run(self, data: dict[str, Any]) -> None:
        write_json_atomically(self.directory / RUN_FILE, data)

    def write_summary(self, data: dict[str, Any]) -> None:
        write_json_atomically(self.directory / SUMMARY_FILE, data)

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def read_samples(directory: Path) -> list[dict[str, Any]]:
    """The latest record per item of a run directory."""
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    path = directory / SAMPLES_FILE
    if path.exists():
        for line in path.read_text("utf-8").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            latest[(record.get("benchmark"), record.get("item_id"))] = record
    return list(latest.values())
