"""How fast the embedded model reads a prompt: the settings before and after 2026-11-26, and the replies.

Most of an embedded-model call's time is reading the prompt (the demo's calls have 100 to 950 prompt tokens and at
most 96 new ones). This script loads SmolLM2-135M-Instruct three times (same context and seed, the generation
threads of `default_threads()`):

  before      prompts read with the generation threads (one core fewer than the machine has), no flash attention;
  all cores   prompts read with every core (`default_batch_threads()`), no flash attention;
  now         every core and flash attention, as `LlamaCppBackend` loads it;

and times the same chat prompts of about 300, 600 and 1,000 tokens on each, rotating which goes first, each prompt
read fresh (the KV cache reset). It also counts the greedy replies (16 new tokens) identical to "before".

Results go to bench/results/local_attention.json and .md.

    python bench/bench_local_attention.py            # 3 rounds
"""

import argparse
import json
import os
import platform
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from empathybench.models.llamacpp_backend import (
    DEFAULT_CONTEXT_TOKENS,
    FLASH_ATTENTION,
    default_batch_threads,
    default_threads,
    locate_embedded_gguf,
)

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = REPO_ROOT / "bench" / "results"
# Invented text (no benchmark item): a paragraph repeated to the sizes wanted.
PARAGRAPH = (
    "Mara had waited at the station for an hour when her brother finally called to say he would not come. "
    "She said it was fine, put the phone away and watched the trains leave one after another. "
)


def prompt(repeats: int) -> list[dict[str, str]]:
    text = PARAGRAPH * repeats + "\nHow does Mara feel? Answer in one word."
    return [{"role": "user", "content": text}]


VARIANTS = {  # name: (threads reading the prompt, flash attention)
    "before": (default_threads(), False),
    "all cores": (default_batch_threads(), False),
    "now": (default_batch_threads(), FLASH_ATTENTION),
}


def load(batch_threads: int, flash: bool) -> Any:
    import llama_cpp

    return llama_cpp.Llama(
        model_path=str(locate_embedded_gguf()),
        n_ctx=DEFAULT_CONTEXT_TOKENS,
        n_threads=default_threads(),
        n_threads_batch=batch_threads,
        flash_attn=flash,
        seed=0,
        verbose=False,
    )


def timed(llm: Any, messages: list[dict[str, str]]) -> tuple[float, int, str]:
    llm.reset()  # read the prompt fresh, as a call with another prompt before it would
    started = time.perf_counter()
    result = llm.create_chat_completion(messages, max_tokens=16, temperature=0.0, seed=0)
    return time.perf_counter() - started, result["usage"]["prompt_tokens"], result["choices"][0]["message"]["content"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    models = {name: load(*settings) for name, settings in VARIANTS.items()}
    names = list(VARIANTS)
    sizes = {"~300": 7, "~600": 14, "~1000": 24}
    seconds: dict[str, dict[str, list[float]]] = {size: {name: [] for name in names} for size in sizes}
    tokens: dict[str, int] = {}
    same = dict.fromkeys(names, 0)
    for round_index in range(args.rounds):
        order = names[round_index % len(names) :] + names[: round_index % len(names)]
        for size, repeats in sizes.items():
            replies = {}
            for name in order:
                wall, prompt_tokens, text = timed(models[name], prompt(repeats))
                seconds[size][name].append(wall)
                tokens[size] = prompt_tokens
                replies[name] = text
            for name in names:
                same[name] += replies[name] == replies["before"]
    rows = {
        size: {
            "prompt_tokens": tokens[size],
            **{name: round(statistics.median(seconds[size][name]), 3) for name in names},
            "now_over_before": round(
                statistics.median(seconds[size]["now"]) / statistics.median(seconds[size]["before"]), 3
            ),
        }
        for size in sizes
    }
    result = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "load_after": os.getloadavg()},
        "variants": {name: {"batch_threads": t, "flash_attn": f} for name, (t, f) in VARIANTS.items()},
        "generation_threads": default_threads(),
        "rounds": args.rounds,
        "rows": rows,
        "replies_identical_to_before": {name: [same[name], args.rounds * len(sizes)] for name in names},
    }
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / "local_attention.json").write_text(json.dumps(result, indent=1) + "\n", "utf-8")
    table = "\n".join(
        f"| {size} | {row['prompt_tokens']} | "
        + " | ".join(str(row[name]) for name in names)
        + f" | {row['now_over_before']} |"
        for size, row in rows.items()
    )
    settings = "; ".join(
        f"{name}: {t} thread(s), flash attention {'on' if f else 'off'}" for name, (t, f) in VARIANTS.items()
    )
    identical = ", ".join(f"{name} {n}/{total}" for name, (n, total) in result["replies_identical_to_before"].items())
    md = f"""# How fast the embedded model reads a prompt ({result["date"]})

SmolLM2-135M-Instruct (Q4_1), {default_threads()} generation thread(s); reading the prompt with {settings}.
{args.rounds} rounds rotating the order, each prompt read fresh, 16 new tokens (greedy); {os.cpu_count()} CPUs
({result["machine"]["platform"]}). Seconds per call, median.

| prompt | prompt tokens | {" | ".join(names)} | now / before |
|---|---|{"---|" * len(names)}---|
{table}

Replies identical to "before": {identical}.
"""
    (RESULTS_DIR / "local_attention.md").write_text(md, "utf-8")
    print(md)


if __name__ == "__main__":
    main()
