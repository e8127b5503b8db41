"""inspect logs read back as EmpathyBench runs, for `empathybench report`: the EI profile, the report sections,
comparisons and the leaderboard from `inspect eval empathybench/<name>` logs.

Logs are read with inspect's own reader (`.eval` and `.json`). The logs of one model (and judge) and preset become one
run, with one instrument per task (the latest log of a task when it was run more than once); each instrument's entry is
summarised again from the samples' records with the instrument's own `summarize`, as `empathybench run` does.

A log is bounded before it is read: at most MAX_LOG_BYTES (EMPATHYBENCH_MAX_LOG_BYTES to change it) of JSON, for a
`.eval` file (a zip) counted uncompressed from its directory, which the zip reader holds each member to; a larger
log, or a zip bomb, is one line, never a machine out of memory.
"""

import zipfile
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog, EvalSample, list_eval_logs, read_eval_log

from empathybench.errors import UserError
from empathybench.inspect_bridge.task import (
    RECORD_KEY,
    InstrumentSettings,
    instrument_settings,
    prepare_instrument,
)
from empathybench.inspect_bridge.wire import mark_request_changes
from empathybench.models.reply_bounds import bytes_from_environment, megabytes
from empathybench.run.summary import benchmark_result, calls_usage, finish_benchmarks
from empathybench.rundir.reader import RunData
from empathybench.schema.files import checked
from empathybench.schema.summary import SUMMARY_SCHEMA_ID, SUMMARY_SCHEMA_VERSION, RunSummary
from empathybench.version import __version__

ORIGIN = "inspect_ai"
LOG_SUFFIXES = (".eval", ".json")
# The largest log read (uncompressed bytes): several times an EmpathyBench task's largest log (every call's
# messages and reply, each cut at 100,000 characters); inspect holds a whole log in memory as it reads it.
MAX_LOG_BYTES = 512_000_000
MAX_LOG_BYTES_VARIABLE = "EMPATHYBENCH_MAX_LOG_BYTES"


def _log_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    return sorted(Path(info.name.removeprefix("file://")) for info in list_eval_logs(str(path), recursive=True))


def max_log_bytes() -> int:
    """The largest log read: MAX_LOG_BYTES, or EMPATHYBENCH_MAX_LOG_BYTES when set (a one-line UserError if bad)."""
    value = bytes_from_environment(MAX_LOG_BYTES_VARIABLE)
    if value is None:
        return MAX_LOG_BYTES
    if value < 1:
        raise UserError(f"{MAX_LOG_BYTES_VARIABLE} must be at least 1 byte, not {value}")
    return value


def _log_size(path: Path) -> int:
    """The bytes reading `path` decodes: the file's own size, or for a `.eval` zip its members' uncompressed sizes
    (from its directory: the zip reader stops each member at its stated size)."""
    size = path.stat().st_size
    if path.suffix != ".eval" or not zipfile.is_zipfile(path):
        return size
    with zipfile.ZipFile(path) as archive:
        return max(size, sum(info.file_size for info in archive.infolist()))


def _read(path: Path) -> EvalLog:
    limit = max_log_bytes()
    try:
        size = _log_size(path)
    except (OSError, zipfile.BadZipFile) as exc:
        raise UserError(f"{path}: not a readable inspect log ({type(exc).__name__}: {str(exc)[:200]})") from None
    if size > limit:
        raise UserError(
            f"{path}: an inspect log of {megabytes(size)} MB, more than the {megabytes(limit)} MB read; refused "
            f"({MAX_LOG_BYTES_VARIABLE} raises the limit)"
        )
    try:
        return read_eval_log(str(path))
    except Exception as exc:  # a file inspect cannot read is the user's one line, not a traceback
        raise UserError(f"{path}: not a readable inspect log ({type(exc).__name__}: {str(exc)[:200]})") from None


