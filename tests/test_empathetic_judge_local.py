"""`judge validate --judge local`: the embedded model as judge on a few released replies (needs the `local` extra).

About 15 s on 2 cores: five judge prompts (one per released source) of ~775 tokens each, plus re-asks when an
answer cannot be read.
"""

import json
from pathlib import Path

import pytest

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (pip install -e '.[local]')")

from typer.testing import CliRunner

from empathybench.cli import app

pytestmark = pytest.mark.model

LIMIT = 5  # one reply of each of the five released sources
SOURCES = {"human", "chatgpt_empathy", "llama_empathy", "gemini_empathy", "mixtral_empathy"}


def test_local_judge_validate_is_well_formed(mirror: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EMPATHYBENCH_CACHE_DIR", str(tmp_path / "cache"))  # a cold cache: the model is asked
    args = ["judge", "validate", "--judge", "local", "--limit", str(LIMIT), "--json", "--quiet"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)

    assert report["judge"]["spec"] == "local" and report["judge"]["model"] == "smollm2-135m-instruct"
    n_rated, n_unparseable = report["n_rated"], report["n_unparseable"]
    assert report["n_cases"] == LIMIT and report["n_failed_calls"] == 0
    assert n_rated + n_unparseable == LIMIT
    assert 0 <= report["n_reasked"] <= n_rated
    # Every reply is asked once, a reply read after a re-ask once or twice more, an unreadable one three times.
    usage = report["usage"]
    extra = report["n_reasked"] + 2 * n_unparseable
    assert LIMIT + extra <= usage["calls"] <= LIMIT + extra + report["n_reasked"]
    assert usage["cache_hits"] == 0 and usage["prompt_tokens"] > 500 * LIMIT
    assert len(report["raw_unparseable"]) == n_unparseable
    assert all(len(raw) == 3 for raw in report["raw_unparseable"])

    counts = report["confusion_matrix"]["counts"]
    assert sum(map(sum, counts)) == n_rated == sum(report["judge_label_counts"].values())
    assert [sum(column) for column in zip(*counts, strict=True)] == list(report["judge_label_counts"].values())
    assert set(report["by_source"]) == SOURCES
    assert sum(entry["n"] for entry in report["by_source"].values()) == n_rated
    if n_rated:
        assert 0.0 <= report["accuracy"] <= 1.0
    for key in ("weighted_kappa_linear", "weighted_kappa_quadratic"):
        assert report[key] is None or -1.0 <= report[key] <= 1.0
    assert report["human_human_kappa_reference"] == pytest.approx(0.2817)
    assert report["self_preference"]["judge_family"] is None  # SmolLM2 is none of the released sources' families

    # The same command again is answered from the response cache, with the same figures.
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0, again.output
    repeat = json.loads(again.stdout)
    assert repeat["usage"]["cache_hits"] == usage["calls"] and repeat["usage"]["prompt_tokens"] == 0
    for key in ("n_rated", "n_unparseable", "confusion_matrix", "by_source", "weighted_kappa_linear"):
        assert repeat[key] == report[key]
