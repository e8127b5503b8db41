"""EmoBench on the embedded model, in process and offline (needs the `local` extra): the quick preset on a few items
of each task and language completes, records every item and labels its number honestly (parsed count, invalid
rate, validity status), whatever the 135M model scores."""

import json
from pathlib import Path

import pytest

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (pip install -e '.[local]')")

from rich.console import Console

from empathybench.report.validity import STATUSES
from empathybench.run.execute import RunOptions, execute_run

pytestmark = pytest.mark.model

LIMIT = 1  # items per task and language: 2 EU (2 calls each) + 2 EA = 6 calls


def test_quick_preset_on_the_embedded_model_records_every_item_and_labels_its_number(
    tmp_path: Path, mirror: Path
) -> None:
    out = tmp_path / "run"
    result = execute_run(
        RunOptions(model="local", benchmarks=["emobench"], preset="quick", limit=LIMIT, out=out, show_progress=False),
        Console(file=open("/dev/null", "w")),  # noqa: SIM115
    )
    records = [json.loads(line) for line in (out / "samples.jsonl").read_text("utf-8").splitlines()]
    cells = {(r["task"], r["language"]) for r in records}
    assert cells == {("EU", "en"), ("EU", "zh"), ("EA", "en"), ("EA", "zh")}
    assert len(records) == 4 * LIMIT and len({r["item_id"] for r in records}) == 4 * LIMIT
    for record in records:
        assert record["status"] == "ok"
        # paper2024 asks EU in two calls (emotion, then cause), EA in one; each reply is kept
        assert len(record["calls"]) == (2 if record["task"] == "EU" else 1)
        samples = record["conditions"]["paper2024"]["orders"][0]["samples"]
        answers = [a for sample in samples for a in sample["robust"].values()]
        failed = [a["reason"] for a in answers if a["index"] is None]
        assert record["parse_error"] == (failed[0] if failed else None)  # an unparsed answer says why

    stored = json.loads((out / "summary.json").read_text("utf-8"))
    summary = stored["benchmarks"]["emobench"]
    assert result.summary["benchmarks"]["emobench"]["status"] == "complete"
    assert summary["n_items"] == 4 * LIMIT
    # parsed = every question of the item answered; recount from the records (one sample, one order here)
    assert summary["n_parsed"] == sum(r["parse_error"] is None for r in records)
    answers_by_cell = {
        cell: [
            answer
            for r in records
            if (r["task"], r["language"]) == cell
            for sample in r["conditions"]["paper2024"]["orders"][0]["samples"]
            for answer in sample["robust"].values()
        ]
        for cell in cells
    }
    assert sum(map(len, answers_by_cell.values())) == 2 * 2 * LIMIT + 2 * LIMIT  # EU: emotion and cause
    worst = max(100 * sum(a["index"] is None for a in cell) / len(cell) for cell in answers_by_cell.values())
    assert summary["invalid_rate"] == pytest.approx(worst)
    assert f"invalid answers up to {worst:.1f}%" in summary["headline_note"]
    # each task-language figure says how many of its items were answered, and is labelled insufficient below half
    for task, language in cells:
        entry = summary["metrics"][f"{'eu_joint' if task == 'EU' else 'ea'}_accuracy_{language}"]
        cell = [r for r in records if (r["task"], r["language"]) == (task, language)]
        assert entry["n"] == len(cell) and entry["n_answered"] == sum(r["parse_error"] is None for r in cell)
        assert entry["label"].startswith("insufficient: ") == (entry["n_answered"] < 0.5 * len(cell))
    # the status follows the house rule: fewer than half of the items answered is "insufficient"
    validity = summary["validity"]
    assert validity["status"] in STATUSES
    assert (validity["status"] == "insufficient") == (summary["n_parsed"] < 0.5 * summary["n_items"])
    row = next(r for r in stored["profile"] if r["benchmark"] == "emobench")
    assert row["title"] == "EmoBench" and row["validity"] == validity and row["note"] == summary["headline_note"]


def test_paper_preset_on_the_embedded_model_votes_over_every_order_and_sample(tmp_path: Path, mirror: Path) -> None:
    """The paper preset (the 4 upstream option orders, 5 samples each, majority vote) end to end on one EA item in
    English: 20 calls in process; whatever the model answers, each order keeps its 5 samples and its vote."""
    out = tmp_path / "paper"
    result = execute_run(
        RunOptions(
            model="local",
            benchmarks=["emobench"],
            preset="paper",
            limit=1,
            options={"emobench.task": "EA", "emobench.lang": "en"},
            out=out,
            show_progress=False,
        ),
        Console(file=open("/dev/null", "w")),  # noqa: SIM115
    )
    records = [json.loads(line) for line in (out / "samples.jsonl").read_text("utf-8").splitlines()]
    assert [(r["task"], r["language"]) for r in records] == [("EA", "en")]
    (record,) = records
    assert record["status"] == "ok" and len(record["calls"]) == 4 * 5
    orders = record["conditions"]["paper2024"]["orders"]
    assert len(orders) == 4 and all(len(order["samples"]) == 5 for order in orders)
    summary = result.summary["benchmarks"]["emobench"]
    assert summary["status"] == "complete" and summary["validity"]["status"] in STATUSES
    assert set(summary["metrics"]) == {"ea_accuracy_en"}
