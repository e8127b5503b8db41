"""Reports: summary.json against its schema with an interval on every headline, report.html/report.md of a run,
`empathybench report A B` comparisons, and `run --repeats`. Two scripted "models" answer every instrument."""

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

from empathybench.cli import app
from empathybench.report.compare import compare_runs, load_run
from empathybench.schema.files import checked_in

FIXTURES = Path(__file__).parent / "fixtures" / "giebench" / "official"


def _run(out: Path, model: str, *extra: str, exit_code: int = 0) -> Any:
    # An option for a benchmark the run does not include is refused, so the GIEBench data only goes with GIEBench.
    selected = extra[extra.index("--bench") + 1] if "--bench" in extra else "giebench"
    giebench = ["--option", f"giebench.data_dir={FIXTURES}"] if "giebench" in selected else []
    result = CliRunner().invoke(
        app,
        [
            "run",
            "--model",
            model,
            "--out",
            str(out),
            "--quiet",
            "--no-cache",
            "--allow-unverified",  # the GIEBench fixtures are invented, not the pinned files
            *giebench,
            *extra,
        ],
    )
    assert result.exit_code == exit_code, result.output
    return result


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    if not (Path(__file__).resolve().parents[2] / "shared" / "mirror").is_dir():
        pytest.skip("the offline mirror is not beside the repository")
    root = tmp_path_factory.mktemp("runs")
    first, second = root / "a", root / "b"
    _run(first, "scripted/plausible")
    _run(second, "scripted/plausible-2")
    return first, second


def _summary(directory: Path) -> dict[str, Any]:
    return json.loads((directory / "summary.json").read_text("utf-8"))


def test_summary_follows_its_schema_and_every_headline_has_an_interval(two_runs: tuple[Path, Path]) -> None:
    for directory in two_runs:
        summary = _summary(directory)
        jsonschema.validate(summary, checked_in("summary.schema.json"))
        assert set(summary["benchmarks"]) == {"eqbench", "seceu", "emotionbench", "giebench", "empathetic"}
        for name, result in summary["benchmarks"].items():
            assert result["status"] == "complete", (name, result.get("error"))
            assert result["score"] is not None, name
            low, high = result["score_ci95"]
            score_metric = result["metrics"][result.get("score_metric") or result["headline_metric"]]
            assert low <= score_metric["value"] <= high, name
            assert score_metric["value"] == pytest.approx(result["score"], abs=0.01), name
            for key, entry in result["metrics"].items():
                if entry["value"] is not None:
                    assert entry["ci95"] is not None and None not in entry["ci95"], (name, key)
                if entry["items"]:
                    values = list(entry["items"].values())
                    mean = sum(values) / len(values)
                    assert entry["value"] == pytest.approx(entry["scale"] * mean + entry["offset"], abs=1e-3)
        assert [row["benchmark"] for row in summary["profile"]] == [
            "eqbench",
            "seceu",
            "emotionbench",
            "giebench",
            "empathetic",
        ]
        for row in summary["profile"]:
            assert row["value"] is not None and row["ci95"] is not None, row["benchmark"]


