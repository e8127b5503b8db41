"""`empathybench report RUN --against-published`: a fake server that answers EQ-Bench v2 with a released model's own
answers reproduces its published run (consistent, within the instrument's margin); the same answers altered do not
(differs); a few noisy items cannot say (inconclusive)."""

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from conftest import MIRROR, cli_in_process, words_joined
from empathybench.data.fetch import fetch_pinned
from empathybench.testing.fake_openai import FakeOpenAIServer

RELEASED = "EQ-bench/EQ-Bench/d28c60c514fe6667dc5818114ed10088f91f09f3/results/eq-bench/"
MODEL_FILE = "Qwen__Qwen-72B-Chat_eqbench_v2_results.json"
N_ITEMS = 40


def _released_answers(model_file: str = MODEL_FILE) -> dict[str, str]:
    data = json.loads((MIRROR / RELEASED / model_file).read_text("utf-8"))
    return data["raw_results"]["1"]["raw_inference"]


def _answerer(shift: int, model_file: str = MODEL_FILE) -> Any:
    """An answer function: the released model's own reply to the question asked, each rating moved by `shift`."""
    questions = json.loads(
        fetch_pinned("empathybench.instruments.eqbench", "eqbench/v2/eq_bench_v2_questions_171.json").path.read_text()
    )
    released = _released_answers(model_file)
    # the dialogue, the character and the four emotions tell the questions apart
    markers = {
        qid: item["prompt"].split("dialogue:", 1)[1].split("Give each")[0].strip() for qid, item in questions.items()
    }
    assert len(set(markers.values())) == len(markers)

    def answer(request: dict[str, Any]) -> str:
        content = request["messages"][-1]["content"]
        qid = next(q for q, marker in markers.items() if marker in content)
        text = released[qid]
        if shift:
            text = re.sub(r"(: *)(\d+)", lambda m: f"{m.group(1)}{min(10, int(m.group(2)) + shift)}", text)
        return text

    return answer


def _run(
    root: Path,
    name: str,
    shift: int,
    model: str = "Qwen/Qwen-72B-Chat",
    options: tuple[str, ...] = ("-n", str(N_ITEMS), "-O", "eqbench.sigmoid_rule=lt5"),
) -> tuple[Path, dict[str, str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    env.update(EMPATHYBENCH_CACHE_DIR=str(root / "cache"), OPENAI_API_KEY="sk-test", COLUMNS="200")
    model_file = f"{model.replace('/', '__')}_eqbench_v2_results.json"
    with FakeOpenAIServer(answer=_answerer(shift, model_file)) as server:
        args = ["run", "-m", f"openai/{model}", "--base-url", server.base_url, "-b", "eqbench", "-p", "paper"]
        args += [*options, "-o", name, "--quiet", "--no-cache"]
        result = cli_in_process(args, env, cwd=root)
        assert result.returncode == 0, result.stderr
    return root / name, env


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, dict[str, str]]]:
    if not MIRROR.is_dir():
        pytest.skip(f"the offline mirror is not at {MIRROR}")
    root = tmp_path_factory.mktemp("reproduce")
    return {
        "same": _run(root, "same", 0),
        "altered": _run(root, "altered", 3),
        # all 171 items under the run's default le5 rule, where the published runs used lt5
        "gpt-4-0613": _run(root, "gpt-4-0613", 0, "gpt-4-0613", ()),
    }


def _check(run: Path, env: dict[str, str]) -> dict[str, Any]:
    result = cli_in_process(["report", str(run), "--against-published", "--json"], env, cwd=run.parent)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["instruments"]["eqbench"]


