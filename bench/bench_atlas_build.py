"""`empathybench atlas build` over the mirrored released outputs: target within 60 s on 2 cores.

The CLI in a subprocess, twice: with a fresh cache (every released file read from the mirror, verified by sha256
and cached, then scored) and again with that cache warm (scoring alone). Each time the written atlas must equal
the shipped one byte for byte (the build depends on the files alone).

Results: bench/results/atlas_build.json and atlas_build.md; exit 1 when the target is missed or the atlas differs.

    EMPATHYBENCH_MIRROR=../shared/mirror python bench/bench_atlas_build.py
"""

import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = REPO_ROOT / "bench" / "results"
SHIPPED = REPO_ROOT / "src" / "empathybench" / "atlas" / "atlas.json"
TARGET_S = 60.0


def build(scratch: Path, label: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    env.update(EMPATHYBENCH_CACHE_DIR=str(scratch / "cache"))
    env.setdefault("EMPATHYBENCH_MIRROR", str(REPO_ROOT.parent / "shared" / "mirror"))
    out = scratch / f"{label}.json"
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "empathybench", "atlas", "build", "--out", str(out), "--quiet"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"atlas build failed ({result.returncode}): {result.stderr[-2000:]}")
    atlas = json.loads(out.read_text("utf-8"))
    return {
        "cache": label,
        "wall_s": round(wall, 2),
        "entries": len(atlas["entries"]),
        "recomputed": sum(e["status"] == "recomputed" for e in atlas["entries"]),
        "equals_shipped": out.read_bytes() == SHIPPED.read_bytes(),
        "summary": result.stdout.strip().splitlines()[:-1],
    }


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="bench-atlas-") as temporary:
        scratch = Path(temporary)
        runs = [build(scratch, "fresh"), build(scratch, "warm")]
    report = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "cpus": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "target_s": TARGET_S,
        "runs": runs,
    }
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / "atlas_build.json").write_text(json.dumps(report, indent=2) + "\n", "utf-8")
    lines = [
        f"# `empathybench atlas build` over the mirror ({report['when']})",
        "",
        f"{report['cpus']} CPUs, load average {report['load_average']}, Python {report['python']}.",
        "",
        "| cache | wall | entries | recomputed | equals the shipped atlas |",
        "|---|---|---|---|---|",
        *(
            f"| {r['cache']} | {r['wall_s']:.2f} s | {r['entries']} | {r['recomputed']} | {r['equals_shipped']} |"
            for r in runs
        ),
        "",
        f"Target: within {TARGET_S:.0f} s on 2 cores (fresh cache: every file read from the mirror and verified).",
        "",
        *(f"    {line}" for line in runs[0]["summary"]),
    ]
    (RESULTS_DIR / "atlas_build.md").write_text("\n".join(lines) + "\n", "utf-8")
    print("\n".join(lines))
    ok = all(r["wall_s"] <= TARGET_S and r["equals_shipped"] for r in runs)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
