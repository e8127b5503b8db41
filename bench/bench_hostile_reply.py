"""A runaway or hostile server against the real CLI (issue 29, item 1): replies of 400 MB of text, sent as a gzip bomb
(about 400 KB on the wire) and sent as they are.

A loopback server answers every `POST /v1/chat/completions` with a chat completion whose content is 400 MB of "a",
either gzip-compressed (`Content-Encoding: gzip`, unasked for) or plain. The real CLI runs in a subprocess with a
fresh cache directory (the data files fetched into it first, untimed):

    empathybench run -m openai/x --base-url http://127.0.0.1:PORT/v1 --bench eqbench --limit 1 --out DIR --quiet

Measured per scenario: the peak resident memory of that process (`wait4`'s ru_maxrss), the growth of the response
cache (responses.sqlite and its -wal/-shm files), the requests the server received, the wall time, the exit code and
the last line the CLI printed. Targets: peak memory under 300 MB; the cache grows by no more than the reply limit
(1 MB for EQ-Bench's 60-token budget) per request. `--baseline-src DIR` runs the gzip scenario once more with
the code in DIR (e.g. /work/main/src, the tree before the bound) for comparison; it is reported, not checked.
Results go to bench/results/hostile_reply.{json,md}; the script exits 1 when a check fails.

    python bench/bench_hostile_reply.py
    python bench/bench_hostile_reply.py --baseline-src ../main/src
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_engine import bench_env  # a sibling script, not a package: the CLI's environment with a fresh cache
from empathybench import __version__
from empathybench.models.reply_bounds import derived_reply_limit
from empathybench.testing.loopback import LoopbackFake, LoopbackHandler, compressed_padding

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = REPO_ROOT / "bench" / "results"
DEFAULT_MIRROR = REPO_ROOT.parent / "shared" / "mirror"
REPLY_BYTES = 400_000_000
MAX_PEAK_RSS_MB = 300
EQBENCH_MAX_TOKENS = 60  # the paper preset's budget per EQ-Bench answer (instruments/eqbench)
COMPLETION = {
    "id": "chatcmpl-bomb",
    "object": "chat.completion",
    "created": 0,
    "model": "x",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "__PAD__"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
}
HEAD, TAIL = (part.encode() for part in json.dumps(COMPLETION).split("__PAD__"))


class _Handler(LoopbackHandler):
    def do_POST(self) -> None:
        if self.read_body(int(self.headers.get("Content-Length") or 0)) is None:
            return
        server: HostileServer = self.server.fake  # type: ignore[assignment]
        with server.lock:
            server.requests += 1
        self.send_padded(200, HEAD, REPLY_BYTES, TAIL, server.encoding)


class HostileServer(LoopbackFake):
    handler = _Handler
    thread_name = "hostile-server"

    def __init__(self, encoding: str) -> None:
        super().__init__()
        self.encoding = encoding
        self.lock = threading.Lock()
        self.requests = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


def cache_bytes(cache_dir: Path) -> int:
    return sum(p.stat().st_size for p in cache_dir.glob("responses.sqlite*") if p.is_file())


def run_and_wait(command: list[str], env: dict[str, str]) -> tuple[int, Any, str]:
    """Run `command`; (wait status, its rusage, its output), the rusage of this child alone (wait4)."""
    with tempfile.TemporaryFile("w+") as output:
        process = subprocess.Popen(command, env=env, stdout=output, stderr=subprocess.STDOUT, text=True)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        output.seek(0)
        return status, usage, output.read()


def measure(name: str, encoding: str, work: Path, mirror: str, source: str | None = None) -> dict[str, Any]:
    cache_dir = work / f"cache-{name}"
    env = bench_env(cache_dir, mirror, source)
    fetch = [sys.executable, "-m", "empathybench", "data", "fetch", "-b", "eqbench"]
    subprocess.run(fetch, env=env, check=True, capture_output=True)
    before = cache_bytes(cache_dir)
    with HostileServer(encoding) as server:
        command = [sys.executable, "-m", "empathybench", "run", "-m", "openai/x", "--base-url", server.base_url]
        command += ["--bench", "eqbench", "--limit", "1", "--out", str(work / f"run-{name}"), "--quiet"]
        started = time.monotonic()
        status, usage, output = run_and_wait(command, env)
        wall_s = time.monotonic() - started
        requests = server.requests
    grown = cache_bytes(cache_dir) - before
    lines = [line for line in output.splitlines() if line.strip()]
    samples = work / f"run-{name}" / "samples.jsonl"
    records = [json.loads(line) for line in samples.read_text("utf-8").splitlines()] if samples.exists() else []
    item = records[0] if records else {}
    return {
        "scenario": name,
        "encoding": encoding,
        "code": source or "this tree",
        "reply_bytes": REPLY_BYTES,
        "exit_code": os.waitstatus_to_exitcode(status),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "requests": requests,
        "cache_growth_bytes": grown,
        "cache_growth_per_request_bytes": round(grown / max(1, requests)),
        "wall_s": round(wall_s, 1),
        "last_line": lines[-1][:300] if lines else "",
        "item": f"{item.get('status')}: {str(item.get('error'))[:200]}" if item.get("error") else item.get("status"),
    }


def markdown(result: dict[str, Any]) -> str:
    limit_mb = result["reply_limit_bytes"] / 1e6
    rows = [
        "# Hostile replies: 400 MB of text from a loopback server (issue 29)",
        "",
        f"{result['date']}, empathybench {result['empathybench_version']}, Python {result['python']}, "
        f"{result['platform']}. `python bench/bench_hostile_reply.py`"
        + (f" `--baseline-src {result['baseline_src']}`" if result.get("baseline_src") else "")
        + ".",
        "",
        f"The gzip bomb is {result['gzip_bytes_on_the_wire']:,} bytes on the wire. Reply limit of an EQ-Bench call "
        f"(60-token budget): {limit_mb:g} MB. Targets: peak memory under "
        f"{MAX_PEAK_RSS_MB} MB; cache growth at most the limit per request.",
        "",
        "| scenario | code | exit | peak memory | requests | cache growth | per request | wall | the item's record |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in result["scenarios"]:
        rows.append(
            f"| {row['scenario']} ({row['encoding']}) | {row['code']} | {row['exit_code']} | {row['peak_rss_mb']} MB "
            f"| {row['requests']} | {row['cache_growth_bytes']:,} B | {row['cache_growth_per_request_bytes']:,} B "
            f"| {row['wall_s']} s | {str(row['item']).replace('|', '/')} |"
        )
    rows += [
        "",
        "The wall time of this tree is the engine's backoff between its 10 retries of the refused reply (each a",
        "transient server fault); each attempt stops reading at the limit.",
        "",
        "Checks: " + ("all passed" if not result["failures"] else "; ".join(result["failures"])),
        "",
    ]
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", default=os.environ.get("EMPATHYBENCH_MIRROR") or str(DEFAULT_MIRROR))
    parser.add_argument("--baseline-src", help="also run the gzip bomb with the code of this src directory")
    args = parser.parse_args()
    compressed = compressed_padding(HEAD, REPLY_BYTES, TAIL, "gzip")  # made once, before anything is measured
    limit = derived_reply_limit(EQBENCH_MAX_TOKENS)
    scenarios: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench-hostile-") as tmp:
        work = Path(tmp)
        for name, encoding in (("gzip bomb", "gzip"), ("plain", "identity")):
            scenarios.append(measure(name.replace(" ", "-"), encoding, work, args.mirror))
            print(json.dumps(scenarios[-1]), flush=True)
        if args.baseline_src:
            source = str(Path(args.baseline_src).resolve())
            scenarios.append(measure("gzip-bomb-baseline", "gzip", work, args.mirror, source))
            print(json.dumps(scenarios[-1]), flush=True)
    failures = []
    for row in scenarios:
        if row["code"] != "this tree":
            continue
        if row["peak_rss_mb"] >= MAX_PEAK_RSS_MB:
            failures.append(f"{row['scenario']}: peak memory {row['peak_rss_mb']} MB >= {MAX_PEAK_RSS_MB} MB")
        if row["cache_growth_bytes"] > limit * max(1, row["requests"]):
            failures.append(f"{row['scenario']}: the cache grew by {row['cache_growth_bytes']} bytes")
    result = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "empathybench_version": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "reply_limit_bytes": limit,
        "gzip_bytes_on_the_wire": len(compressed),
        "baseline_src": args.baseline_src,
        "scenarios": scenarios,
        "failures": failures,
    }
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / "hostile_reply.json").write_text(json.dumps(result, indent=2) + "\n", "utf-8")
    (RESULTS_DIR / "hostile_reply.md").write_text(markdown(result), "utf-8")
    print(markdown(result))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
