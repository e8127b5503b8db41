"""`empathybench report RUN --against-published`: a fake server that answers EQ-Bench v2 with a released model's own
answers reproduces its published run (consistent); the same answers altered do not (differs)."""

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


def _released_answers() -> dict[str, str]:
    data = json.loads((MIRROR / RELEASED / MODEL_FILE).read_text("utf-8"))
    return data["raw_results"]["1"]["raw_inference"]


def _answerer(shift: int) -> Any:
    """An answer function: the released model's own reply to the question asked, each rating moved by `shift`."""
    questions = json.loads(
        fetch_pinned("empathybench.instruments.eqbench", "eqbench/v2/eq_bench_v2_questions_171.json").path.read_text()
    )
    released = _released_answers()
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


def _run(root: Path, name: str, shift: int) -> tuple[Path, dict[str, str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    env.update(EMPATHYBENCH_CACHE_DIR=str(root / "cache"), OPENAI_API_KEY="sk-test", COLUMNS="200")
    with FakeOpenAIServer(answer=_answerer(shift)) as server:
        args = ["run", "-m", "openai/Qwen/Qwen-72B-Chat", "--base-url", server.base_url, "-b", "eqbench"]
        args += [
            "-p",
            "paper",
            "-n",
            str(N_ITEMS),
            "-O",
            "eqbench.sigmoid_rule=lt5",
            "-o",
            name,
            "--quiet",
            "--no-cache",
        ]
        result = cli_in_process(args, env, cwd=root)
        assert result.returncode == 0, result.stderr
    return root / name, env


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, dict[str, str]]]:
    if not MIRROR.is_dir():
        pytest.skip(f"the offline mirror is not at {MIRROR}")
    root = tmp_path_factory.mktemp("reproduce")
    return {"same": _run(root, "same", 0), "altered": _run(root, "altered", 3)}


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
    # the run's own settings match the published run's where both record them; the rest are named
    assert check["settings"]["differs"] == {}
    assert check["settings"]["not_recorded_by_the_run"]["inference_engine"] == "transformers"


def test_altered_answers_differ_from_the_published_run(runs: dict[str, Any]) -> None:
    check = _check(*runs["altered"])
    comparison = check["comparison"]
    assert check["verdict"] == "differs" and comparison["ci95"][1] < 0  # worse item by item
    assert comparison["difference"] < 0


def test_the_check_in_the_terminal_and_its_refusals(runs: dict[str, Any]) -> None:
    run, env = runs["altered"]
    text = cli_in_process(["report", str(run), "--against-published"], env, cwd=run.parent)
    assert text.returncode == 0, text.stderr
    assert "eqbench: Qwen/Qwen-72B-Chat (recomputed): published 80.70, recomputed 80.70" in text.stdout
    assert ": differs" in text.stdout and "published run's settings this run does not record" in text.stdout
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
        markdown = (run / "report.md").read_text("utf-8").split("## Among the published models", 1)[1]
        assert "| EQ-Bench |" in markdown and f": {verdict}" in markdown.split("\n## ", 1)[0]
