"""Every instrument as an inspect_ai task (`empathybench/<name>`), offline against the fake OpenAI server.

The same replies (a deterministic answer function of each request, the instrument's canned answers) reach
`empathybench run` and `inspect eval`: the headline inspect shows must equal run's to 1e-9, item by item, and the
requests the server receives must be the same messages with the same sampling.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

# inspect_ai is imported by the tests that use it, not when the suite is collected (1.5 s in every worker).
if importlib.util.find_spec("inspect_ai") is None:
    if os.environ.get("CI"):  # CI installs the `inspect` extra: there these tests must run, never skip
        raise ImportError("inspect_ai is not installed; CI installs the `inspect` extra")
    pytest.skip("inspect_ai is not installed (the `inspect` extra)", allow_module_level=True)

from canned_server import JUDGE, MODEL, SIMULATOR, CannedServer
from conftest import GIEBENCH_FIXTURES, MIRROR
from empathybench.instruments.registry import load
from empathybench.rundir.reader import read_samples

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog

API_KEY = "sk-inspect-test-key"
LIMIT = 2
# name -> (its options, the roles it needs besides the model under test)
INSTRUMENTS: dict[str, tuple[dict[str, str], frozenset[str]]] = {
    "eqbench": ({}, frozenset()),
    "seceu": ({}, frozenset()),
    "giebench": ({"data_dir": str(GIEBENCH_FIXTURES)}, frozenset()),
    "emotionbench": ({}, frozenset()),
    "emobench": ({}, frozenset()),
    "tombench": ({"try_times": "3", "language": "both"}, frozenset()),  # repeated asks, both languages
    "tactfultom": ({"cot": "both", "freeform": "true"}, frozenset()),  # two-pass chain of thought, every format
    "example": ({}, frozenset()),
    "empathetic": ({}, frozenset({"judge"})),
    "eqbench3": ({}, frozenset({"judge"})),
    "sage": ({"rounds": "3"}, frozenset({"simulator"})),
    "spiral": ({"num_turns": "3"}, frozenset({"judge", "simulator"})),
    "mindeval": ({"rounds": "2"}, frozenset({"judge", "simulator"})),
}

pytestmark = pytest.mark.skipif(not MIRROR.is_dir(), reason=f"the offline mirror is not at {MIRROR}")


def run_empathybench(name: str, server: CannedServer, out: Path) -> Path:
    from empathybench.run.api import run

    options, roles = INSTRUMENTS[name]
    judged, simulated = "judge" in roles, "simulator" in roles
    run(
        f"openai/{MODEL}",
        [name],
        preset="quick",
        limit=LIMIT,
        out=out,
        options={f"{name}.{k}": v for k, v in options.items()},
        judge=f"openai/{JUDGE}" if judged else None,
        simulator=f"openai/{SIMULATOR}" if simulated else None,
        base_url=server.server.base_url,
        judge_base_url=server.server.base_url if judged else None,
        simulator_base_url=server.server.base_url if simulated else None,
        use_cache=False,
        allow_unverified=True,
    )
    return out


def run_inspect(
    name: str,
    server: CannedServer,
    log_dir: Path,
    *,
    grader: bool | None = None,
    log_format: str = "eval",
    **task_args: Any,
) -> EvalLog:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    options, needed = INSTRUMENTS[name]
    judged = "judge" in needed if grader is None else grader
    base = {"base_url": server.server.base_url, "api_key": API_KEY}
    roles = {"grader": get_model(f"openai/{JUDGE}", **base)} if judged else {}
    if "simulator" in needed:
        roles["simulator"] = get_model(f"openai/{SIMULATOR}", **base)
    args = {"limit": LIMIT, "allow_unverified": True, **options, **task_args}
    logs = inspect_eval(
        f"empathybench/{name}",
        model=get_model(f"openai/{MODEL}", **base),
        model_roles=roles or None,
        task_args=args,
        log_dir=str(log_dir),
        log_format=log_format,
        display="none",
        log_level="error",
    )
    assert len(logs) == 1
    return logs[0]


@pytest.fixture
def openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.mark.parametrize("name", list(INSTRUMENTS))
def test_inspect_task_equals_empathybench_run(name: str, tmp_path: Path, openai_key: None) -> None:
    with CannedServer(name) as server:
        run_dir = run_empathybench(name, server, tmp_path / "run")
        asked_by_run = Counter(server.asked)
        server.asked.clear()
        log = run_inspect(name, server, tmp_path / "logs")
        asked_by_inspect = Counter(server.asked)
    assert log.status == "success", log.error
    # The same requests: every message byte for byte, the same sampling, as many of each.
    assert asked_by_inspect == asked_by_run
    from empathybench.inspect_bridge.task import RECORD_KEY, item_values

    summary = json.loads((run_dir / "summary.json").read_text("utf-8"))["benchmarks"][name]
    assert log.results is not None
    (scores,) = log.results.scores
    assert scores.name == name
    headline = summary["headline_metric"]
    assert next(iter(scores.metrics)) == headline  # the first metric: the one inspect shows as the headline
    if summary["score"] is None:
        assert math.isnan(scores.metrics[headline].value)  # no figure, said as NaN: the headline stays first
    else:
        assert scores.metrics[headline].value == pytest.approx(summary["score"], abs=1e-9)
    expected_valid = 1.0 if summary["validity"]["status"] == "valid" else 0.0
    assert scores.metrics["valid"].value == expected_valid
    # Item by item: the same value in each sample's Score as in run's record, and the calls kept in the sample.
    instrument = load(name)
    records = {r["item_id"]: r for r in read_samples(run_dir)}
    assert log.samples is not None and {str(s.id) for s in log.samples} == set(records)
    for sample in log.samples:
        record = records[str(sample.id)]
        fields = {k: v for k, v in record.items() if k not in ("calls", "usage", "elapsed_s")}
        assert sample.scores is not None
        config = json.loads((run_dir / "run.json").read_text("utf-8"))["benchmarks"][name]["config"]
        expected = item_values(fields, instrument.item_value, config)
        assert sample.scores[name].value == expected
        assert any(value is not None for value in expected.values()) or fields.get("parse_error")
        assert sample.scores[name].explanation
        kept = sample.metadata[RECORD_KEY]["calls"]

        def exchanges(calls: list[dict[str, Any]]) -> list[str]:
            # calls asked together (a conversation's chunk judges) are recorded in the order they were answered
            return sorted(json.dumps([c["messages"], c["reply"]], sort_keys=True) for c in calls)

        assert exchanges(kept) == exchanges(record["calls"])


def test_judged_instrument_without_a_grader_is_refused_before_any_call(tmp_path: Path, openai_key: None) -> None:
    with CannedServer("eqbench3") as server:
        log = run_inspect("eqbench3", server, tmp_path / "logs", grader=False)
        assert server.server.requests_total == 0
    assert log.status == "error"
    assert log.error is not None and "--model-role grader=" in log.error.message


@pytest.mark.parametrize(
    ("task_args", "expected"),
    [
        ({"preset": "bogus"}, "quick, paper, full, demo"),
        ({"language": "xx"}, "choose one of"),
        ({"limit": 0}, "-T limit must be between 1"),
        ({"seed": -1}, "-T seed must be between 0"),
        ({"no_such_option": 1}, "its options (-T NAME=VALUE) are"),
    ],
)
def test_bad_task_value_is_one_line_naming_the_allowed_values(task_args: dict[str, Any], expected: str) -> None:
    from empathybench.inspect_bridge.task import TaskOptionError, instrument_task

    with pytest.raises(TaskOptionError) as raised:
        instrument_task("eqbench", **{"options": {}, **_split(task_args)})
    message = str(raised.value)
    assert expected in message and "\n" not in message


def _split(task_args: dict[str, Any]) -> dict[str, Any]:
    run_params = {k: v for k, v in task_args.items() if k in ("preset", "limit", "seed")}
    return {**run_params, "options": {k: v for k, v in task_args.items() if k not in run_params}}


def test_inspect_cli_prints_a_bad_value_in_one_line_and_calls_nothing(tmp_path: Path) -> None:
    with CannedServer("eqbench") as server:
        env = {**os.environ, "OPENAI_API_KEY": API_KEY, "OPENAI_BASE_URL": server.server.base_url}
        command = [sys.executable, "-m", "inspect_ai", "eval", "empathybench/eqbench", "--model", f"openai/{MODEL}"]
        result = subprocess.run(
            [*command, "-T", "language=xx", "--log-dir", str(tmp_path)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert server.server.requests_total == 0
    shown = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    assert len(shown) == 1 and shown[0].startswith("EQ-Bench v2 has no language 'xx'; choose one of en, de"), shown
    assert API_KEY not in result.stdout + result.stderr


def test_report_reads_inspect_logs_as_runs(tmp_path: Path, openai_key: None) -> None:
    from typer.testing import CliRunner

    from empathybench.cli import app

    logs = tmp_path / "logs"
    with CannedServer("eqbench") as server:
        run_inspect("eqbench", server, logs)
    with CannedServer("seceu") as server:
        run_inspect("seceu", server, logs, log_format="json")  # both of inspect's log formats
    assert {p.suffix for p in logs.iterdir()} == {".eval", ".json"}
    result = CliRunner().invoke(app, ["report", str(logs), "--out", str(tmp_path / "one.html")])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "one.html").read_text("utf-8")
    # One run of the model with both instruments: the profile, each section, and where the figures came from.
    assert f"openai/{MODEL}" in page and "inspect_ai" in page
    assert 'id="bench-eqbench"' in page and 'id="bench-seceu"' in page
    markdown = (tmp_path / "one.md").read_text("utf-8")
    assert "inspect_ai" in markdown
    # Without --out the report goes beside the logs, under a name of its own.
    beside = CliRunner().invoke(app, ["report", str(logs)])
    assert beside.exit_code == 0, beside.output
    assert (logs / f"empathybench-openai-{MODEL}.html").is_file()
    # A comparison of an inspect log directory with an EmpathyBench run directory of another model.
    with CannedServer("eqbench") as server:
        run_dir = run_empathybench("eqbench", server, tmp_path / "run")
    compared = CliRunner().invoke(app, ["report", str(logs), str(run_dir), "--out", str(tmp_path / "cmp.html")])
    assert compared.exit_code == 0, compared.output
    comparison = json.loads((tmp_path / "cmp.json").read_text("utf-8"))
    assert [r["directory"] for r in comparison["runs"]] == [str(logs), str(run_dir)]
    assert "inspect_ai" in comparison["runs"][0]["source"] and "source" not in comparison["runs"][1]
    assert "read from inspect_ai" in (tmp_path / "cmp.html").read_text("utf-8")
    board = comparison["benchmarks"]["eqbench"]["leaderboard"]["score"]
    assert [row["run"] for row in board] == [r["label"] for r in comparison["runs"]]
    assert all(row["value"] is not None for row in board)
    assert API_KEY not in page + markdown + (tmp_path / "cmp.html").read_text("utf-8")


def test_a_model_that_answers_nothing_keeps_its_headline_first_and_its_validity(
    tmp_path: Path, openai_key: None
) -> None:
    with CannedServer("eqbench") as server:
        server.responder = lambda request: "I cannot say."  # type: ignore[assignment,method-assign]
        log = run_inspect("eqbench", server, tmp_path / "logs")
    assert log.status == "success" and log.results is not None
    (scores,) = log.results.scores
    first, *_ = scores.metrics
    assert first == "score" and math.isnan(scores.metrics["score"].value)
    assert scores.metrics["valid"].value == 0.0 and scores.metrics["insufficient"].value == 1.0
    assert scores.metrics["n_parsed"].value == 0.0
    assert log.samples is not None and all(s.scores["eqbench"].value == {"score": None} for s in log.samples)
    assert all("parse error" in s.scores["eqbench"].explanation for s in log.samples)
