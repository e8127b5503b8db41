"""`empathybench rescore sage FILE [--json]` on the released result files (fetched and verified through the project's
fetch code from the mirror) gives the README leaderboard's Score, Success and Failure."""

import json
from pathlib import Path

import pytest

from conftest import cli_in_process
from empathybench.data.fetch import fetch_pinned
from empathybench.instruments.sage import data
from empathybench.instruments.sage.rescore import rescore_results

SAGE = "empathybench.instruments.sage"  # the package whose pins.json holds the files read here

# SAGE/README.md (specs/sage.md): GPT-4.1 68.2 / 35 / 13 (the file's mean final emotion 68.15); Claude3.7 54.8 / 19 / 24
PUBLISHED = {
    data.GPT41_RESULTS_KEY: {"score": 68.2, "success": 35, "failure": 13, "score_exact": 68.15},
    data.CLAUDE37_RESULTS_KEY: {"score": 54.8, "success": 19, "failure": 24, "score_exact": 54.8},
}


@pytest.mark.parametrize("key", sorted(PUBLISHED))
def test_rescore_json_gives_the_readme_figures(mirror: Path, key: str) -> None:
    path = fetch_pinned(SAGE, key).path
    done = cli_in_process(["rescore", "sage", str(path), "--json"])
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert {name: result[name] for name in PUBLISHED[key]} == PUBLISHED[key]
    assert result["n_people"] == 100 and sum(result["states"].values()) == 100
    assert result["n_final_emotion_disagrees_with_history"] == 0
    assert 1 < result["mean_turns"] <= 10


def test_rescore_text_output_and_bad_files(mirror: Path, tmp_path: Path) -> None:
    done = cli_in_process(["rescore", "sage", str(fetch_pinned(SAGE, data.GPT41_RESULTS_KEY).path)])
    assert done.returncode == 0 and "68.2" in done.stdout
    missing = cli_in_process(["rescore", "sage", str(tmp_path / "nope.jsonl")])
    assert missing.returncode != 0 and "no such file" in missing.stderr and "Traceback" not in missing.stderr
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"emo_point": 50, "emo_state": "Emotion-B", "history": []}\n{not json\n', "utf-8")
    done = cli_in_process(["rescore", "sage", str(broken)])
    assert done.returncode != 0 and "line 2 is not JSON" in done.stderr
    no_point = tmp_path / "no_point.jsonl"
    no_point.write_text('{"emo_state": "Emotion-B"}\n', "utf-8")
    done = cli_in_process(["rescore", "sage", str(no_point)])
    assert done.returncode != 0 and "no numeric emo_point" in done.stderr


def test_lines_are_split_on_newline_only() -> None:
    """A text holding U+2028 (which str.splitlines() splits on) stays one conversation."""
    lines = [
        {
            "emo_point": 100,
            "emo_state": "Emotion-S",
            "history": [{"role": "user", "content": "a\u2028b", "emotion-point": 100}],
        },
        {
            "emo_point": 5,
            "emo_state": "Emotion-F",
            "history": [{"role": "user", "content": "c\u2029d", "emotion-point": 5}],
        },
        {"emo_point": 41, "emo_state": "Emotion-B", "history": [{"role": "user", "content": "e", "emotion-point": 40}]},
    ]
    text = "\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n"
    assert len(text.splitlines()) > 3  # what a careless reader would split
    result = rescore_results(text)
    assert result["n_people"] == 3 and (result["success"], result["failure"]) == (1, 1)
    assert result["score"] == 48.7 and result["score_exact"] == pytest.approx(146 / 3, abs=1e-6)
    assert result["n_final_emotion_disagrees_with_history"] == 1
