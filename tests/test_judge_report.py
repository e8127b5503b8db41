"""What a run's report says about its judge: a judge with MentalAlign evidence (matched through the identity table)
gets its rows in every judged instrument's section of report.html and report.md; a judge with none gets "no evidence
for this judge" and the command that would produce some, in the terminal too; an instrument that called no judge says
nothing about one. And the reproduction check names a judge that differs from the published run's."""

import json
import os
from pathlib import Path
from typing import Any

import pytest

from conftest import MIRROR, cli_in_process
from empathybench.atlas.data import shipped_atlas
from empathybench.atlas.reproduce import setting_differences
from empathybench.instruments.registry import all_benchmarks
from empathybench.judges.known import evidence_commands, evidence_for, judged_instruments, judges_command, same_model
from empathybench.rundir.reader import RunData


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str], str]:
    """A scripted run of a judged instrument (EQ-Bench 3) and one with no judge (SECEU), judged by a scripted model
    (no evidence anywhere); its terminal output."""
    if not MIRROR.is_dir():
        pytest.skip(f"the offline mirror is not at {MIRROR}")
    root = tmp_path_factory.mktemp("judge-report")
    env = dict(os.environ, COLUMNS="250")
    args = ["run", "-m", "scripted/plausible", "--judge", "scripted/plausible", "-b", "eqbench3,seceu", "-n", "1"]
    result = cli_in_process([*args, "-o", "run", "--quiet"], env, cwd=root)
    assert result.returncode == 0, result.stderr
    return root / "run", env, result.stdout


def _section(markdown: str, title: str) -> str:
    return markdown.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_a_judge_without_evidence_is_said_so_with_the_command(run: tuple[Path, dict[str, str], str]) -> None:
    directory, _, stdout = run
    markdown = (directory / "report.md").read_text("utf-8")
    eqbench3 = _section(markdown, "EQ-Bench 3")
    assert "Its judge, scripted/plausible: no evidence for this judge." in eqbench3
    # EQ-Bench 3 declares no judge validation: the instruments that do are named (protocol.judge_validation)
    offering = [name for name, bench in all_benchmarks().items() if bench.judge_validation is not None]
    assert offering  # empathetic responding and MindEval declare one
    for name in offering:
        assert f"empathybench judge validate --bench {name} --judge scripted/plausible" in eqbench3
    assert "empathybench judge compare" not in eqbench3  # it declares no judge comparison
    assert "Its judge" not in _section(markdown, "SECEU")  # SECEU's records hold no judge call
    html = (directory / "report.html").read_text("utf-8")
    assert html.count("no evidence for this judge") == 1
    assert "eqbench3: judge scripted/plausible: no evidence for this judge; to produce some: empathybench judge " in (
        stdout
    )


def test_the_suggested_commands_write_what_the_judges_command_reads(run: tuple[Path, dict[str, str], str]) -> None:
    """(Before the tests below change the run's judge.) The report's "To produce some" line, run as printed:
    `judge validate ... --out FILE` writes its report, and the `empathybench judges` command it names reads it (from
    the directory holding it)."""
    import shlex

    from empathybench.judges.user_files import user_sources

    directory, env, _ = run
    line = next(
        line
        for line in _section((directory / "report.md").read_text("utf-8"), "EQ-Bench 3").splitlines()
        if "(then " in line
    )
    commands, then = line.split("To produce some: ", 1)[1].rsplit(" (then ", 1)
    validate = next(command for command in commands.split("; ") if "--bench mindeval" in command)
    assert validate == (
        "empathybench judge validate --bench mindeval --judge scripted/plausible "
        "--out judge-validation/mindeval-scripted-plausible.json"
    )
    assert then == "empathybench judges judge-validation)."
    root = directory.parent
    done = cli_in_process([*shlex.split(validate)[1:], "--limit", "1", "--quiet"], env, cwd=root)  # as printed, 1 item
    assert done.returncode == 0, done.stderr
    assert (root / "judge-validation" / "mindeval-scripted-plausible.json").is_file()
    targets = [root / target for target in shlex.split(then.removesuffix(")."))[2:]]
    (source,) = user_sources(targets)  # what `empathybench judges judge-validation` reads: the report in it
    assert any(row.headline for row in source.evidence())


