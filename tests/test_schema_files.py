"""summary.json and run.json are pydantic models; the JSON schema files shipped with the package are generated from
them and stay in sync (regenerate with `python -m empathybench.schema`); what a run writes validates against both."""

import json
from pathlib import Path

import jsonschema
import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from empathybench.cli import app
from empathybench.schema import InstrumentSummary, RunInfo, RunSummary, SkippedSummary
from empathybench.schema.files import REGENERATE, SCHEMA_FILES, checked_in, render

PACKAGE_SCHEMA_DIR = Path(__file__).resolve().parents[1] / "src" / "empathybench" / "schema"
GIEBENCH_FIXTURES = Path(__file__).parent / "fixtures" / "giebench" / "official"


@pytest.mark.parametrize("name", sorted(SCHEMA_FILES))
def test_checked_in_schema_equals_the_generated_one(name: str) -> None:
    path = PACKAGE_SCHEMA_DIR / name
    assert path.exists(), f"{path} is missing: run `{REGENERATE}`"
    assert path.read_text("utf-8") == render(SCHEMA_FILES[name]), f"{path} is out of date: run `{REGENERATE}`"


def test_regenerating_writes_the_same_files(tmp_path: Path) -> None:
    from empathybench.schema.files import write_schema_files

    written = write_schema_files(tmp_path)
    assert sorted(p.name for p in written) == sorted(SCHEMA_FILES)
    for path in written:
        assert json.loads(path.read_text("utf-8")) == checked_in(path.name)


@pytest.fixture(scope="module")
def scripted_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("run") / "run"
    result = CliRunner().invoke(
        app,
        [
            "run",
            "--model",
            "scripted/plausible",
            "--limit",
            "2",
            "--out",
            str(out),
            "--quiet",
            "--no-cache",
            "--allow-unverified",  # the GIEBench fixtures are invented, not the pinned files
            "--option",
            f"giebench.data_dir={GIEBENCH_FIXTURES}",
        ],
    )
    assert result.exit_code == 0, result.output
    return out


def test_a_scripted_run_writes_files_that_follow_the_schemas(mirror: Path, scripted_run: Path) -> None:
    summary = json.loads((scripted_run / "summary.json").read_text("utf-8"))
    run_info = json.loads((scripted_run / "run.json").read_text("utf-8"))
    jsonschema.validate(summary, checked_in("summary.schema.json"))
    jsonschema.validate(run_info, checked_in("run.schema.json"))
    typed = RunSummary.model_validate(summary)
    assert typed.schema_version == 1 and typed.model == "scripted/plausible"
    for name, entry in typed.benchmarks.items():
        assert isinstance(entry, InstrumentSummary), (name, entry)
        headline = entry.headline
        assert headline is not None and headline.ci95 is not None, name
        # Instrument details stay as extra keys, exactly as written.
        assert entry.model_extra is not None
        for key, value in entry.model_extra.items():
            assert summary["benchmarks"][name][key] == value
    info = RunInfo.model_validate(run_info)
    assert set(info.benchmarks) == set(typed.benchmarks)
    assert info.options.limit == 2


def test_the_schemas_refuse_what_breaks_the_contract() -> None:
    fixture = Path(__file__).parent / "fixtures" / "run-0.1" / "summary.json"
    summary = json.loads(fixture.read_text("utf-8"))
    assert isinstance(RunSummary.model_validate(summary).benchmarks["giebench"], SkippedSummary)
    broken = json.loads(json.dumps(summary))
    broken["benchmarks"]["eqbench"]["metrics"]["score"]["ci95"] = [1.0]  # an interval has two ends
    with pytest.raises(ValidationError):
        RunSummary.model_validate(broken)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, checked_in("summary.schema.json"))
    newer = {**summary, "schema_version": 2}
    with pytest.raises(ValidationError):
        RunSummary.model_validate(newer)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(newer, checked_in("summary.schema.json"))


def test_a_run_whose_summary_breaks_the_contract_stops_with_one_line(
    mirror: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """summary.json is validated before it is written: a broken envelope is one line, and nothing wrong is written
    (the finished items stay in samples.jsonl, so the same command resumes once the cause is fixed)."""
    import empathybench.run.summary as run_summary
    from empathybench.errors import UserError

    broken_profile = [{"benchmark": "eqbench"}]  # no title, no value
    monkeypatch.setattr(run_summary, "build_profile", lambda benchmarks: broken_profile)
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app, ["run", "--model", "scripted/plausible", "--bench", "eqbench", "--limit", "2", "--out", str(out), "-q"]
    )
    assert isinstance(result.exception, UserError), result.output
    message = str(result.exception)
    assert (
        len(message.splitlines()) == 1 and "summary.json does not follow its schema" in message and "profile" in message
    )
    assert not (out / "summary.json").exists()
    assert len((out / "samples.jsonl").read_text("utf-8").splitlines()) == 2
    monkeypatch.undo()  # the cause fixed: the same command resumes (the directory is not left locked)
    again = CliRunner().invoke(
        app, ["run", "--model", "scripted/plausible", "--bench", "eqbench", "--limit", "2", "--out", str(out), "-q"]
    )
    assert again.exit_code == 0, again.output
    assert json.loads((out / "summary.json").read_text("utf-8"))["session"]["usage"]["calls"] == 0
