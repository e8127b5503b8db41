"""Today's published boards in the atlas (specs/atlas-current.md §2): EQ-Bench 3 on eqbench.com at two site
commits, one per judge, and Spiral-Bench's site board, as published-only rows pinned as extracts of the site's .js;
an EQ-Bench 3 run placed by its rubric score on the board its judge rated; the judge's effect between the boards."""

import csv
import hashlib
from pathlib import Path
from typing import Any

import pytest

from conftest import MIRROR
from empathybench.atlas.boards import board_effects, pairs
from empathybench.atlas.data import shipped_atlas
from empathybench.atlas.place import boards_of, place_run
from empathybench.atlas.reproduce import check_run
from empathybench.data.fetch import extract_block, fetch_entry
from empathybench.data.registry import DataFile
from empathybench.errors import DataError
from empathybench.rundir.reader import RunData
from empathybench.stats.agreement import spearman, spearman_interval
from empathybench.stats.tests import bootstrap_interval

SONNET_BOARD, OPUS_BOARD = "eqbench.com @ e44d5e70", "eqbench.com @ 04a8066b"
EXTRACTS = MIRROR / "EQ-bench" / "EQ-bench-site-extracts"
# EQ-bench/eqbench3@f1688609 utils/constants.py MODEL_NAME_SUBS, as specs/atlas-current.md §1 quotes it: the verdict
# keys the leaderboard shows under another name (every other verdict model is on the boards under its own name or
# under a name of the same checkpoint in the identity table).
MODEL_NAME_SUBS = {
    "chatgpt-4o-latest": "chatgpt-4o-latest-2025-04-25",
    "openai/chatgpt-4o-latest": "chatgpt-4o-latest-2025-03-27",
    "deepseek/deepseek-r1": "deepseek-ai/DeepSeek-R1",
    "anthropic/claude-3.5-sonnet": "claude-3-5-sonnet-20241022",
}


def _board(instrument: str, label: str) -> list[dict[str, Any]]:
    return [dict(e) for e in boards_of(shipped_atlas(), instrument)[label]]


def _extract(name: str) -> list[dict[str, str]]:
    if not EXTRACTS.is_dir():
        pytest.skip(f"the offline mirror is not at {MIRROR}")
    return list(csv.DictReader((EXTRACTS / name).read_text("utf-8").splitlines()))


def test_an_extract_pin_holds_one_block_of_a_file_read_whole_or_as_the_mirror_keeps_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = b"// site\nconst other = `x`;\nleaderboardData = `\nmodel,score\na,1.5\n`\n\nfunction f() {}\n"
    block = extract_block(script, "leaderboardData", "site.js")
    assert block == b"model,score\na,1.5\n"
    with pytest.raises(DataError, match="no block missing"):
        extract_block(script, "missing", "site.js")
    monkeypatch.setenv("EMPATHYBENCH_CACHE_DIR", str(tmp_path / "cache"))
    mirror = tmp_path / "mirror"
    whole = mirror / "o" / "site" / ("c" * 40) / "site.js"
    whole.parent.mkdir(parents=True)
    whole.write_bytes(script)
    monkeypatch.setenv("EMPATHYBENCH_MIRROR", str(mirror))
    sha = hashlib.sha256(block).hexdigest()
    entry = DataFile("k", "o/site", "c" * 40, "site.js", sha, None, len(block), "leaderboardData", "extracts/b.csv")
    fetched = fetch_entry(entry)
    assert (
        fetched.path.read_bytes() == block and fetched.verified and fetched.path.name == "site.js.leaderboardData.txt"
    )
    # a mirror without the whole file: the extract it keeps, verified against the same pin
    whole.unlink()
    (mirror / "extracts").mkdir()
    (mirror / "extracts" / "b.csv").write_bytes(block)
    assert fetch_entry(entry, refresh=True).path.read_bytes() == block
    (mirror / "extracts" / "b.csv").write_bytes(block.replace(b"1.5", b"9.5"))
    with pytest.raises(DataError, match="checksum mismatch"):
        fetch_entry(entry, refresh=True)