def test_a_judge_with_mentalalign_evidence_shows_its_rows(run: tuple[Path, dict[str, str], str]) -> None:
    directory, env, _ = run
    info = json.loads((directory / "run.json").read_text("utf-8"))
    info["judge"]["spec"] = "openai/gpt-4o"  # as if GPT-4o had judged: the report reads the run's recorded judge
    (directory / "run.json").write_text(json.dumps(info), "utf-8")
    result = cli_in_process(["report", str(directory)], env, cwd=directory.parent)
    assert result.returncode == 0, result.stderr
    eqbench3 = _section((directory / "report.md").read_text("utf-8"), "EQ-Bench 3")
    # docs/judges.md: GPT-4o against the clinical experts, all 7 attributes pooled, kappa 0.42 [0.40, 0.44]
    assert (
        "Its judge, openai/gpt-4o: MentalAlign-70k: quadratic-weighted kappa 0.42 [0.40, 0.44] against clinical "
        "experts over " in eqbench3
    )
    assert "| MentalAlign-70k | clinical experts | all 7 attributes pooled | quadratic-weighted kappa | " in eqbench3
    assert eqbench3.count("| MentalAlign-70k |") == 15  # pooled, 7 attributes item by item, 7 ICC(C,1) over 9 models
    assert eqbench3.count("| ICC(C,1) |") == 7 and eqbench3.count("| 9 | model |") == 7
    assert "no evidence for this judge" not in eqbench3
    html = (directory / "report.html").read_text("utf-8")
    assert "Its judge, openai/gpt-4o: MentalAlign-70k: quadratic-weighted kappa 0.42 [0.40, 0.44]" in html
    assert html.count('<td class="">all 7 attributes pooled</td>') == 1


def test_a_board_judge_gets_the_boards_judge_change(run: tuple[Path, dict[str, str], str]) -> None:
    """Claude Opus 4.6 judged one of EQ-Bench 3's two boards: its report shows the boards' figures (judges/boards.py;
    the spec's -22.05 rubric points against Claude Sonnet 3.7 over the same 46 models)."""
    directory, env, _ = run
    info = json.loads((directory / "run.json").read_text("utf-8"))
    info["judge"]["spec"] = "anthropic/claude-opus-4-6"
    (directory / "run.json").write_text(json.dumps(info), "utf-8")
    result = cli_in_process(["report", str(directory)], env, cwd=directory.parent)
    assert result.returncode == 0, result.stderr
    eqbench3 = _section((directory / "report.md").read_text("utf-8"), "EQ-Bench 3")
    assert "Its judge, anthropic/claude-opus-4-6: Leaderboards' judge change: Spearman's rho 0.98 [" in eqbench3
    assert "against the other board's judge over 46 models (EQ-Bench 3 normalised Elo" in eqbench3
    assert eqbench3.count("| Leaderboards' judge change |") == 3 and "| -22.05 [-24.03, -20.11] | 46 | model |" in (
        eqbench3
    )


def test_evidence_is_matched_through_the_identity_table(mirror: Path) -> None:
    assert same_model("anthropic/claude-3.7-sonnet", "claude-3-7-sonnet-20250219")  # an alias of the checkpoint
    assert same_model("google/gemini-2.5-flash-preview-04-17", "gemini-2.5-flash-preview-04-17")
    assert not same_model("openai/gpt-5", "gpt-5-2025-08-07")  # a family alone is not the judge
    assert not same_model("google/gemini-2.5-flash", "gemini-2.5-flash-preview-04-17")  # another checkpoint
    assert evidence_for("scripted/plausible") == []
    rows = evidence_for("openai/o4-mini", resamples=20)
    assert {row.judge for row in rows} == {"o4-mini"} and len(rows) == 15
    assert [row.aspect for row in rows if row.headline] == ["all 7 attributes pooled"]


def test_an_instrument_with_a_judge_comparison_names_it() -> None:
    comparing = [name for name, bench in all_benchmarks().items() if bench.judge_comparison is not None]
    assert comparing  # Spiral-Bench re-judges its released conversations
    for name in comparing:
        # with its --out: the directory `judge compare` writes by default, which `empathybench judges` reads
        command = f"empathybench judge compare --bench {name} --judge openai/o3 --out judge-compare/{name}-openai-o3"
        assert command in evidence_commands(name, "openai/o3")
        assert judges_command(name, "openai/o3").endswith(f" judge-compare/{name}-openai-o3")


