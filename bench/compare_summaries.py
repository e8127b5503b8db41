"""Diff two run directories of the same run (e.g. main before a refactor and the branch after it).

    python bench/compare_summaries.py RUN_A RUN_B

Compares run.json's fingerprint and configs, summary.json and samples.jsonl, ignoring what differs between any two
runs (times, durations, paths, session accounting). Prints every other difference; exit 1 if there is one.
"""

import json
import sys
from pathlib import Path
from typing import Any

VOLATILE = {
    "created", "finished", "elapsed_s", "run_dir", "session", "sessions", "usage", "packages", "python", "platform",
    "started", "ended", "run_id", "session_id", "cache_path", "session_started", "source",
}  # fmt: skip


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _diff(path: str, a: Any, b: Any, out: list[str]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                out.append(f"{path}.{key}: only in {'B' if key not in a else 'A'}")
            else:
                _diff(f"{path}.{key}", a[key], b[key], out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _diff(f"{path}[{i}]", x, y, out)
    elif a != b:
        out.append(f"{path}: {str(a)[:80]!r} != {str(b)[:80]!r}")


def _samples(directory: Path) -> list[Any]:
    lines = (directory / "samples.jsonl").read_text("utf-8").splitlines()
    records = [json.loads(line) for line in lines if line.strip()]
    return sorted(records, key=lambda r: (r.get("benchmark", ""), str(r.get("item_id"))))


def main(first: Path, second: Path) -> int:
    out: list[str] = []
    run_a, run_b = (json.loads((d / "run.json").read_text("utf-8")) for d in (first, second))
    _diff("run.fingerprint", run_a.get("fingerprint"), run_b.get("fingerprint"), out)
    _diff("run.benchmarks", _strip(run_a.get("benchmarks")), _strip(run_b.get("benchmarks")), out)
    summary_a, summary_b = (_strip(json.loads((d / "summary.json").read_text("utf-8"))) for d in (first, second))
    _diff("summary", summary_a, summary_b, out)
    _diff("samples", _strip(_samples(first)), _strip(_samples(second)), out)
    print("\n".join(out) if out else f"identical: {first} {second}")
    return 1 if out else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
