"""Tokens/s of the embedded model (SmolLM2-135M-Instruct) through EmpathyBench against raw llama-cpp-python.

Both sides answer the same EQ-Bench v2 prompts with identical settings (the paper protocol's first attempt:
temperature 0.01, top_p 1, 60 new tokens, per-item seed; top_k 0, min_p 0, repeat_penalty 1 as the backend
sends them), in one process, each with its own `llama_cpp.Llama` loaded the same way:

  empathybench  `Engine.generate` with `LlamaCppBackend` and no response cache (the `--no-cache` path);
  raw           `llama_cpp.Llama.create_chat_completion` called directly.

Each side is warmed up with one untimed call (model load, first allocation). Rounds alternate which side goes
first, to spread out machine noise. Optionally (`--cli-items`, default 8) the whole CLI is timed too:
`empathybench run --model local --bench eqbench --preset paper --limit K --no-cache`, whose tokens/s comes
from its own summary (engine phase only) and includes re-asks after unparseable answers.

Results go to bench/results/local_model.json and local_model.md.

    python bench/bench_local_model.py              # 16 prompts, 2 rounds
    python bench/bench_local_model.py --prompts 4 --rounds 1 --cli-items 0
"""

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from empathybench import __version__
from empathybench.engine.engine import Engine
from empathybench.instruments.eqbench.bench import EQBench
from empathybench.models.base import ChatRequest, Sampling
from empathybench.models.llamacpp_backend import (
    DEFAULT_CONTEXT_TOKENS,
    LlamaCppBackend,
    default_threads,
    locate_embedded_gguf,
)
from empathybench.run.execute import item_seed

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = REPO_ROOT / "bench" / "results"


@dataclass
class Tally:
    """Timed calls of one side."""

    calls: int = 0
    wall_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    texts: list[str] = field(default_factory=list)

    def add(self, wall_s: float, prompt_tokens: int, completion_tokens: int, text: str) -> None:
        self.calls += 1
        self.wall_s += wall_s
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens
        self.texts.append(text)

    def as_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "wall_s": round(self.wall_s, 3),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "completion_tokens_per_s": round(self.completion_tokens / self.wall_s, 2),
            "total_tokens_per_s": round((self.prompt_tokens + self.completion_tokens) / self.wall_s, 2),
            "s_per_call": round(self.wall_s / self.calls, 4),
        }


def eqbench_requests(count: int) -> list[ChatRequest]:
    """The first `count` paper-preset prompts, with the sampling of their first attempt."""
    prepared = EQBench().prepare_preset("paper", {}, limit=count, seed=0, allow_unverified=False)
    config = prepared.config
    requests = []
    for item in prepared.items:
        sampling = Sampling(
            temperature=config["temperature"],
            max_tokens=config["max_tokens"],
            top_p=1.0,
            stop=tuple(config["stop"]),
            seed=item_seed(0, prepared.name, item.id),
        )
        requests.append(ChatRequest.of(item.payload.prompt, sampling))
    return requests


class ThroughEmpathyBench:
    def __init__(self, model_path: Path, threads: int) -> None:
        self.backend = LlamaCppBackend(model_path, model_name="smollm2-135m-instruct", n_threads=threads)
        self.engine = Engine(self.backend, cache=None)
        self.loop = asyncio.new_event_loop()

    def ask(self, request: ChatRequest) -> tuple[float, int, int, str]:
        started = time.perf_counter()
        _, generation = self.loop.run_until_complete(self.engine.generate(request.messages, request.sampling))
        wall = time.perf_counter() - started
        return wall, generation.prompt_tokens, generation.completion_tokens, generation.text

    def close(self) -> None:
        self.loop.run_until_complete(self.backend.aclose())
        self.loop.close()


class Raw:
    def __init__(self, model_path: Path, threads: int) -> None:
        import llama_cpp

        # Loaded exactly as LlamaCppBackend loads it.
        self.llm = llama_cpp.Llama(
            model_path=str(model_path),
            n_ctx=DEFAULT_CONTEXT_TOKENS,
            n_threads=threads,
            n_threads_batch=threads,
            seed=0,
            verbose=False,
        )

    def ask(self, request: ChatRequest) -> tuple[float, int, int, str]:
        s = request.sampling
        started = time.perf_counter()
        result = self.llm.create_chat_completion(
            messages=request.messages_as_dicts(),
            temperature=s.temperature,
            top_p=s.top_p,
            top_k=0,
            min_p=0.0,
            repeat_penalty=1.0,
            max_tokens=s.max_tokens,
            stop=list(s.stop) or None,
            seed=s.seed if s.seed is not None else 0,
        )
        wall = time.perf_counter() - started
        usage = result["usage"]
        text = result["choices"][0]["message"]["content"] or ""
        return wall, usage["prompt_tokens"], usage["completion_tokens"], text