def test_only_instruments_that_called_a_judge_are_judged() -> None:
    summary = {"benchmarks": {"a": {}, "b": {}, "c": {}}}
    samples = [
        {"benchmark": "a", "calls": [{"messages": []}]},
        {"benchmark": "b", "calls": [{"messages": []}, {"role": "judge"}]},
        {"benchmark": "c", "calls": "not a list"},
    ]
    assert judged_instruments(summary, samples) == ["b"]


def _judged_atlas_instruments() -> list[str]:
    atlas = shipped_atlas()
    return [
        name
        for name, bench in all_benchmarks().items()
        if "judge" in bench.required_roles and name in atlas["instruments"]
    ]


def test_every_judged_instruments_atlas_entries_record_the_published_judge() -> None:
    judged = _judged_atlas_instruments()
    assert len(judged) >= 2  # EQ-Bench 3 and Spiral-Bench
    entries = [e for e in shipped_atlas()["entries"] if e["instrument"] in judged]
    # every published run a reproduction is checked against records its judge
    assert all(e["settings"].get("judge") for e in entries if e["primary"])
    # the rest without one are rows of a site's board that names no judge (Spiral-Bench's eqbench.com extract):
    # never the reference of a reproduction check
    missing = [e for e in entries if not e["settings"].get("judge")]
    assert all(not e["primary"] and e["settings"].get("board") for e in missing)
    assert {e["settings"].get("judge") for e in entries if e["settings"].get("board")} >= {
        "claude-3-7-sonnet-20250219",
        "claude-opus-4-6",
    }  # EQ-Bench 3's two boards, each with the judge its site names


def _published(instrument: str) -> dict[str, Any]:
    entry = next(e for e in shipped_atlas()["entries"] if e["instrument"] == instrument and e["primary"])
    return dict(entry["settings"])


def test_the_reproduction_check_names_a_judge_that_differs() -> None:
    published = _published("eqbench3")
    assert published["judge"] == "claude-3-7-sonnet-20250219"  # specs/atlas-current.md: the Sonnet 3.7 board

    def differences(judge: str, model: str = "openai/o3") -> dict[str, Any]:
        run = RunData(
            Path("run"), {"model": model, "benchmarks": {"eqbench3": {"config": {}}}}, {"judge": {"spec": judge}}
        )
        return setting_differences(run, "eqbench3", published)

    other = differences("openai/gpt-4o")
    assert other["differs"]["judge"] == {"run": "openai/gpt-4o", "published": "claude-3-7-sonnet-20250219"}
    assert "judge" not in differences("anthropic/claude-3.7-sonnet")["differs"]  # the same checkpoint, another name
    # the model under test judging itself is that model as the judge
    itself = differences("self", model="anthropic/claude-3-7-sonnet-20250219")
    assert "judge" not in itself["differs"] and "judge" not in itself["not_recorded_by_the_run"]
    assert differences("self")["differs"]["judge"]["run"] == "openai/o3"
    spiral = _published("spiral")
    run = RunData(
        Path("run"), {"model": "x", "benchmarks": {"spiral": {"config": {}}}}, {"judge": {"spec": "openai/o3"}}
    )
    assert setting_differences(run, "spiral", spiral)["differs"]["judge"]["published"] == spiral["judge"]


def test_a_hostile_judge_spec_is_text(run: tuple[Path, dict[str, str], str], tmp_path: Path) -> None:
    directory, env, _ = run
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("run.json", "summary.json", "samples.jsonl"):
        copy.joinpath(name).write_bytes((directory / name).read_bytes())
    info = json.loads((copy / "run.json").read_text("utf-8"))
    info["judge"]["spec"] = "<img src=x onerror=alert(1)>[bold]x"
    (copy / "run.json").write_text(json.dumps(info), "utf-8")
    result = cli_in_process(["report", str(copy)], env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    html = (copy / "report.html").read_text("utf-8")
    assert "<img src=x" not in html and "Its judge, &lt;img src=x onerror=alert(1)&gt;[bold]x: no evidence" in html
    # the command quotes the spec for a shell
    assert "--judge &#39;&lt;img src=x onerror=alert(1)&gt;[bold]x&#39;" in html
