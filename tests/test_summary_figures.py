"""summary.json figures are not corrupted (issue 11 item 17): whole failure reasons, no score without a parse."""

import json
import os
import sys
from pathlib import Path

from conftest import run_in_process
from empathybench.instruments.eqbench.parse import failure_kind
from empathybench.testing.fake_openai import FakeOpenAIServer

TEST_KEY = "sk-test-secret-123"


def test_failure_kind_keeps_reasons_whole_and_drops_item_detail() -> None:
    assert failure_kind("no 'Label: number' pairs found") == "no 'Label: number' pairs found"
    assert failure_kind("found 3 pairs, expected 4") == "found 3 pairs, expected 4"
    assert failure_kind("labels do not match references: missing Joy; unexpected Fun") == (
        "labels do not match references"
    )
    assert failure_kind("value cannot be converted to a number: Joy: 5.5.5") == "value cannot be converted to a number"


def test_a_run_with_nothing_parsed_reports_no_score_everywhere(tmp_path: Path, mirror: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "EMPATHYBENCH_"))}
    env.update(EMPATHYBENCH_CACHE_DIR=str(tmp_path / "cache"), EMPATHYBENCH_MIRROR=str(mirror), OPENAI_API_KEY=TEST_KEY)
    run_dir = tmp_path / "run"
    with FakeOpenAIServer(answer=lambda request: "I would rather not put numbers on feelings.") as server:
        command = [sys.executable, "-m", "empathybench", "run", "--model", "openai/fake", "--base-url"]
        command += [server.base_url, "--bench", "eqbench", "--preset", "paper", "--limit", "6", "--out", str(run_dir)]
        result = run_in_process(command, env)
    assert result.returncode == 1 and "eqbench: no item could be scored" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr

    eqbench = json.loads((run_dir / "summary.json").read_text("utf-8"))["benchmarks"]["eqbench"]
    assert eqbench["n_parsed"] == 0
    assert eqbench["parse_failures"] == {"no 'Label: number' pairs found": 6}
    assert eqbench["score"] is None
    assert eqbench["metrics"]["score"]["value"] is None
    # The terminal shows a dash for the missing score, not 0.00; the reports render.
    [row] = [line for line in result.stdout.splitlines() if line.startswith("│") and "eqbench" in line]
    assert "—" in row and "0.00" not in row
    assert (run_dir / "report.html").stat().st_size > 0
    assert "no 'Label: number' pairs found" in (run_dir / "report.html").read_text("utf-8").replace("&#39;", "'")
