"""SECEU end to end: the engine with scripted models, `rescore seceu` through the CLI, and the embedded model."""

import io
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from conftest import cli_in_process
from empathybench.models.base import ChatRequest
from empathybench.models.scripted import register_script
from empathybench.run.execute import RunOptions, execute_run

# The options of the target question, in the order the prompt lists them (the last "(1) ..; (4) .." group).
_OPTIONS = re.compile(r"\(1\) (.+?); \(2\) (.+?)[;:] \(3\) (.+?); \(4\) (.+?)\.")


def _options(request: ChatRequest) -> list[str]:
    return list(_OPTIONS.findall(request.messages[-1].content)[-1])


def _uniform(request: ChatRequest) -> str:
    return "I would give 2.5, 2.5, 2.5 and 2.5."


def _negative_json(request: ChatRequest) -> str:
    entries = [{"name": name, "score": score} for name, score in zip(_options(request), (-4, -2, -2, 2), strict=True)]
    return "Let me think.\n" + json.dumps({"Emotion": entries})


_answered_calls: list[ChatRequest] = []


def _refuse_most(request: ChatRequest) -> str:
    # Answers only the first 3 calls of the run, then refuses.
    if len(_answered_calls) < 3:
        _answered_calls.append(request)
        return f"{_options(request)[0]}: 10"
    return "As an AI I cannot have feelings."


register_script("seceu-uniform", _uniform)
register_script("seceu-negative-json", _negative_json)
register_script("seceu-refuse-most", _refuse_most)


def _run(model: str, tmp_path: Path, **kwargs: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    out = tmp_path / model.replace("/", "-")
    options = RunOptions(model=model, benchmarks=["seceu"], out=out, show_progress=False, **kwargs)
    execute_run(options, Console(file=io.StringIO()))
    summary = json.loads((out / "summary.json").read_text())["benchmarks"]["seceu"]
    records = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    return summary, records


def test_quick_uniform_run_scores_the_uniform_baseline(tmp_path: Path, mirror: Path) -> None:
    summary, records = _run("scripted/seceu-uniform", tmp_path, preset="quick")
    assert [r["item_id"] for r in records] == [str(n) for n in range(1, 40, 4)]
    call = records[0]["calls"][0]
    assert call["messages"][0]["content"].startswith("Story: ")
    assert call["messages"][0]["content"].endswith("Assign a score to each option based on the story, sum up to 10")
    assert call["sampling"]["temperature"] == 0.1 and call["sampling"]["top_p"] == 1.0
    assert call["sampling"]["max_tokens"] == 512
    assert summary["status"] == "complete"
    assert (summary["n_items"], summary["n_parsed"], summary["n_no_response"]) == (10, 10, 0)
    assert summary["seceu_score"] == summary["uniform_baseline"]["seceu_score"]
    assert summary["score"] == summary["eq"] == summary["uniform_baseline"]["eq"]
    assert "subset" in summary["score_name"] and "subset_note" in summary
    assert summary["seceu_status"] == "ok"
    assert set(summary["percentiles"]) == {"normal_approximation", "published_anchor_interpolation"}
    assert all("label" in p for p in summary["percentiles"].values())
    assert summary["human_like"] is (summary["pattern_r"] >= 0.033)


def test_full_run_with_negatives_in_json(tmp_path: Path, mirror: Path) -> None:
    summary, records = _run("scripted/seceu-negative-json", tmp_path, preset="paper")
    assert len(records) == 40 and summary["n_items"] == 40
    direct = records[0]["variants"]["direct"]
    assert direct["parse_method"] == "json"
    assert direct["raw_values"] == [-4, -2, -2, 2]
    assert direct["vector"] == [0, 2, 2, 6] and direct["shifted"] and not direct["rescaled"]
    assert "subset_note" not in summary and summary["n_parsed"] == 40
    assert summary["uniform_baseline"]["eq"] == pytest.approx(112.2, abs=0.05)
    assert summary["score"] == pytest.approx(15 * (2.79 - summary["seceu_score"]) / 0.822 + 100, abs=1e-3)


def test_mostly_unanswered_run_is_failed(tmp_path: Path, mirror: Path) -> None:
    summary, _ = _run("scripted/seceu-refuse-most", tmp_path, preset="quick")
    assert summary["n_no_response"] == 7
    assert summary["seceu_status"] == "FAILED"
    assert summary["score"] is None and summary["eq"] is not None
    assert "FAILED" in summary["headline_note"]
    assert summary["n_parsed"] == 10 - summary["n_no_response"]
    assert summary["seceu_score_valid_items"] is not None or summary["n_parsed"] == 0


def test_all_prompt_variants_with_best_of_reporting(tmp_path: Path, mirror: Path) -> None:
    summary, records = _run(
        "scripted/seceu-negative-json",
        tmp_path,
        preset="full",
        limit=3,
        options={"seceu.variant": "all", "seceu.headline": "best"},
    )
    assert len(records) == 3
    calls = records[0]["calls"]
    assert len(calls) == 5
    assert [c["sampling"]["temperature"] for c in calls] == [0.1, 0, 0, 0, 0]
    assert [c["sampling"]["max_tokens"] for c in calls] == [512, 2048, 2048, 2048, 2048]
    assert calls[1]["messages"][0]["content"].endswith("\nA:")
    assert set(summary["variants"]) == {
        "direct",
        "zero_shot",
        "zero_shot_step_by_step",
        "two_shot_cot",
        "two_shot_cot_step_by_step",
    }
    best = summary["best_of_variants"]
    assert "best of 5 prompt variants" in best["label"]
    assert best["variant"] == summary["variant"]
    assert "best of 5" in summary["score_name"]


def test_unknown_variant_is_a_clear_error(tmp_path: Path, mirror: Path) -> None:
    from empathybench.errors import UserError

    with pytest.raises(UserError, match=r"seceu\.variant"):
        _run("scripted/seceu-uniform", tmp_path, preset="full", options={"seceu.variant": "three_shot"})


# --- rescore CLI ---


def _rescore(tmp_path: Path, answers: Any) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps({"answers": answers}))
    return cli_in_process(["rescore", "seceu", str(path), "--json"])