def test_the_released_models_own_answers_reproduce_its_published_run(runs: dict[str, Any]) -> None:
    check = _check(*runs["same"])
    assert check["matched"]["model"] == "Qwen/Qwen-72B-Chat" and check["matched"]["relation"] == "same checkpoint"
    assert check["published_value"] == 80.7 and check["recomputed_value"] == 80.7
    comparison = check["comparison"]
    assert comparison["kind"] == "paired over items" and comparison["n"] == N_ITEMS
    assert comparison["difference"] == 0.0 and comparison["ci95"] == [0.0, 0.0]
    assert check["verdict"] == "consistent"
    # the margin is the instrument's, with where it comes from
    assert check["margin"]["value"] > 0 and "upstream publishes no run-to-run figure" in check["margin"]["source"]
    # the run's own settings match the published run's where both record them; the rest are named
    assert check["settings"]["differs"] == {}
    assert check["settings"]["not_recorded_by_the_run"]["inference_engine"] == "transformers"


def test_altered_answers_differ_from_the_published_run(runs: dict[str, Any]) -> None:
    check = _check(*runs["altered"])
    comparison = check["comparison"]
    # worse item by item, by more than the margin over the whole interval
    assert check["verdict"] == "differs" and comparison["ci95"][1] < -check["margin"]["value"]
    assert comparison["difference"] < 0


def test_the_check_in_the_terminal_and_its_refusals(runs: dict[str, Any]) -> None:
    run, env = runs["altered"]
    text = cli_in_process(["report", str(run), "--against-published"], env, cwd=run.parent)
    assert text.returncode == 0, text.stderr
    assert "eqbench: Qwen/Qwen-72B-Chat (recomputed): published 80.70, recomputed 80.70" in text.stdout
    assert ": differs" in text.stdout and "published run's settings this run does not record" in text.stdout
    assert "margin ±1.00: differs" in text.stdout and "arXiv:2312.06281" in text.stdout
    # at 80 columns the lines wrap between words: the model's name stays whole
    narrow = cli_in_process(["report", str(run), "--against-published"], {**env, "COLUMNS": "80"}, cwd=run.parent)
    lines = narrow.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80 and sum("Qwen/Qwen-72B-Chat" in line for line in lines) >= 2
    two = cli_in_process(["report", str(run), str(runs["same"][0]), "--against-published"], env, cwd=run.parent)
    assert two.returncode != 0 and len(two.stderr.strip().splitlines()) == 1


def test_the_report_places_the_run_and_shows_the_check(runs: dict[str, Any]) -> None:
    for name, verdict in (("same", "consistent"), ("altered", "differs")):
        run, _ = runs[name]
        html = words_joined((run / "report.html").read_text("utf-8"))  # written by the run itself
        assert "Among the published models" in html
        # the instrument's own section says it in one line, linking to the block
        section = html.split('data-benchmark="eqbench"', 1)[1]
        line = section.split("among the published models: ", 1)[1].split("</p>", 1)[0]
        assert line.startswith("rank ") and f": {verdict}" in line and 'href="#published"' in line
        block = html.split("Among the published models", 1)[1]
        assert "of 87" in block and "Qwen/Qwen-72B-Chat: published 80.70" in block and f": {verdict}" in block
        assert f"margin ±1.00: {verdict} (margin: 1 point of the 0-100 score" in block  # the margin and its source
        markdown = (run / "report.md").read_text("utf-8").split("## Among the published models", 1)[1]
        assert "| EQ-Bench |" in markdown and f": {verdict}" in markdown.split("\n## ", 1)[0]


def test_a_scoring_rule_that_moves_the_score_by_hundredths_is_consistent(runs: dict[str, Any]) -> None:
    """gpt-4-0613's own answers under the run's default le5 rule, against its published lt5 run: the rule scores a few
    answers otherwise, a difference of hundredths of a point whose interval lies well within the margin, so the
    verdict is `consistent`, printed with the digits that show it."""
    run, env = runs["gpt-4-0613"]
    check = _check(run, env)
    comparison = check["comparison"]
    assert check["matched"]["model_id"] == "gpt-4-0613" and comparison["n"] == 171
    low, high = comparison["ci95"]
    assert comparison["difference"] != 0 and -0.1 < low < high < 0.1
    assert check["verdict"] == "consistent"
    assert check["settings"]["differs"]["sigmoid_rule"] == {"run": "le5", "published": "lt5"}
    text = cli_in_process(["report", str(run), "--against-published"], env, cwd=run.parent).stdout
    line = next(line for line in text.splitlines() if line.strip().startswith("difference "))
    shown = [float(x) for x in re.findall(r"[-+]?\d+\.\d+", line)[:3]]
    assert all(x != 0 for x in shown), line  # not "+0.00 [0.00, 0.00]"
    assert shown == [comparison["difference"], low, high] and line.endswith(": consistent")


