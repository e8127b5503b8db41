"""SECEU as a typed instrument: its paper rule (FAILED) reaches every renderer's validity, its canned answers
are the request's tag's, and its report section draws its own charts."""

import io
import json
from pathlib import Path
from typing import Any

from rich.console import Console

from empathybench.instruments import registry
from empathybench.models.base import ChatRequest, Draw, Message, Sampling
from empathybench.run.execute import RunOptions, execute_run


def _summary(model: str, out: Path) -> dict[str, Any]:
    options = RunOptions(model=model, benchmarks=["seceu"], preset="quick", limit=3, out=out, show_progress=False)
    execute_run(options, Console(file=io.StringIO()))
    return json.loads((out / "summary.json").read_text())["benchmarks"]["seceu"]


def test_a_run_without_answers_is_invalid_by_the_paper_rule(tmp_path: Path, mirror: Path) -> None:
    result = _summary("scripted/refuse", tmp_path / "refuse")
    assert result["seceu_status"] == "FAILED"
    assert result["validity"]["status"] == "invalid"
    assert result["validity"]["label"] == "invalid (paper rule)"
    assert any("FAILED by the paper's rule" in reason for reason in result["validity"]["reasons"])


def test_a_plausible_run_is_valid_and_its_section_has_the_norm_and_the_per_item_chart(
    tmp_path: Path, mirror: Path
) -> None:
    result = _summary("scripted/plausible", tmp_path / "plausible")
    assert result["seceu_status"] == "ok" and result["validity"]["status"] == "valid"
    html = (tmp_path / "plausible" / "report.html").read_text("utf-8")
    assert "SECEU EQ on the human norm (mean 100, SD 15)" in html
    assert "distance to the human standard, per item" in html


def test_canned_answers_spread_ten_points_and_leave_other_prompts_alone() -> None:
    seceu = registry.load("seceu")
    assert seceu.canned is not None
    prompt = "Story: ...\nOptions: (1) a (2) b (3) c (4) d\nAssign a score to each option, sum up to 10"
    request = ChatRequest.of([Message("user", prompt)], Sampling(temperature=0.0, max_tokens=64), "seceu")
    points = json.loads(seceu.canned(request, Draw(1)))
    assert len(points) == 4 and abs(sum(points) - 10) <= 0.2
    assert seceu.canned(request, Draw(1)) != seceu.canned(request, Draw(2))
    other = ChatRequest.of([Message("user", "How are you?")], Sampling(temperature=0.0, max_tokens=64), "seceu")
    assert seceu.canned(other, Draw(1)) is None
