"""Rescoring TactfulToM's released outputs (specs/tactfultom.md sections 5-7, 10).

The released result files of the two development models are read through the project's fetch code from the mirror
(pinned at commit a5e8635) and rescored by `empathybench rescore tactfultom FILE...`: the pooled rows must equal the
spec's section 10 table to 2 decimals (copied below and checked against the spec file when it is beside the
repository), the stored clean_result and our re-reading of original_result must agree, and the per-set rows must
pool to the model's row with the legacy dataset's question counts as denominators.
"""

import json
import re
from pathlib import Path
from typing import Any

import pytest

from conftest import MIRROR, cli_in_process
from empathybench.data.fetch import fetch_pinned
from empathybench.errors import UserError
from empathybench.instruments.tactfultom.data import SETS, legacy_key
from empathybench.instruments.tactfultom.rescore import rescore_files
from empathybench.instruments.tactfultom.score import CATEGORIES

PACKAGE = "empathybench.instruments.tactfultom"
SPEC = MIRROR.parent / "specs" / "tactfultom.md"
DEV_MODELS = ("gpt-4o-2024-08-06", "gpt-4o-2024-08-06-cot", "Llama-3.3-70B-Instruct", "Llama-3.3-70B-Instruct-cot")
# specs/tactfultom.md section 10: micro, macro (ours), then the 11 categories in upstream's order.
EXPECTED: dict[str, tuple[float, ...]] = {
    "gpt-4o-2024-08-06": (62.27, 62.30, 54.76, 98.81, 81.03, 61.56, 41.55, 74.13, 65.49, 68.78, 60.62, 33.33, 45.24),
    "gpt-4o-2024-08-06-cot": (66.51, 55.99, 71.43, 96.43, 65.52, 72.77, 14.08, 81.60, 19.01, 79.11, 54.40, 7.14, 54.37),
    "Llama-3.3-70B-Instruct": (
        52.48,
        51.52,
        40.48,
        95.24,
        60.34,
        45.54,
        21.83,
        74.40,
        28.17,
        70.19,
        55.96,
        5.95,
        68.65,
    ),
    "Llama-3.3-70B-Instruct-cot": (
        55.73,
        49.40,
        46.43,
        98.81,
        77.59,
        56.16,
        0.70,
        66.93,
        0.70,
        77.93,
        53.89,
        0.00,
        64.29,
    ),
}
DENOMINATORS = (84, 84, 58, 1704, 142, 375, 142, 426, 193, 84, 252)  # section 10, in upstream's category order


def result_files(model: str) -> list[Path]:
    return [fetch_pinned(PACKAGE, f"tactfultom/results/clean/{model}-{s}.json").path for s in SETS]


@pytest.fixture(scope="module")
def rescored() -> dict[str, Any]:
    if not MIRROR.is_dir():
        pytest.skip(f"the offline mirror is not at {MIRROR}")
    return rescore_files([path for model in DEV_MODELS for path in result_files(model)])


def _figures(row: dict[str, Any]) -> tuple[float, ...]:
    return (row["overall_micro"], row["overall_macro"], *(row[c] for c in CATEGORIES))


@pytest.mark.parametrize("model", DEV_MODELS)
def test_pooled_rows_equal_the_published_table_in_both_readings(rescored: dict[str, Any], model: str) -> None:
    entry = rescored["models"][model]
    assert entry["sets"] == list(SETS)
    for reading in ("clean", "original"):
        assert _figures(entry[reading]["pooled"]) == EXPECTED[model], reading
        assert tuple(entry[reading]["pooled"]["n"][c] for c in CATEGORIES) == DENOMINATORS