def test_schema_rejects_a_headline_without_its_interval(two_runs: tuple[Path, Path]) -> None:
    summary = _summary(two_runs[0])
    del summary["benchmarks"]["seceu"]["score_ci95"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(summary, checked_in("summary.schema.json"))
    summary = _summary(two_runs[0])
    del summary["benchmarks"]["eqbench"]["metrics"]["score"]["ci95"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(summary, checked_in("summary.schema.json"))


def test_seceu_eq_interval_is_the_distance_interval_rescaled(two_runs: tuple[Path, Path]) -> None:
    metrics = _summary(two_runs[0])["benchmarks"]["seceu"]["metrics"]
    distance, eq = metrics["seceu_score"], metrics["eq"]
    assert eq["value"] == pytest.approx(15 * (2.79 - distance["value"]) / 0.822 + 100, abs=1e-3)
    # EQ falls as the distance grows: the interval ends swap.
    assert eq["ci95"][0] == pytest.approx(15 * (2.79 - distance["ci95"][1]) / 0.822 + 100, abs=0.05)


def test_run_report_html_has_profile_charts_and_links_to_samples(two_runs: tuple[Path, Path]) -> None:
    page = (two_runs[0] / "report.html").read_text("utf-8")
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "") and "https://" not in page
    cards = re.findall(r'<div class="card" data-benchmark="(\w+)"', page)
    assert cards == ["eqbench", "seceu", "emotionbench", "giebench", "empathetic"]
    charts = re.findall(r'data-chart="(\w+)"', page)
    for kind in (
        "interval_strip",
        "histogram",
        "normal_curve",
        "line_chart",
        "grouped_bars",
        "heatmap",
        "stacked_bars",
    ):
        assert kind in charts, kind
    # Every link into the page points at an element that exists.
    ids = set(re.findall(r'id="([^"]+)"', page))
    targets = set(re.findall(r'href="#([^"]+)"', page))
    assert targets and targets <= ids, targets - ids
    # The samples hold the raw replies.
    samples = [json.loads(line) for line in (two_runs[0] / "samples.jsonl").read_text("utf-8").splitlines()]
    reply = next(s for s in samples if s["benchmark"] == "eqbench")["calls"][-1]["reply"]
    assert reply.splitlines()[0] in page


def test_report_md_lists_the_profile_with_intervals(two_runs: tuple[Path, Path]) -> None:
    text = (two_runs[0] / "report.md").read_text("utf-8")
    summary = _summary(two_runs[0])
    for row in summary["profile"]:
        line = next(line for line in text.splitlines() if line.startswith(f"| {row['title']} |"))
        assert f"{row['value']:.2f}" in line and f"[{row['ci95'][0]:.2f}, {row['ci95'][1]:.2f}]" in line


def test_report_command_compares_two_runs(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "cmp.html"
    result = CliRunner().invoke(app, ["report", str(two_runs[0]), str(two_runs[1]), "--out", str(out)])
    assert result.exit_code == 0, result.output
    page = out.read_text("utf-8")
    assert "scripted/plausible" in page and "scripted/plausible-2" in page
    comparison = json.loads(out.with_suffix(".json").read_text("utf-8"))
    assert out.with_suffix(".md").read_text("utf-8").startswith("# EmpathyBench comparison")
    # The EQ-Bench headline difference equals the mean item difference recomputed from the two summaries.
    a, b = (_summary(d)["benchmarks"]["eqbench"]["metrics"]["score"]["items"] for d in two_runs)
    shared = [k for k in b if k in a]
    expected = 10 * sum(b[k] - a[k] for k in shared) / len(shared)
    row = next(r for r in comparison["benchmarks"]["eqbench"]["paired"] if r["metric"] == "score")
    assert row["n_shared"] == len(shared) == 30
    assert row["difference"] == pytest.approx(expected, abs=1e-3)
    assert row["test"] == "Wilcoxon signed-rank" and 0 <= row["p"] <= 1
    assert row["ci95"][0] <= row["difference"] <= row["ci95"][1]
    # Every instrument is in the leaderboard with both runs.
    for entry in comparison["benchmarks"].values():
        headline = entry["leaderboard"][entry["headline_metric"]]
        assert [cell["run"] for cell in headline] == ["scripted/plausible", "scripted/plausible-2"]
    empathetic = comparison["benchmarks"]["empathetic"]["paired"]
    assert next(r for r in empathetic if r["metric"] == "good_pct")["test"] == "exact McNemar"


def test_out_names_the_files_with_their_extensions(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    """`--out cmp` writes cmp.html, cmp.md and cmp.json (never a page named `cmp` that a browser shows as source);
    `--out cmp.html` and `--out cmp.md` name the same three files; one run's report is NAME.html and NAME.md."""
    for given in ("cmp", "cmp.html", "cmp.md"):
        for name in ("cmp.html", "cmp.md", "cmp.json"):
            (tmp_path / name).unlink(missing_ok=True)
        result = CliRunner().invoke(app, ["report", *map(str, two_runs), "--out", str(tmp_path / given)])
        assert result.exit_code == 0, result.output
        assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("cmp")) == [
            "cmp.html",
            "cmp.json",
            "cmp.md",
        ]
        assert (tmp_path / "cmp.html").read_text("utf-8").lstrip().lower().startswith("<!doctype html")
    single = CliRunner().invoke(app, ["report", str(two_runs[0]), "--out", str(tmp_path / "one")])
    assert single.exit_code == 0, single.output
    assert (tmp_path / "one.html").is_file() and (tmp_path / "one.md").is_file()
    assert not (tmp_path / "one").exists()
    help_text = CliRunner().invoke(app, ["report", "--help"]).output
    assert "NAME.html" in help_text


def test_one_run_re_renders_and_bad_directories_are_one_line_errors(
    two_runs: tuple[Path, Path], tmp_path: Path
) -> None:
    out = tmp_path / "again.html"
    result = CliRunner().invoke(app, ["report", str(two_runs[0]), "--out", str(out)])
    assert result.exit_code == 0 and out.exists() and out.with_suffix(".md").exists()
    result = CliRunner().invoke(app, ["report", str(tmp_path / "nothing")])
    assert result.exit_code != 0
    with pytest.raises(Exception, match="at least two"):
        compare_runs([load_run(two_runs[0])])


def test_repeats_record_run_to_run_variation(tmp_path: Path, mirror: Path) -> None:
    out = tmp_path / "rep"
    _run(out, "scripted/plausible", "--bench", "eqbench", "--limit", "6", "--repeats", "2")
    summary = _summary(out)
    jsonschema.validate(summary, checked_in("summary.schema.json"))
    assert summary["repeats"]["n"] == 2
    assert [Path(p).name for p in summary["repeats"]["runs"]] == ["repeat-1", "repeat-2"]
    runs = [_summary(out / f"repeat-{k}") for k in (1, 2)]
    entry = summary["repeats"]["metrics"]["eqbench.score"]
    values = [r["benchmarks"]["eqbench"]["metrics"]["score"]["value"] for r in runs]
    assert entry["values"] == values
    assert entry["mean"] == pytest.approx(sum(values) / 2, abs=1e-4)
    assert values[0] != values[1]  # T > 0 with another seed per repeat: the scripted model samples differently
    assert entry["sd"] == pytest.approx(abs(values[0] - values[1]) / 2**0.5, abs=1e-4)
    assert (out / "report.html").exists() and "Run-to-run variation" in (out / "report.html").read_text("utf-8")


def test_a_model_that_answers_nothing_still_gets_a_valid_summary_and_report(tmp_path: Path, mirror: Path) -> None:
    out = tmp_path / "refuse"
    result = _run(out, "scripted/refuse", exit_code=1)  # nothing could be scored: a line per instrument, exit 1
    unscored = [line for line in result.output.splitlines() if "no item could be scored" in line]
    # (GIEBench has a headline: an unparsed reply counts as wrong, a change of 0)
    assert [line.split(":", 1)[0] for line in unscored] == ["eqbench", "seceu", "empathetic", "emotionbench"]
    summary = _summary(out)
    jsonschema.validate(summary, checked_in("summary.schema.json"))
    for row in summary["profile"]:
        if row["benchmark"] == "giebench":
            # Unparsed replies count as wrong (spec §2.3): a change of 0, flagged by the note.
            assert row["value"] == 0.0 and "0/33 replies gave a verdict" in row["note"]
            continue
        assert row["value"] is None and row["note"], row  # no headline, and the profile says why
    page = (out / "report.html").read_text("utf-8")
    assert page.count('class="card"') == 5 and "I&#39;m sorry" in page  # the raw refusals are shown