def test_eqbench3_boards_are_published_only_rows_with_their_judge_and_columns() -> None:
    sonnet, opus = _board("eqbench3", SONNET_BOARD), _board("eqbench3", OPUS_BOARD)
    assert (len(sonnet), len(opus)) == (46, 79)
    assert {e["settings"]["judge"] for e in sonnet} == {"claude-3-7-sonnet-20250219"}
    assert {e["settings"]["judge"] for e in opus} == {"claude-opus-4-6"}
    for entry in sonnet + opus:
        assert entry["status"] == "published-only" and entry["primary"] is False and entry["model_id"]
        low, high = entry["published"]["ci95"]
        assert low <= entry["published"]["value"] <= high
        assert len(entry["figures"]) == 12 and 0 <= entry["figures"]["rubric_0_100"] <= 100
        assert entry["settings"]["board_source"].startswith("EQ-bench/EQ-bench-site@")
    # the anchors, and the rows the spec read by hand (specs/eqbench3.md §6.3)
    by_name = {e["model"]: e for e in sonnet}
    assert by_name["o3"]["published"]["value"] == 1500.0 and by_name["o3"]["figures"]["rubric_0_100"] == 88.0
    assert by_name["claude-3-7-sonnet-20250219"]["figures"]["rubric_0_100"] == 78.8
    later = {e["model"]: e for e in opus}
    assert later["o3"]["figures"]["rubric_0_100"] == 74.7 and later["claude-3-7-sonnet-20250219"]["published"][
        "value"
    ] == pytest.approx(1111.6)
    # the site's own mark is a note, not part of the name
    assert "claude-opus-4-8" in later and "marked *" in later["claude-opus-4-8"]["notes"][1]
    # every row as the mirrored extract has it
    extract = {row["model_name"].lstrip("*"): row for row in _extract("eqbench3-04a8066b.csv")}
    assert set(extract) == set(later)
    for name, row in extract.items():
        assert later[name]["figures"]["rubric_0_100"] == float(row["rubric_0_100"])
        assert later[name]["published"]["ci95"] == [float(row["ci_low_norm"]), float(row["ci_high_norm"])]


def test_the_27_models_with_released_verdicts_are_on_both_boards() -> None:
    atlas = shipped_atlas()
    verdicts = [e for e in atlas["entries"] if e["instrument"] == "eqbench3" and e["status"] == "recomputed"]
    assert len(verdicts) == 27
    for label in (SONNET_BOARD, OPUS_BOARD):
        rows = _board("eqbench3", label)
        names, ids = {e["model"] for e in rows}, {e["model_id"] for e in rows}
        for entry in verdicts:
            name = MODEL_NAME_SUBS.get(entry["model"], entry["model"])
            assert name in names or entry["model_id"] in ids, (label, entry["model"])
    assert "o4-mini" in {e["model"] for e in _board("eqbench3", OPUS_BOARD)}  # openai/o4-mini's row
    assert next(e for e in verdicts if e["model"] == "openai/o4-mini")["model_id"] == next(
        e["model_id"] for e in _board("eqbench3", OPUS_BOARD) if e["model"] == "o4-mini"
    )


def test_spiral_site_board_adds_the_rows_that_differ_from_the_notebook() -> None:
    site = {e["model"]: e for e in _board("spiral", "eqbench.com @ 0b2daebe")}
    # specs/atlas-current.md §2: 10 models, e.g. gpt-5-2025-08-07 87.4, o4-mini 74.4, gemini-2.5-pro 46.6; every one
    # differs from the notebook's row (43.5 for gemini-2.5-pro)
    assert len(site) == 10 and all(e["primary"] is False for e in site.values())
    assert {m: site[m]["published"]["value"] for m in ("gpt-5-2025-08-07", "o4-mini", "gemini-2.5-pro")} == {
        "gpt-5-2025-08-07": 87.4,
        "o4-mini": 74.4,
        "gemini-2.5-pro": 46.6,
    }
    assert "notebook's leaderboard shows 43.5" in site["gemini-2.5-pro"]["notes"][0]
    primary = [e for e in shipped_atlas()["entries"] if e["instrument"] == "spiral" and e["primary"]]
    assert len(primary) == 12  # the notebook's leaderboard, ranked as before