def _settings(log: EvalLog) -> InstrumentSettings | None:
    """The settings the task recorded in the log (None: not an EmpathyBench task)."""
    recorded = (log.eval.metadata or {}).get(RECORD_KEY)
    if not isinstance(recorded, Mapping) or not isinstance(recorded.get("instrument"), str):
        return None
    _, settings = instrument_settings(
        recorded["instrument"],
        preset=str(recorded.get("requested_preset") or recorded.get("preset") or "quick"),
        limit=recorded.get("limit"),
        seed=recorded.get("seed", 0),
        allow_unverified=bool(recorded.get("allow_unverified")),
        options=dict(recorded.get("options") or {}),
    )
    return settings


def _grader(log: EvalLog) -> str | None:
    bound = (log.eval.model_roles or {}).get("grader")
    if isinstance(bound, list):
        bound = bound[0] if bound else None
    return bound.model if bound is not None else None


def _records(name: str, samples: Iterable[EvalSample]) -> list[dict[str, Any]]:
    """The item records of the first epoch: the solver's record, or the sample's error as a failed item."""
    records = []
    for sample in samples:
        if sample.epoch != 1:
            continue
        record = (sample.metadata or {}).get(RECORD_KEY)
        if sample.error is None and isinstance(record, dict):
            records.append(dict(record))
        else:
            reason = sample.error.message if sample.error is not None else "the sample has no EmpathyBench record"
            failed: dict[str, Any] = {
                "benchmark": name,
                "item_id": str(sample.id),
                "status": "error",
                "error": reason[:500],
                "calls": [],
            }
            # What inspect's provider changed of the failed item's requests (task.py keeps it with the error).
            if isinstance(record, dict) and isinstance(record.get("request_changes"), list):
                failed["request_changes"] = [str(change) for change in record["request_changes"]]
            records.append(failed)
    return records