def test_a_few_noisy_items_are_inconclusive() -> None:
    """Five items, each far from the published run's in either direction, their mean near it: the interval straddles
    the margin, so the check cannot say."""
    from empathybench.atlas.data import shipped_atlas
    from empathybench.atlas.reproduce import check_run
    from empathybench.rundir.reader import RunData

    atlas = shipped_atlas()
    entry = next(e for e in atlas["entries"] if e["instrument"] == "eqbench" and e["model_id"] == "gpt-4-0613")
    keys = sorted(entry["items"])[:5]
    noise = (0.5, -0.4, 0.45, -0.35, 0.1)  # per item on the 0-10 item scale: the score moves by 10 x the mean
    items = {k: entry["items"][k] + d for k, d in zip(keys, noise, strict=True)}
    metric = {"value": 80.0, "ci95": [70.0, 90.0], "n": 5, "items": items, "scale": entry["scale"]}
    summary = {"model": "openai/gpt-4-0613", "benchmarks": {"eqbench": {"metrics": {"score": metric}, "config": {}}}}
    check = check_run(atlas, RunData(Path("noisy"), summary, {}))["instruments"]["eqbench"]
    low, high = check["comparison"]["ci95"]
    margin = check["margin"]["value"]
    assert low < margin < high or low < -margin < high
    assert check["verdict"] == "inconclusive"


def test_the_equivalence_verdict() -> None:
    from empathybench.atlas.reproduce import equivalence_verdict

    assert equivalence_verdict([0.0006, 0.0028], 1.0) == "consistent"
    assert equivalence_verdict([-1.0, 1.0], 1.0) == "consistent"  # the bounds are within
    assert equivalence_verdict([1.2, 3.0], 1.0) == "differs"
    assert equivalence_verdict([-5.0, -1.01], 1.0) == "differs"
    assert equivalence_verdict([0.5, 1.5], 1.0) == "inconclusive"
    assert equivalence_verdict([-2.0, 2.0], 1.0) == "inconclusive"
    assert equivalence_verdict(None, 1.0) is None


def test_a_gguf_files_quantisation_is_compared_with_the_published_runs(runs: dict[str, Any], tmp_path: Path) -> None:
    """A llama.cpp run names its GGUF file: the file's base name is the checkpoint (TheBloke's llama-2-70b-chat.*.gguf
    are Llama-2-70b-chat), and its Q8_0 is named against the published run's Q4_K_M (EQ-Bench v2's released file
    downloads `*Q4_K_M.gguf`)."""
    import shutil

    source, env = runs["same"]
    run = tmp_path / "gguf"
    shutil.copytree(source, run)
    spec = "llamacpp/models/llama-2-70b-chat.Q8_0.gguf"
    summary = json.loads((run / "summary.json").read_text("utf-8"))
    (run / "summary.json").write_text(json.dumps({**summary, "model": spec}), "utf-8")
    check = _check(run, env)
    assert check["matched"]["model_id"] == "llama-2-70b-chat" and check["matched"]["relation"] == "same checkpoint"
    assert check["matched"]["model"] == "TheBloke/Llama-2-70B-Chat-GGUF"
    assert check["settings"]["differs"]["quantisation"] == {"run": "GGUF Q8_0", "published": "GGUF Q4_K_M"}
    text = cli_in_process(["report", str(run), "--against-published"], env, cwd=run.parent).stdout
    assert "quantisation" in text and "GGUF Q8_0" in text and "GGUF Q4_K_M" in text
