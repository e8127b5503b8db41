"""TactfulToM labels a run as every instrument with a published table does (issue 40, item 5), over the wire against
the loopback fake OpenAI server: the label names the dataset, the categories of the headline and of the paper's
chart, the questions not asked and the coverage; the chart's figure stands beside the headline; a shortfall stays in
n_items; replies are cleaned only for the models upstream cleaned (by name), and "yes" wins over "no"."""

import html
import json
import os
from pathlib import Path
from typing import Any

from conftest import cli_in_process
from empathybench.instruments.tactfultom.score import CHART_CATEGORIES
from empathybench.testing.fake_openai import FakeOpenAIServer

LLAMA = "meta-llama/Llama-3.3-70B-Instruct"  # upstream kept the first \boxed{...} of Llama's replies
GPT = "gpt-4o-mini"  # and cleaned none of gpt-4o's
REPLY = "\\boxed{No}, yes"  # read "no" after Llama's clean-up, "yes" without (yes wins, though no comes first)
NOT_COMPARABLE = (
    "not comparable with the published table (model {given}): the published outputs were made on the legacy set (84 "
    "conversations; sets 2 and 4 rebuilt since), a run asks the final set (100); the headline averages 11 "
    "categories, the paper's chart 7 (overall_macro_chart: the 6 of them asked); justification questions are not "
    "asked (upstream's evaluation leaves them out; the paper's chart has them); {rest}"
)


def _run(tmp_path: Path, mirror: Path, model: str, *args: str) -> tuple[Any, dict[str, Any], list[dict[str, Any]]]:
    out = tmp_path / model.replace("/", "_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "EMPATHYBENCH_"))}
    env.update(EMPATHYBENCH_CACHE_DIR=str(tmp_path / "cache"), EMPATHYBENCH_MIRROR=str(mirror), OPENAI_API_KEY="sk-t")
    with FakeOpenAIServer(answer=lambda request: REPLY, models=(model,)) as server:
        command = ["run", "-m", f"openai/{model}", "--base-url", server.base_url, "--bench", "tactfultom"]
        done = cli_in_process([*command, "--preset", "quick", *args, "--out", str(out)], env)
    summary = json.loads((out / "summary.json").read_text("utf-8"))["benchmarks"]["tactfultom"]
    records = [json.loads(line) for line in (out / "samples.jsonl").read_text("utf-8").splitlines() if line]
    return done, summary, records


def test_a_run_says_what_it_is_and_cleans_llamas_replies_as_upstream(tmp_path: Path, mirror: Path) -> None:
    done, summary, records = _run(tmp_path, mirror, LLAMA, "--limit", "11")
    assert done.returncode == 0, done.stderr
    label = NOT_COMPARABLE.format(
        given=f"{LLAMA}; replies cleaned by name: the first \\boxed{{...}} kept, as upstream for Llama and DeepSeek-V3",
        rest="11 of 4154 questions of the final set scored: 4143 not in this run (a cut)",
    )
    assert summary["comparability"] == label and summary["comparable_with_published"] is False
    assert summary["headline_note"] == label and summary["n_items"] == 11
    page = (tmp_path / LLAMA.replace("/", "_") / "report.html").read_text("utf-8")
    assert html.unescape(page).count(label) == 1
    # the paper chart's figure beside the headline: the mean of its 6 categories asked, every one counted once
    categories = summary["conditions"]["direct"]["categories"]
    assert set(CHART_CATEGORIES) <= set(categories)
    chart = summary["metrics"]["overall_macro_chart"]["value"]
    assert abs(chart - sum(categories[c]["value"] for c in CHART_CATEGORIES) / 6) < 1e-3  # 4 places
    assert summary["metrics"]["overall_macro"]["value"] == summary["score"]
    comprehension = next(r for r in records if r["category"] == "comprehensionQA")
    assert comprehension["prestep"] == "boxed" and comprehension["conditions"]["direct"]["binary"]["read"] == "no"


def test_replies_of_a_model_upstream_did_not_clean_are_read_as_they_are(tmp_path: Path, mirror: Path) -> None:
    done, summary, records = _run(tmp_path, mirror, GPT, "--limit", "1")
    assert done.returncode == 0, done.stderr
    rest = "1 of 4154 questions of the final set scored: 4153 not in this run (a cut)"
    assert summary["comparability"] == NOT_COMPARABLE.format(given=GPT, rest=rest)
    (record,) = records
    assert record["category"] == "comprehensionQA" and record["prestep"] == "none"
    assert record["conditions"]["direct"]["binary"]["read"] == "yes"  # "yes" wins over the "no" before it
    # the dataset asked, recorded for the atlas's check (the published runs answered the legacy set's 3,544)
    dataset = "final: nii-cl/tactful-tom@0881b0d8 dataset/final_set/ (100 conversations, 4,154 questions)"
    assert summary["config"]["dataset"] == dataset and summary["config"]["cot"] == [False]


def test_a_shortfall_stays_in_n_items_and_the_label(tmp_path: Path, mirror: Path) -> None:
    # o3-mini takes no max_tokens: forcing that field makes the server refuse every call (HTTP 400)
    done, summary, _ = _run(tmp_path, mirror, "o3-mini", "--limit", "2", "-M", "token_field=max_tokens")
    assert done.returncode == 1 and "2 items could not be answered" in done.stderr
    assert summary["n_items"] == 2 and summary["n_answered"] == 0 and summary["n_failed_calls"] == 2
    rest = (
        "0 of 4154 questions of the final set scored: 2 failed (a call of the model under test failed), 4152 not in "
        "this run (a cut)"
    )
    assert summary["comparability"] == NOT_COMPARABLE.format(given="o3-mini", rest=rest)
    assert summary["validity"]["status"] == "insufficient"
