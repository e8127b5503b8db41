"""The one public reader of run directories: everything that renders or compares runs reads them through here."""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from empathybench.errors import UserError
from empathybench.rundir.store import read_samples

__all__ = ["RunData", "load_run", "read_samples"]


@dataclass
class RunData:
    directory: Path
    summary: dict[str, Any]
    run_info: dict[str, Any]

    @property
    def label(self) -> str:
        return str(self.summary.get("model", self.directory.name))

    def samples(self) -> list[dict[str, Any]]:
        return read_samples(self.directory)


def load_run(directory: Path) -> RunData:
    """A finished run directory (summary.json and run.json); anything else is a one-line UserError."""
    if not directory.is_dir():
        raise UserError(f"no such run directory: {directory}")
    summary_path = directory / "summary.json"
    if not summary_path.exists():
        raise UserError(f"{directory} has no summary.json: the run did not finish (re-run the same command to resume)")
    try:
        summary = json.loads(summary_path.read_text("utf-8"))
        run_path = directory / "run.json"
        run_info = json.loads(run_path.read_text("utf-8")) if run_path.exists() else {}
    except ValueError as exc:
        raise UserError(f"{directory}: unreadable run files: {exc}") from None
    if "benchmarks" not in summary:
        raise UserError(f"{summary_path} is not an EmpathyBench summary")
    return RunData(directory, summary, run_info)