def _run(judge: str, value: float, model: str = "openai/o3") -> RunData:
    metric = {"value": value, "ci95": [value - 1.5, value + 1.5], "n": 45}
    summary = {"model": model, "benchmarks": {"eqbench3": {"metrics": {"score": metric}, "judge_model": judge}}}
    return RunData(Path("runs/x"), summary, {})


@pytest.mark.parametrize(
    ("judge", "board", "extract"),
    [
        ("anthropic/claude-3-7-sonnet-20250219", SONNET_BOARD, "eqbench3-e44d5e70.csv"),
        ("claude-opus-4-6", OPUS_BOARD, "eqbench3-04a8066b.csv"),
    ],
)
def test_an_eqbench3_run_is_placed_by_its_rubric_on_the_board_its_judge_rated(
    judge: str, board: str, extract: str
) -> None:
    (placed,) = place_run(shipped_atlas(), _run(judge, 70.0))
    rubric = [float(row["rubric_0_100"]) for row in _extract(extract)]
    assert placed["board"] == board and placed["value"] == 70.0
    assert placed["rank"] == 1 + sum(r > 70.0 for r in rubric) and placed["among"] == len(rubric) + 1
    nearest = sorted(abs(r - 70.0) for r in rubric)[:3]
    assert [abs(n["value"] - 70.0) for n in placed["nearest"]] == pytest.approx(nearest)
    assert [m["model"] for m in placed["matches"]] == ["o3"]  # its model's row on that board, by rubric
    check = check_run(shipped_atlas(), _run(judge, 70.0))["instruments"]["eqbench3"]
    expected = 88.0 if board == SONNET_BOARD else 74.7
    assert check["published_value"] == expected and check["verdict"] == "differs"
    assert board in check["published_source"]


def test_a_run_whose_judge_rated_no_board_says_so_and_has_no_rank() -> None:
    (placed,) = place_run(shipped_atlas(), _run("openai/gpt-4.1-2025-04-14", 70.0))
    assert placed["rank"] is None and placed["board"] is None and placed["nearest"] == []
    assert "no published board was rated by this run's judge" in placed["no_board_because"]
    check = check_run(shipped_atlas(), _run("openai/gpt-4.1-2025-04-14", 70.0))["instruments"]["eqbench3"]
    assert check["matched"] is None and "no published board" in check["why"]


def test_the_judge_moves_the_rubric_by_22_points_and_keeps_the_order() -> None:
    (effect,) = [e for e in board_effects(shipped_atlas()) if e["instrument"] == "eqbench3"]
    assert effect["boards"] == [SONNET_BOARD, OPUS_BOARD] and effect["n"] == 46
    assert effect["settings_changed"] == {"judge": ["claude-3-7-sonnet-20250219", "claude-opus-4-6"]}
    figures = {f["figure"]: f for f in effect["figures"]}
    rubric, elo = figures["rubric_0_100"], figures["headline"]
    # specs/atlas-current.md §2, measured from the two boards: -22.05 on average (-10.9 to -37.9), Spearman 0.93
    # (rubric) and 0.98 (Elo)
    assert rubric["difference"] == pytest.approx(-22.05, abs=0.005)
    assert rubric["range"] == pytest.approx([-37.9, -10.9], abs=0.005)
    assert rubric["ci95"][0] < -22.05 < rubric["ci95"][1] < 0
    assert rubric["spearman"]["rho"] == pytest.approx(0.93, abs=0.01)
    assert elo["spearman"]["rho"] == pytest.approx(0.98, abs=0.01)
    for figure in (rubric, elo):
        low, high = figure["spearman"]["ci95"]
        assert low < figure["spearman"]["rho"] < high <= 1


def test_two_rows_of_one_checkpoint_pair_by_name_only() -> None:
    def row(model: str, model_id: str | None) -> dict[str, Any]:
        return {"model": model, "model_id": model_id}

    first = [row("a-0327", "a"), row("a-0425", "a"), row("b", "b1"), row("c-old", "c")]
    second = [row("a-0327", "a"), row("a-0425", "a"), row("b-renamed", "b1"), row("d", None)]
    assert sorted(pairs(first, second)) == ["id:b1", "name:a-0327", "name:a-0425"]


