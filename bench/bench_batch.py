"""`run --batch` on the 171 EQ-Bench items (paper preset) against the fake servers (issue 13, item 3).

For each provider (OpenAI Files + Batches on the fake OpenAI server, Anthropic Message Batches on the fake
Anthropic server) the real CLI runs in a subprocess, each time with a fresh response cache:

1. live: `empathybench run --model M --bench eqbench --preset paper` (the yardstick answers);
2. batch: the same with `--batch --batch-poll-interval 0.05`;
3. kill: the same as 2 in a new run directory, with the fake holding the batch "in progress"; once the run has
   polled it 3 times it is killed with SIGKILL, the batch is released and the same command runs again.

The fake answers every score line with a value that depends on the prompt, so the answers differ between items.

Targets: at most 2 batches for the 171 items; no chat-completions / Messages call in the batch runs; parsed
answers identical to the live run's for every item; after the kill, the rerun creates 0 new batches and
completes. Results go to bench/results/batch.{json,md}; the script exits 1 when a check fails.

    python bench/bench_batch.py
    python bench/bench_batch.py --provider openai
"""

import argparse
import hashlib
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from empathybench import __version__
from empathybench.testing.fake_anthropic import FakeAnthropicServer
from empathybench.testing.fake_openai import FakeOpenAIServer, fill_score_lines

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = REPO_ROOT / "bench" / "results"
PAPER_ITEMS = 171
MAX_BATCHES = 2
MODELS = {"openai": "openai/fake", "anthropic": "anthropic/claude-fake-1"}
OPENAI_KEY = "sk-bench-not-a-secret"
ANTHROPIC_KEY = "sk-ant-bench-not-a-secret"


def varied_scores(request: dict[str, Any]) -> str:
    """Score lines whose value depends on the prompt (0-10), so that items get different answers."""
    messages = request.get("messages") or []
    text = "".join(str(m.get("content")) for m in messages if isinstance(m, dict))
    return fill_score_lines(request, int(hashlib.sha256(text.encode()).hexdigest(), 16) % 11)


def bench_env(cache_dir: Path, mirror: str | None, openai_url: str, anthropic_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "EMPATHYBENCH_"))}
    env.update(EMPATHYBENCH_CACHE_DIR=str(cache_dir), OPENAI_API_KEY=OPENAI_KEY, ANTHROPIC_API_KEY=ANTHROPIC_KEY)
    env.update(OPENAI_BASE_URL=openai_url, ANTHROPIC_BASE_URL=anthropic_url)
    if mirror:
        env["EMPATHYBENCH_MIRROR"] = mirror
    return env


def run_command(model: str, out: Path, *extra: str) -> list[str]:
    command = [sys.executable, "-m", "empathybench", "run", "--model", model, "--bench", "eqbench"]
    return [*command, "--preset", "paper", "--out", str(out), "--quiet", *extra]


def parsed_answers(run_dir: Path) -> dict[str, Any]:
    lines = (run_dir / "samples.jsonl").read_text("utf-8").splitlines()
    return {r["item_id"]: {"status": r["status"], "parsed": r.get("parsed")} for r in map(json.loads, lines)}


def chat_calls(openai_server: FakeOpenAIServer, anthropic_server: FakeAnthropicServer) -> int:
    return openai_server.requests_total + anthropic_server.requests_total