def compare(prompts: int, rounds: int, threads: int) -> dict[str, Any]:
    model_path = locate_embedded_gguf()
    requests = eqbench_requests(prompts + 1)
    warmup, timed = requests[0], requests[1:]

    started = time.perf_counter()
    ours = ThroughEmpathyBench(model_path, threads)
    ours.ask(warmup)  # the backend loads the model lazily, on its first call
    ours_load_s = time.perf_counter() - started
    started = time.perf_counter()
    raw = Raw(model_path, threads)
    raw.ask(warmup)
    raw_load_s = time.perf_counter() - started

    tallies = {"empathybench": Tally(), "raw": Tally()}
    sides = {"empathybench": ours.ask, "raw": raw.ask}
    for round_index in range(rounds):
        order = ["empathybench", "raw"] if round_index % 2 == 0 else ["raw", "empathybench"]
        for side in order:
            print(f"  round {round_index + 1}/{rounds}: {side} ...", flush=True)
            for request in timed:
                tallies[side].add(*sides[side](request))
    ours.close()

    a, b = tallies["empathybench"], tallies["raw"]
    same = sum(1 for x, y in zip(a.texts, b.texts, strict=True) if x == y)
    return {
        "model_file": model_path.name,
        "threads": threads,
        "prompts": prompts,
        "rounds": rounds,
        "warmup_and_load_s": {"empathybench": round(ours_load_s, 3), "raw": round(raw_load_s, 3)},
        "empathybench": a.as_dict(),
        "raw": b.as_dict(),
        "speed_ratio": round(a.as_dict()["completion_tokens_per_s"] / b.as_dict()["completion_tokens_per_s"], 4),
        "overhead_ms_per_call": round(1000 * (a.wall_s - b.wall_s) / a.calls, 2),
        "identical_replies": f"{same}/{a.calls}",
    }


def through_cli(items: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="eb-bench-") as scratch:
        out = Path(scratch) / "run"
        env = dict(os.environ)
        env["EMPATHYBENCH_CACHE_DIR"] = str(Path(scratch) / "cache")  # a fresh cache: nothing reused
        command = [
            sys.executable,
            "-m",
            "empathybench",
            "run",
            "--model",
            "local",
            "--bench",
            "eqbench",
            "--preset",
            "paper",
            "--limit",
            str(items),
            "--no-cache",
            "--quiet",
            "--out",
            str(out),
        ]
        started = time.perf_counter()
        result = subprocess.run(command, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - started
        if result.returncode != 0:
            return {"error": result.stderr.strip().splitlines()[-1:], "returncode": result.returncode}
        summary = json.loads((out / "summary.json").read_text("utf-8"))
    usage, elapsed = summary["usage"], summary["elapsed_s"]
    return {
        "items": items,
        "calls": usage["calls"],
        "process_wall_s": round(wall, 3),
        "engine_elapsed_s": elapsed,
        "prompt_tokens": usage["prompt_tokens"],
        "completion_tokens": usage["completion_tokens"],
        "completion_tokens_per_s": round(usage["completion_tokens"] / elapsed, 2),
        "total_tokens_per_s": round((usage["prompt_tokens"] + usage["completion_tokens"]) / elapsed, 2),
        "eqbench_n_parsed": summary["benchmarks"]["eqbench"]["n_parsed"],
    }


def markdown(results: dict[str, Any]) -> str:
    c = results["comparison"]
    lines = [
        f"# Embedded model benchmark ({results['date']})",
        "",
        f"{c['model_file']}, {c['threads']} thread(s), {c['prompts']} EQ-Bench v2 prompts x {c['rounds']} rounds, "
        f"on {results['machine']['platform']} ({results['machine']['cpus']} CPUs), "
        f"llama-cpp-python {results['llama_cpp_python']}.",
        "",
        "| path | calls | completion tok/s | prompt+completion tok/s | s/call |",
        "|---|---|---|---|---|",
    ]
    for side in ("empathybench", "raw"):
        t = c[side]
        speeds = f"{t['completion_tokens_per_s']} | {t['total_tokens_per_s']}"
        lines.append(f"| {side} | {t['calls']} | {speeds} | {t['s_per_call']} |")
    lines += [
        "",
        f"EmpathyBench / raw completion tokens/s: **{c['speed_ratio']:.3f}**; overhead "
        f"{c['overhead_ms_per_call']:+.1f} ms per call; identical replies {c['identical_replies']}.",
    ]
    cli = results.get("cli")
    if cli and "error" not in cli:
        lines += [
            "",
            f"Whole CLI (`--preset paper --limit {cli['items']} --no-cache`): {cli['calls']} calls, "
            f"{cli['completion_tokens_per_s']} completion tok/s, {cli['total_tokens_per_s']} prompt+completion "
            f"tok/s over the engine phase ({cli['engine_elapsed_s']} s); process wall time {cli['process_wall_s']} s.",
        ]
    elif cli:
        lines += ["", f"Whole CLI run failed: {cli['error']}"]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompts", type=int, default=16, help="timed EQ-Bench prompts per round (default 16)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds, alternating which side goes first")
    parser.add_argument("--threads", type=int, default=default_threads(), help="llama.cpp threads, both sides")
    parser.add_argument("--cli-items", type=int, default=8, help="items of the whole-CLI run (0: skip it)")
    parser.add_argument("--results", type=Path, default=RESULTS_DIR, help="where to write local_model.json/.md")
    args = parser.parse_args()

    if "EMPATHYBENCH_MIRROR" not in os.environ and (REPO_ROOT.parent / "shared" / "mirror").is_dir():
        os.environ["EMPATHYBENCH_MIRROR"] = str(REPO_ROOT.parent / "shared" / "mirror")
    import llama_cpp

    print(f"comparing on {args.prompts} prompts x {args.rounds} rounds, {args.threads} thread(s) ...", flush=True)
    comparison = compare(args.prompts, args.rounds, args.threads)
    cli = None
    if args.cli_items > 0:
        print(f"whole CLI on {args.cli_items} items ...", flush=True)
        cli = through_cli(args.cli_items)
    results = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "empathybench_version": __version__,
        "llama_cpp_python": getattr(llama_cpp, "__version__", None),
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        },
        "comparison": comparison,
        "cli": cli,
    }
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / "local_model.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    table = markdown(results)
    (args.results / "local_model.md").write_text(table, encoding="utf-8")
    print(table)


if __name__ == "__main__":
    main()