def test_the_fast_spearman_interval_is_the_bootstrap_of_spearman() -> None:
    x = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0, 5.0, 8.0]
    y = [2.0, 7.0, 1.0, 8.0, 2.0, 8.0, 1.0, 8.0, 2.0, 8.0, 4.0, 5.0]

    def statistic(indices: list[int]) -> float:
        rho, _ = spearman([x[i] for i in indices], [y[i] for i in indices])
        return float("nan") if rho is None else rho

    expected = bootstrap_interval(len(x), statistic, resamples=300, seed=3)
    assert spearman_interval(x, y, resamples=300, seed=3) == pytest.approx(expected, abs=1e-9)


def _extract_row(name: str, model: str) -> dict[str, str]:
    return next(r for r in _extract(name) if r["model_name"].removeprefix("*").strip() == model)


def test_a_board_row_judged_by_its_own_judge_is_marked() -> None:
    # the reviewer's two rows: Opus 4.6 on its own board (rubric 79.2) and Sonnet 3.7 on its own (78.8)
    opus = next(e for e in _board("eqbench3", OPUS_BOARD) if e["model_id"] == "claude-opus-4-6")
    sonnet = next(e for e in _board("eqbench3", SONNET_BOARD) if e["model_id"] == "claude-3-7-sonnet-20250219")
    for entry, extract in ((opus, "eqbench3-04a8066b.csv"), (sonnet, "eqbench3-e44d5e70.csv")):
        assert entry["figures"]["rubric_0_100"] == float(_extract_row(extract, entry["model"])["rubric_0_100"])
        assert any(note.startswith("judged by itself") for note in entry["notes"][1:])
    # the same model on the other judge's board, and the models that judge neither board, say nothing of the kind
    other = next(e for e in _board("eqbench3", OPUS_BOARD) if e["model_id"] == "claude-3-7-sonnet-20250219")
    marked = [e for e in shipped_atlas()["entries"] if any("judged by itself" in n for n in e["notes"])]
    assert other not in marked and len(marked) == 3
    # the recomputed Elo of anthropic/claude-3.7-sonnet: its pairwise judge is itself
    (elo,) = [e for e in marked if e["status"] == "recomputed"]
    assert elo["model"] == "anthropic/claude-3.7-sonnet" and elo["instrument"] == "eqbench3"
    # the site's own mark is a note of its row, not folded into the note every row of the board has
    starred = [r["model_name"][1:].strip() for r in _extract("eqbench3-04a8066b.csv") if r["model_name"][:1] == "*"]
    rows = {e["model"]: e for e in _board("eqbench3", OPUS_BOARD)}
    assert starred and all(any("marked *" in n for n in rows[m]["notes"][1:]) for m in starred)


def test_the_judge_effect_without_the_judge_models() -> None:
    (effect,) = [e for e in board_effects(shipped_atlas(), instruments=["eqbench3"])]
    rubric = next(f for f in effect["figures"] if f["figure"] == "rubric_0_100")
    assert effect["n"] == 46 and rubric["difference"] == pytest.approx(-22.05, abs=0.005)  # unchanged: every model
    without = effect["without_judges"]
    assert without["left_out"] == ["claude-3-7-sonnet-20250219"] and without["n"] == 45
    # recomputed here from the two boards' rows: the 45 models on both other than the Sonnet board's own judge
    opus = {e["model"]: e["figures"]["rubric_0_100"] for e in _board("eqbench3", OPUS_BOARD)}
    changes = [
        opus[e["model"]] - e["figures"]["rubric_0_100"]
        for e in _board("eqbench3", SONNET_BOARD)
        if e["model"] in opus and e["model_id"] != "claude-3-7-sonnet-20250219"
    ]
    assert len(changes) == 45
    kept = next(f for f in without["figures"] if f["figure"] == "rubric_0_100")
    assert kept["difference"] == pytest.approx(sum(changes) / 45, abs=1e-4)
    assert kept["ci95"][0] < kept["difference"] < kept["ci95"][1] < 0 and kept["spearman"]["n"] == 45