def test_rescore_uniform_answer(tmp_path: Path, mirror: Path) -> None:
    done = _rescore(tmp_path, [[2.5, 2.5, 2.5, 2.5]] * 40)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert round(result["seceu_score"], 3) == 2.124
    assert round(result["eq"], 1) == 112.2
    assert round(result["pattern_r"], 2) == -0.31
    assert result["human_like"] is False
    assert result["band"] == "normal"
    assert result["seceu_status"] == "ok" and result["n_no_response"] == 0
    assert result["uniform_baseline"]["seceu_score"] == result["seceu_score"]


def test_rescore_normalises_raw_answers(tmp_path: Path, mirror: Path) -> None:
    # Scaled (x4), shifted and missing answers must score as their normalised forms.
    answers: list[Any] = [[10, 10, 10, 10]] * 30 + [[-1, -1, -1, 9]] * 5 + [None, [], [0, 0, 0, 0]] + [[1, 1, 1, 1]] * 2
    done = _rescore(tmp_path, answers)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["n_no_response"] == 3 and result["n_parsed"] == 37
    assert result["normalised_answers"][0] == [2.5, 2.5, 2.5, 2.5]
    assert result["normalised_answers"][30] == [0, 0, 0, 10]
    assert result["normalised_answers"][35] == [0, 0, 0, 0]
    assert result["n_shifted"] == 5 and result["n_rescaled"] == 32
    distances = result["item_distances"]
    assert result["seceu_score"] == pytest.approx(sum(distances) / 40, abs=1e-3)
    assert result["eq"] == pytest.approx(15 * (2.79 - result["seceu_score"]) / 0.822 + 100, abs=1e-3)
    assert result["seceu_score_valid_items"] == pytest.approx(
        sum(d for i, d in enumerate(distances) if i not in (35, 36, 37)) / 37, abs=1e-3
    )


def test_rescore_counts_most_items_unanswered_as_failed(tmp_path: Path, mirror: Path) -> None:
    result = json.loads(_rescore(tmp_path, [None] * 21 + [[3, 3, 2, 2]] * 19).stdout)
    assert result["seceu_status"] == "FAILED" and result["n_no_response"] == 21


@pytest.mark.parametrize("answers", [[[1, 2, 3, 4]] * 39, [[1, 2, 3]] * 40, [["a", 1, 1, 1]] * 40])
def test_rescore_rejects_a_malformed_file_in_one_line(tmp_path: Path, mirror: Path, answers: Any) -> None:
    done = _rescore(tmp_path, answers)
    assert done.returncode != 0
    assert "error:" in done.stderr and len(done.stderr.strip().splitlines()) == 1


# --- the embedded model (needs the `local` extra) ---


@pytest.mark.model
def test_embedded_model_answers_two_items(tmp_path: Path, mirror: Path) -> None:
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (pip install -e '.[local]')")
    summary, records = _run("local", tmp_path, preset="quick", limit=2)
    assert [r["status"] for r in records] == ["ok", "ok"]
    assert summary["n_items"] == 2 and summary["status"] == "complete"
    assert summary["eq"] is not None and summary["n_no_response"] + summary["n_parsed"] == 2
