"""EmotionBench as a typed instrument: the registry hands out the instrument itself (no adapter) with its profile
facts, its canned answers fill in questionnaires only, its report section draws its charts and links its table to
sample rows that exist, and its rescore command's --challenging flag comes from its RescoreCommand."""

import io
import json
import re
from pathlib import Path
from typing import Any

from rich.console import Console

from conftest import words_joined
from empathybench.instruments import registry
from empathybench.instruments.protocol import Instrument
from empathybench.models.base import ChatRequest, Draw, Message, Sampling
from empathybench.report.profile import build_profile
from empathybench.run.execute import RunOptions, execute_run


def _run(model: str, out: Path) -> dict[str, Any]:
    options = RunOptions(
        model=model, benchmarks=["emotionbench"], preset="quick", limit=3, out=out, show_progress=False
    )
    execute_run(options, Console(file=io.StringIO()))
    return json.loads((out / "summary.json").read_text())


def test_the_registry_hands_out_the_instrument_itself_with_its_profile_facts() -> None:
    emotionbench = registry.load("emotionbench")
    assert isinstance(emotionbench, Instrument) and type(emotionbench).__name__ == "EmotionBench"
    assert emotionbench.rescore is not None and set(emotionbench.rescore.flags) == {"challenging"}
    row = build_profile({"emotionbench": {"status": "ok"}, "seceu": {"status": "ok"}, "eqbench": {"status": "ok"}})
    assert [r["benchmark"] for r in row] == ["eqbench", "seceu", "emotionbench"]  # position 3
    assert row[2]["title"] == "EmotionBench"
    assert row[2]["question"] == "Does its mood move as people's does after imagining a situation?"


def test_canned_answers_fill_a_questionnaire_on_its_scale_and_leave_other_prompts_alone() -> None:
    canned = registry.load("emotionbench").canned
    assert canned is not None
    names = ["Interested", "Distressed", "Excited", "Upset", "Strong", "Guilty"]
    prompt = "Rate each feeling from 1 to 5.\n" + "\n".join(f"{i}. {name}" for i, name in enumerate(names, 1))
    request = ChatRequest.of([Message("user", prompt)], Sampling(temperature=0.0, max_tokens=64), "emotionbench")
    lines = canned(request, Draw(1)).splitlines()
    assert [line.split(":")[0] for line in lines] == [f"{i}. {name}" for i, name in enumerate(names, 1)]
    assert all(1 <= int(line.rsplit(":", 1)[1]) <= 5 for line in lines)
    assert canned(request, Draw(1)) != canned(request, Draw(2))
    other = ChatRequest.of([Message("user", "How are you?")], Sampling(temperature=0.0, max_tokens=64), "x")
    assert canned(other, Draw(1)) is None


def test_a_plausible_run_draws_its_section_with_links_to_existing_sample_rows(tmp_path: Path, mirror: Path) -> None:
    summary = _run("scripted/plausible", tmp_path / "run")
    result = summary["benchmarks"]["emotionbench"]
    html = words_joined((tmp_path / "run" / "report.html").read_text("utf-8"))
    section = html[html.index('<section data-benchmark="emotionbench"') :]
    for title in ("Negative Affect shift after imagining", "shift per factor", "alignment with people (NA)"):
        assert title in section
    links = re.findall(r'<a href="#(item-emotionbench-[^"]+)">', section)
    assert len(links) == len(result["emotions"])
    assert all(f'id="{anchor}"' in section for anchor in links)
    assert '<p class="small">Parse failures: ' in section
    samples = [json.loads(line) for line in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    runs = samples[0]["runs"]
    assert f"{sum(r['answers'] is not None for r in runs)}/{len(runs)} runs parsed" in section
