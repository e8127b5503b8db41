"""The benchmark end to end on scripted models (with and without --judge), prompts and judge parsing."""

import io
from pathlib import Path

import pytest
from rich.console import Console

from empathybench.instruments.empathetic.bench import clean_reply
from empathybench.instruments.empathetic.judge import parse_rating
from empathybench.instruments.empathetic.prompts import RATING_QUESTION, REASK, generation_messages, judge_messages
from empathybench.models.base import ChatRequest
from empathybench.models.scripted import register_script
from empathybench.run.execute import RunOptions, execute_run
from empathybench.run.judge import run_validation


def _is_judge_request(request: ChatRequest) -> bool:
    return RATING_QUESTION in request.messages[0].content


def _model(request: ChatRequest) -> str:
    if _is_judge_request(request):
        return "Good"
    return 'Response: "I am so sorry to hear that, that sounds really hard. How are you holding up?"'


def _judge(request: ChatRequest) -> str:
    if request.messages[-1].content == REASK:
        return "**Okay**"
    # Rate the human reply Bad on the first ask via an unreadable answer, to exercise the re-ask path.
    return "Good." if "I am so sorry to hear that" in request.messages[0].content else "I think it is fine"


register_script("empathetic-model", _model)
register_script("empathetic-judge", _judge)


def test_parse_rating_is_strict() -> None:
    assert parse_rating("Good") == 3
    assert parse_rating(" **okay**. ") == 2
    assert parse_rating('"Bad"') == 1
    assert parse_rating("Good, but short") is None
    assert parse_rating("I would say Good") is None


def test_prompts_withhold_the_emotion_and_show_the_raters_view() -> None:
    [message] = generation_messages("My dog died.", "I miss him so much.")
    assert message.role == "user"
    assert "Context: My dog died. \nSpeaker Utterance: I miss him so much. \nResponse:" in message.content
    assert "on average 28 words and a maximum of 97 words" in message.content
    [judge] = judge_messages("sad", "My dog died.", "I miss him so much.", "Oh no.")
    assert "Emotion of the speaker: sad" in judge.content
    assert "Speaker #2: Oh no." in judge.content
    assert clean_reply('Response: "Hello there."') == "Hello there."


def _run(tmp_path: Path, judge: str | None) -> dict:
    options = RunOptions(
        model="scripted/empathetic-model",
        benchmarks=["empathetic"],
        preset="quick",
        out=tmp_path / "run",
        use_cache=False,
        show_progress=False,
        judge=judge,
    )
    return execute_run(options, Console(file=io.StringIO())).summary["benchmarks"]["empathetic"]


def test_quick_run_self_judged(mirror: Path, tmp_path: Path) -> None:
    result = _run(tmp_path, judge=None)
    assert result["status"] == "complete" and result["n_rated"] == 32
    assert result["judge"]["self_judging"] is True and "NO --judge" in result["judge"]["warning"]
    assert result["score"] == 100.0 and result["n_parsed"] == 32
    assert result["headline_note"] is None  # the status says self-judged, once
    assert result["validity"]["status"] == "self-judged"
    assert result["judged"]["sources"]["human"]["pct_good"] == 100.0
    assert result["length"]["mean_words"] == 16 and result["length"]["share_over_97_words_pct"] == 0.0
    reference = result["human_rater_reference"]["sources"]
    assert reference["human"]["n"] == 32 and "chatgpt_empathy" in reference


def test_quick_run_with_a_judge(mirror: Path, tmp_path: Path) -> None:
    result = _run(tmp_path, judge="scripted/empathetic-judge")
    assert result["judge"]["self_judging"] is False and "warning" not in result["judge"]
    judged = result["judged"]["sources"]
    assert judged["model"]["good"] == 32
    assert judged["human"]["okay"] == 32  # every human reply needed one re-ask
    assert judged["model"]["good_increase_pct"] is None  # no Good among the human replies: undefined
    assert result["judge"]["unparseable"] == {"human": 0, "model": 0}


def test_judge_validate_end_to_end(mirror: Path) -> None:
    register_script("empathetic-always-good", lambda request: "Good")
    report = run_validation("scripted/empathetic-always-good", limit=40, use_cache=False)
    assert report["n_rated"] == 40
    assert [row[:2] for row in report["confusion_matrix"]["counts"]] == [[0, 0]] * 3  # the judge only said Good
    assert sum(row[2] for row in report["confusion_matrix"]["counts"]) == 40
    assert all(entry["good_pct_judge"] == 100.0 for entry in report["by_source"].values())
    assert report["weighted_kappa_linear"] == pytest.approx(0.0)
