"""EQ-Bench 3's report section: the published rows of the judge's era only, the ability columns, the 12 style traits,
and a task table whose rows link to each transcript (turns, debrief, the judge's rubric text) in the samples."""

from typing import Any

from empathybench.instruments.eqbench3.bench import EQBench3Config, summarize_records
from empathybench.instruments.eqbench3.eras import PUBLISHED_RUBRIC, era_id
from empathybench.instruments.eqbench3.report import report_section, sample_line, sample_text
from empathybench.instruments.eqbench3.rubric import ABILITY_GROUPS, QUALITATIVE, STYLE_TRAITS
from empathybench.instruments.protocol import FactsTable, ItemLink, StripChart
from empathybench.report.html import render_run_report


def _record(scenario_id: str, judge: str, value: float) -> dict[str, Any]:
    scores = {c: value for c in (*QUALITATIVE, *STYLE_TRAITS)}
    return {
        "item_id": scenario_id,
        "benchmark": "eqbench3",
        "status": "ok",
        "scenario_id": scenario_id,
        "type": "roleplay",
        "task_status": "rubric_scored",
        "turns": [{"reply": "<script>alert(1)</script> first reply"}, {"reply": "second reply"}],
        "debrief": {"text": "the debrief text"},
        "rubric": {"scores": scores, "judge_text": '{"demonstrated_empathy": 12} judge says'},
        "score_0_20": value,
        "mean_section_coverage": 1.0,
        "judge_model": judge,
        "calls": [],
    }


def _summary(judge: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    records = [_record(sid, judge, v) for sid, v in (("1", 10.0), ("2", 14.0), ("3", 12.0))]
    return summarize_records(EQBench3Config(), len(records), records), records


def test_published_rows_only_for_a_judge_of_a_published_era() -> None:
    assert era_id("anthropic/claude-3.7-sonnet") == "sonnet-3.7" and era_id("gpt-4.1") is None
    result, samples = _summary("anthropic/claude-3.7-sonnet")
    assert result["score"] == 5 * 12.0
    reference = result["metrics"]["score"]["reference"]
    assert [m["value"] for m in reference["models"]] == [v for _, v in PUBLISHED_RUBRIC["sonnet-3.7"][1]]
    section = report_section(result, samples)
    beside = [c for c in section.charts if isinstance(c, StripChart) and "published" in c.title]
    assert len(beside) == 1 and section.note is None
    labels = {p.label: p for p in beside[0].points}
    assert labels["this run"].value == 60.0 and labels["this run"].low is not None
    assert labels["google/gemma-2-9b-it"].value == 45.9  # spec §6.3, Sonnet era

    other, samples = _summary("openai/gpt-4.1")
    assert other["metrics"]["score"]["reference"] is None and other["published_rubric"] is None
    section = report_section(other, samples)
    assert not any("published" in c.title for c in section.charts) and "No published" in (section.note or "")


def test_abilities_traits_and_task_links() -> None:
    result, samples = _summary("openai/gpt-4.1")
    tables = {t.title: t for t in report_section(result, samples).tables if isinstance(t, FactsTable)}
    abilities = next(t for title, t in tables.items() if title and "ability" in title)
    traits = next(t for title, t in tables.items() if title and "style traits" in title)
    tasks = next(t for title, t in tables.items() if title and title.startswith("Tasks"))
    assert [row[0] for row in abilities.rows] == list(ABILITY_GROUPS)
    assert [row[0] for row in traits.rows] == list(STYLE_TRAITS) and len(traits.rows) == 12
    assert all(row[1] == 12.0 for row in traits.rows)  # each trait scored 10, 14, 12
    links = [row[0] for row in tasks.rows]
    assert all(isinstance(link, ItemLink) for link in links)
    assert [link.item_id for link in links if isinstance(link, ItemLink)] == ["1", "2", "3"]


def test_the_transcript_is_shown_under_each_sample_and_escaped() -> None:
    result, samples = _summary("openai/gpt-4.1")
    text = sample_text(samples[0])
    assert text.index("turn 1") < text.index("turn 2") < text.index("the debrief text") < text.index("judge says")
    assert "2 turns" in sample_line(samples[0]) and "10.00/20" in sample_line(samples[0])
    summary = {"model": "scripted/x", "benchmarks": {"eqbench3": result}}
    html = render_run_report(summary, {}, samples)
    assert 'href="#item-eqbench3-2"' in html and 'id="item-eqbench3-2"' in html
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt; first reply" in html
    assert html.count("transcript</summary>") == 3