def one_provider(provider: str, args: argparse.Namespace) -> dict[str, Any]:
    model = MODELS[provider]
    batch_options = ["--batch", "--batch-poll-interval", str(args.poll)]
    result: dict[str, Any] = {"provider": provider, "model": model}
    with tempfile.TemporaryDirectory(prefix="eb-batch-") as scratch:
        root = Path(scratch)
        with FakeOpenAIServer(answer=varied_scores) as oa, FakeAnthropicServer(answer=varied_scores) as an:
            fake = oa.batches if provider == "openai" else an.batches

            def env(name: str) -> dict[str, str]:
                return bench_env(root / name, args.mirror, oa.base_url, an.base_url)

            started = time.perf_counter()
            live = subprocess.run(run_command(model, root / "live"), env=env("c-live"), capture_output=True, text=True)
            result["live"] = {
                "returncode": live.returncode,
                "wall_s": round(time.perf_counter() - started, 2),
                "chat_calls": chat_calls(oa, an),
            }
            calls_before = chat_calls(oa, an)
            started = time.perf_counter()
            batch = subprocess.run(
                run_command(model, root / "batch", *batch_options), env=env("c-batch"), capture_output=True, text=True
            )
            run_info = json.loads((root / "batch" / "run.json").read_text("utf-8")) if batch.returncode == 0 else {}
            result["batch"] = {
                "returncode": batch.returncode,
                "stderr_tail": batch.stderr[-300:],
                "wall_s": round(time.perf_counter() - started, 2),
                "chat_calls": chat_calls(oa, an) - calls_before,
                "batches_created": fake.batches_created,
                "polls": fake.retrieves,
                "batch_record": run_info.get("batch"),
                "journal_bytes": (root / "batch" / "batches.jsonl").stat().st_size,
            }

            # Kill -9 while polling, then the same command again.
            created_before, calls_before = fake.batches_created, chat_calls(oa, an)
            polls_before = fake.retrieves
            fake.hold = True
            command = run_command(model, root / "killed", *batch_options)
            process = subprocess.Popen(command, env=env("c-kill"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 300
            while fake.retrieves - polls_before < 3 and time.monotonic() < deadline and process.poll() is None:
                time.sleep(0.05)
            polled_before_kill = fake.retrieves - polls_before
            os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
            created_by_killed = fake.batches_created - created_before
            fake.hold = False
            started = time.perf_counter()
            rerun = subprocess.run(command, env=env("c-kill"), capture_output=True, text=True)
            rerun_info = json.loads((root / "killed" / "run.json").read_text("utf-8")) if rerun.returncode == 0 else {}
            result["kill"] = {
                "polls_before_kill": polled_before_kill,
                "batches_created_before_kill": created_by_killed,
                "rerun_returncode": rerun.returncode,
                "rerun_stderr_tail": rerun.stderr[-300:],
                "rerun_wall_s": round(time.perf_counter() - started, 2),
                "new_batches_on_rerun": fake.batches_created - created_before - created_by_killed,
                "chat_calls": chat_calls(oa, an) - calls_before,
                "batch_record": rerun_info.get("batch"),
            }
        live_answers = parsed_answers(root / "live") if live.returncode == 0 else {}
        for name in ("batch", "killed"):
            answers = parsed_answers(root / name) if (root / name / "samples.jsonl").exists() else {}
            same = sum(1 for k, v in answers.items() if live_answers.get(k) == v)
            result["batch" if name == "batch" else "kill"]["items"] = len(answers)
            result["batch" if name == "batch" else "kill"]["identical_to_live"] = same
    b, k = result["batch"], result["kill"]
    result["checks"] = {
        "live_ok": result["live"]["returncode"] == 0 and result["live"]["chat_calls"] == PAPER_ITEMS,
        "batch_ok": b["returncode"] == 0 and b["items"] == PAPER_ITEMS,
        "at_most_2_batches": 1 <= b["batches_created"] <= MAX_BATCHES,
        "no_chat_call": b["chat_calls"] == 0 and k["chat_calls"] == 0,
        "answers_identical_to_live": b["identical_to_live"] == PAPER_ITEMS and k["identical_to_live"] == PAPER_ITEMS,
        "killed_while_polling": k["polls_before_kill"] >= 3 and k["batches_created_before_kill"] >= 1,
        "rerun_0_new_batches": k["rerun_returncode"] == 0 and k["new_batches_on_rerun"] == 0,
    }
    return result


def write_markdown(path: Path, data: dict[str, Any]) -> None:
    lines = [
        f"# `run --batch`: {PAPER_ITEMS} EQ-Bench items (paper preset) against the fake servers",
        "",
        f"{data['date']}, empathybench {data['empathybench_version']}, Python {data['python']}, "
        f"poll interval {data['poll_interval_s']} s. Script: `bench/bench_batch.py`.",
        "",
        "| provider | live wall | batch wall | batches | chat calls (batch, kill+rerun) | identical to live "
        "| polls before kill | new batches on rerun | rerun wall | checks |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in data["providers"]:
        b, k = r["batch"], r["kill"]
        ok = "pass" if all(r["checks"].values()) else "FAIL: " + ", ".join(n for n, v in r["checks"].items() if not v)
        lines.append(
            f"| {r['provider']} | {r['live']['wall_s']} s | {b['wall_s']} s | {b['batches_created']} "
            f"| {b['chat_calls']}, {k['chat_calls']} | {b['identical_to_live']}/{b['items']}, "
            f"{k['identical_to_live']}/{k['items']} | {k['polls_before_kill']} | {k['new_batches_on_rerun']} "
            f"| {k['rerun_wall_s']} s | {ok} |"
        )
    lines += [
        "",
        "Targets (issue 13): at most 2 batches, no chat-completion call, parsed answers identical to the live path; "
        "kill -9 while polling, rerun: 0 new batches. Walls are whole CLI processes (start-up, data check, reports).",
        "",
    ]
    path.write_text("\n".join(lines), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--provider", choices=[*MODELS, "both"], default="both")
    parser.add_argument("--poll", type=float, default=0.05, help="--batch-poll-interval of the runs, seconds")
    default_mirror = REPO_ROOT.parent / "shared" / "mirror"
    parser.add_argument(
        "--mirror",
        default=os.environ.get("EMPATHYBENCH_MIRROR") or (str(default_mirror) if default_mirror.is_dir() else None),
    )
    args = parser.parse_args()
    providers = list(MODELS) if args.provider == "both" else [args.provider]
    data: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "empathybench_version": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "poll_interval_s": args.poll,
        "items": PAPER_ITEMS,
        "providers": [one_provider(provider, args) for provider in providers],
    }
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / "batch.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    write_markdown(RESULTS_DIR / "batch.md", data)
    print((RESULTS_DIR / "batch.md").read_text("utf-8"))
    if not all(all(r["checks"].values()) for r in data["providers"]):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