def test_the_expected_table_is_the_specs(mirror: Path) -> None:
    if not SPEC.is_file():
        pytest.skip(f"the spec is not beside the repository ({SPEC})")
    section = SPEC.read_text("utf-8").split("## 10 ")[1].split("## 11 ")[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 14 and re.fullmatch(r"\d+\.\d\d", cells[1]):
            rows[cells[0]] = tuple(float(c) for c in cells[1:])
    assert rows == EXPECTED


def _legacy_questions(set_id: str) -> dict[str, int]:
    records = json.loads(fetch_pinned(PACKAGE, legacy_key(set_id)).path.read_text("utf-8"))
    return {c: sum(len(r.get(c) or []) for r in records) for c in CATEGORIES}


@pytest.mark.parametrize("model", DEV_MODELS)
def test_per_set_rows_pool_to_the_model_row(rescored: dict[str, Any], model: str) -> None:
    entry = rescored["models"]["gpt-4o-2024-08-06" if model.startswith("gpt") else model]
    per_set, pooled = entry["clean"]["per_set"], entry["clean"]["pooled"]
    assert sorted(per_set) == list(SETS)
    for category in CATEGORIES:
        counts = [per_set[s]["n"][category] for s in SETS]
        # one scored entry per legacy question (no API failure in these files): the legacy dataset's counts
        assert counts == [_legacy_questions(s)[category] for s in SETS], category
        weighted = sum(per_set[s][category] * n for s, n in zip(SETS, counts, strict=True)) / sum(counts)
        assert weighted == pytest.approx(pooled[category], abs=0.01 + 1e-9), category


def test_the_cli_prints_json_for_several_files_and_a_table_without_json(tmp_path: Path, mirror: Path) -> None:
    files = [str(path) for path in result_files("gpt-4o-2024-08-06")]
    shown = cli_in_process(["rescore", "tactfultom", *files, "--json"])
    assert shown.returncode == 0, shown.stderr
    result = json.loads(shown.stdout)
    assert _figures(result["models"]["gpt-4o-2024-08-06"]["clean"]["pooled"]) == EXPECTED["gpt-4o-2024-08-06"]
    assert result["columns"] == list(CATEGORIES) and result["ours"] == ["overall_micro", "overall_macro"]
    table = cli_in_process(["rescore", "tactfultom", *files])
    assert table.returncode == 0 and "62.30" in table.stdout and "liedetectabilityQAs_binary" in table.stdout


def test_fewer_than_five_sets_are_scored_and_named_in_a_note(mirror: Path) -> None:
    one = str(result_files("Llama-3.3-70B-Instruct")[2])
    shown = cli_in_process(["rescore", "tactfultom", one, "--json"])
    assert shown.returncode == 0, shown.stderr
    entry = json.loads(shown.stdout)["models"]["Llama-3.3-70B-Instruct"]
    assert entry["sets"] == ["2"] and entry["clean"]["pooled"] == entry["clean"]["per_set"]["2"]
    assert "Llama-3.3-70B-Instruct: 1 of upstream's 5 set files (sets 2)" in shown.stderr


def _one_entry(**fields: Any) -> str:
    """A result file of one conversation with one list entry, `fields` replacing its good ones."""
    entry = {
        "question_type": "list",
        "correct_answer": ["Mica"],
        "original_result": "Mica",
        "clean_result": ["Mica"],
        "mcq_mapping": [],
        "context_type": "full_context",
    }
    return json.dumps([{"liedetectabilityQAs_list": [[{**entry, **fields}]]}])


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("results.json", "[]", "not a TactfulToM result file name"),
        ("model-0.json", "{}", "not a TactfulToM result file (a list of conversations)"),
        ("model-0.json", "[1]", "conversation 0 is not an object"),
        ("model-0.json", '[{"beliefQAs": [[{"question_type": "essay"}]]}]', "holds an entry of no known format"),
        ("model-0.json", "not json", "is not a JSON file"),
        ("model-0.json", "[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ("model-0.json", '{"a": ' + "9" * 5000 + "}", "is not a JSON file"),
        ("model-0.json", _one_entry(clean_result=[["Mica"]]), "holds an entry of wrong types"),
        ("model-0.json", _one_entry(correct_answer={"Mica": 1}), "holds an entry of wrong types"),
        ("model-0.json", _one_entry(mcq_mapping="[0, 1]"), "holds an entry of wrong types"),
        ("model-0.json", _one_entry(original_result=7), "holds an entry of wrong types"),
        ("model\x1b[2J-0.json", "[]", "a result file's name must be printable text"),
    ],
)
def test_a_bad_file_is_one_line(tmp_path: Path, name: str, content: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(content, "utf-8")
    shown = cli_in_process(["rescore", "tactfultom", str(path)])
    assert shown.returncode != 0 and message in shown.stderr
    assert len([line for line in shown.stderr.splitlines() if line.strip()]) == 1


def test_the_same_set_twice_and_no_file_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "m-1.json"
    path.write_text("[]", "utf-8")
    twice = cli_in_process(["rescore", "tactfultom", str(path), str(path)])
    assert twice.returncode != 0 and "set 1 of m is named twice" in twice.stderr
    none = cli_in_process(["rescore", "tactfultom"])
    assert none.returncode != 0


@pytest.mark.parametrize("model", DEV_MODELS)
def test_lenient_lists_accept_all_upstream_accepts_and_lift_the_cot_lists(rescored: dict[str, Any], model: str) -> None:
    entry = rescored["models"][model]
    lists = [c for c in CATEGORIES if c.endswith("_list")]
    assert sorted(entry["lenient_lists"]) == sorted(lists)
    for category in lists:
        assert entry["lenient_lists"][category] >= entry["clean"]["pooled"][category]
        if model.endswith("-cot"):  # the second pass's lists end in a period or say "and": upstream reads ~none
            assert entry["lenient_lists"][category] > entry["clean"]["pooled"][category]


def test_a_file_too_large_is_refused_before_it_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from empathybench.instruments.tactfultom import rescore

    path = tmp_path / "m-0.json"
    path.write_text(_one_entry(), "utf-8")
    monkeypatch.setattr(rescore, "MAX_FILE_BYTES", 100)
    with pytest.raises(UserError, match="a TactfulToM result file is smaller \\(limit 100\\)"):
        rescore.rescore_files([path])


def test_a_models_name_with_markup_is_printed_as_text(tmp_path: Path) -> None:
    path = tmp_path / "[bold red]x[-0.json"
    path.write_text(_one_entry(), "utf-8")
    shown = cli_in_process(["rescore", "tactfultom", str(path)])
    assert shown.returncode == 0, shown.stderr
    assert "[bold red]x[" in shown.stdout and "liedetectabilityQAs_list" in shown.stdout