def _usage(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    calls = [call for record in records for call in record.get("calls") or ()]
    usage = calls_usage(calls)
    return {
        "calls": len(calls) - usage["cached_calls"],
        "cache_hits": usage["cached_calls"],
        "retries": sum(int(call.get("retries") or 0) for call in calls),
        "prompt_tokens": usage["prompt_tokens"],
        "completion_tokens": usage["completion_tokens"],
        "cached_input_tokens": usage["cached_input_tokens"],
    }


def _elapsed_s(log: EvalLog) -> float:
    try:
        started = datetime.fromisoformat(log.stats.started_at)
        finished = datetime.fromisoformat(log.stats.completed_at)
    except (TypeError, ValueError):
        return 0.0
    return max(0.0, (finished - started).total_seconds())


def _run_of(group: list[tuple[Path, EvalLog, InstrumentSettings]], directory: Path) -> RunData:
    """One run from the logs of one model and preset (the latest log of each instrument; the judged ones name their
    grader)."""
    latest: dict[str, tuple[Path, EvalLog, InstrumentSettings]] = {}
    for entry in sorted(group, key=lambda e: e[1].eval.created):
        latest[entry[2].name] = entry
    chosen = sorted(latest.values(), key=lambda e: e[2].name)
    model = chosen[0][1].eval.model
    graders = sorted({g for _, log, _ in chosen if (g := _grader(log)) is not None})
    grader = ", ".join(graders) or None
    benchmarks: dict[str, Any] = {}
    instruments_info: dict[str, Any] = {}
    records: list[dict[str, Any]] = []
    for path, log, settings in chosen:
        instrument, _ = instrument_settings(settings.name)
        prepared = prepare_instrument(instrument, settings)
        own = _records(settings.name, log.samples or ())
        benchmarks[settings.name] = benchmark_result(prepared, own)
        mark_request_changes(benchmarks[settings.name], own)
        records.extend(own)
        recorded = (log.eval.metadata or {}).get(RECORD_KEY) or {}
        instruments_info[settings.name] = {
            "config": prepared.config,
            "n_items": len(prepared.items),
            "data_files": list(recorded.get("data_files") or ()),
            "inspect_log": str(path),
            "inspect_status": log.status,
        }
    profile = finish_benchmarks(benchmarks)
    usage = _usage(records)
    elapsed = round(sum(_elapsed_s(log) for _, log, _ in chosen), 3)
    logs = [str(path) for path, _, _ in chosen]
    inspect_version = chosen[0][1].eval.packages.get("inspect_ai", "unknown")
    source = f"inspect_ai {inspect_version} logs: " + ", ".join(Path(p).name for p in logs)
    first = chosen[0][2]
    summary = {
        "$schema": SUMMARY_SCHEMA_ID,
        "schema_version": SUMMARY_SCHEMA_VERSION,
        "model": model,
        "preset": first.requested_preset,
        "run_dir": str(directory),
        "source": source,
        "benchmarks": benchmarks,
        "profile": profile,
        "usage": usage,
        "elapsed_s": elapsed,
    }
    checked(RunSummary, summary, f"{directory} (inspect logs)")
    created = min(log.eval.created for _, log, _ in chosen)
    run_info = {
        "fingerprint": chosen[0][1].eval.eval_id,
        "status": "complete" if all(log.status == "success" for _, log, _ in chosen) else "incomplete",
        "created": created,
        "finished": datetime.now(UTC).isoformat(timespec="seconds"),
        "empathybench_version": __version__,
        "python": "",
        "platform": "",
        "packages": dict(chosen[0][1].eval.packages),
        "model": {"spec": model, "harness": ORIGIN},
        "judge": {"spec": grader, "role": "grader"} if grader else {"spec": "self", "note": "no grader role"},
        "options": {
            "preset": first.requested_preset,
            "limit": first.plan.limit,
            "seed": first.seed,
            "max_concurrency": None,
            "benchmark_options": {f"{s.name}.{k}": v for _, _, s in chosen for k, v in s.plan.options.items()},
            "allow_unverified": first.allow_unverified,
            "cache": False,
        },
        "benchmarks": instruments_info,
        "usage": usage,
        "elapsed_s": elapsed,
        "source": {"harness": ORIGIN, "version": inspect_version, "logs": logs},
    }
    return RunData(directory, summary, run_info, records=records, origin=source)


def is_inspect_log_path(path: Path) -> bool:
    """Whether `path` is an inspect log file, or a directory of them that is not an EmpathyBench run directory."""
    if path.is_file():
        return path.suffix in LOG_SUFFIXES
    run_files = ("summary.json", "run.json", "samples.jsonl")  # an EmpathyBench run directory, finished or not
    if path.is_dir() and not any((path / name).exists() for name in run_files):
        return any(p.suffix in LOG_SUFFIXES for p in path.rglob("*") if p.is_file())
    return False


def load_inspect_runs(paths: Sequence[Path]) -> list[RunData]:
    """The runs in inspect logs (files and directories): one per model and preset, in the order found."""
    groups: dict[tuple[str, str], list[tuple[Path, EvalLog, InstrumentSettings]]] = {}
    places: dict[tuple[str, str], Path] = {}
    ignored = 0
    for path in paths:
        files = _log_files(path)
        if not files:
            raise UserError(f"{path}: no inspect logs (.eval or .json) in it")
        for file in files:
            log = _read(file)
            settings = _settings(log)
            if settings is None or log.samples is None:
                ignored += 1  # another task's log, or one written without samples
                continue
            key = (log.eval.model, settings.requested_preset)
            groups.setdefault(key, []).append((file, log, settings))
            places.setdefault(key, path if path.is_dir() else path.parent)
    if not groups:
        raise UserError(
            f"no EmpathyBench task in the inspect logs given ({ignored} other logs); "
            "they come from `inspect eval empathybench/<name>`"
        )
    return [_run_of(group, places[key]) for key, group in groups.items()]
