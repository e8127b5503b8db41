"""`rescore empathetic`: the paper's statistics recomputed from the released ratings (spec §4)."""

import csv
import json
from functools import cache
from pathlib import Path

import pytest
from scipy.stats import chi2_contingency

from conftest import cli_in_process
from empathybench.data.fetch import fetch_pinned
from empathybench.instruments.empathetic.data import RATINGS_FILE
from empathybench.instruments.empathetic.stats import rescore_ratings_file
from empathybench.stats.contingency import holm_adjust

PINS = "empathybench.instruments.empathetic"  # the package whose pins.json holds the files these tests read

LLMS = ("chatgpt_empathy", "llama_empathy", "gemini_empathy", "mixtral_empathy")

# Spec §4.2: the published overall Good increase (%) and 2x2 Yates chi-square.
PUBLISHED_OVERALL = {
    "chatgpt_empathy": (31.34, 96.77),
    "llama_empathy": (23.63, 54.40),
    "gemini_empathy": (9.63, 8.85),
    "mixtral_empathy": (20.89, 42.36),
}

# Spec §4.4: emotion -> (n, human Good, then per LLM in LLMS order (Good, increase % rounded, chi-square)).
PER_EMOTION = {
    "afraid": (62, 26, (38, +46, 3.91), (39, +50, 4.66), (30, +15, 0.29), (33, +27, 1.16)),
    "angry": (63, 26, (36, +38, 2.57), (37, +42, 3.17), (29, +12, 0.13), (32, +23, 0.80)),
    "annoyed": (68, 27, (43, +59, 6.62), (34, +26, 1.07), (24, -11, 0.13), (41, +52, 4.97)),
    "anxious": (63, 24, (42, +75, 9.20), (39, +62, 6.22), (39, +62, 6.22), (36, +50, 3.85)),
    "apprehensive": (63, 25, (51, +104, 20.72), (38, +52, 4.57), (40, +60, 6.23), (36, +44, 3.18)),
    "ashamed": (57, 30, (35, +17, 0.57), (28, -7, 0.04), (31, +3, 0.00), (28, -7, 0.04)),
    "devastated": (66, 37, (48, +30, 3.30), (44, +19, 1.15), (47, +27, 2.65), (37, +0, 0.00)),
    "disappointed": (60, 29, (38, +31, 2.16), (36, +24, 1.21), (24, -17, 0.54), (33, +14, 0.30)),
    "disgusted": (64, 26, (27, +4, 0.00), (25, -4, 0.00), (25, -4, 0.00), (26, +0, 0.00)),
    "embarrassed": (65, 29, (35, +21, 0.77), (32, +10, 0.12), (35, +21, 0.77), (36, +24, 1.11)),
    "furious": (59, 26, (29, +12, 0.14), (21, -19, 0.57), (22, -15, 0.32), (27, +4, 0.00)),
    "guilty": (61, 30, (31, +3, 0.00), (39, +30, 2.14), (36, +20, 0.83), (37, +23, 1.19)),
    "jealous": (62, 30, (35, +17, 0.52), (35, +17, 0.52), (34, +13, 0.29), (28, -7, 0.03)),
    "lonely": (57, 32, (34, +6, 0.04), (31, -3, 0.00), (40, +25, 1.85), (35, +9, 0.14)),
    "nostalgic": (62, 34, (41, +21, 1.21), (41, +21, 1.21), (38, +12, 0.30), (41, +21, 1.21)),
    "sad": (61, 35, (35, +0, 0.00), (38, +9, 0.14), (40, +14, 0.55), (43, +23, 1.74)),
    "sentimental": (59, 36, (40, +11, 0.33), (41, +14, 0.60), (33, -8, 0.14), (39, +8, 0.15)),
    "terrified": (67, 30, (38, +27, 1.46), (38, +27, 1.46), (33, +10, 0.12), (37, +23, 1.07)),
    "anticipating": (64, 34, (42, +24, 1.59), (37, +9, 0.13), (28, -18, 0.78), (39, +15, 0.51)),
    "caring": (66, 45, (43, -4, 0.03), (46, +2, 0.00), (41, -9, 0.30), (45, +0, 0.00)),
    "confident": (57, 32, (46, +44, 6.86), (34, +6, 0.04), (31, -3, 0.00), (40, +25, 1.85)),
    "content": (67, 40, (54, +35, 6.02), (50, +25, 2.74), (43, +8, 0.13), (46, +15, 0.81)),
    "excited": (64, 30, (44, +47, 5.41), (43, +43, 4.59), (35, +17, 0.50), (44, +47, 5.41)),
    "faithful": (68, 33, (41, +24, 1.45), (41, +24, 1.45), (38, +15, 0.47), (38, +15, 0.47)),
    "grateful": (62, 26, (43, +65, 8.36), (43, +65, 8.36), (34, +31, 1.58), (41, +58, 6.36)),
    "hopeful": (60, 31, (40, +29, 2.21), (43, +39, 4.27), (32, +3, 0.00), (36, +16, 0.54)),
    "impressed": (67, 34, (53, +56, 10.62), (44, +29, 2.48), (35, +3, 0.00), (37, +9, 0.12)),
    "joyful": (60, 33, (47, +42, 6.34), (36, +9, 0.14), (37, +12, 0.31), (40, +21, 1.26)),
    "prepared": (62, 31, (42, +35, 3.33), (43, +39, 4.06), (29, -6, 0.03), (39, +26, 1.61)),
    "proud": (63, 32, (48, +50, 7.70), (46, +44, 5.69), (42, +31, 2.65), (51, +59, 11.44)),
    "surprised": (63, 24, (43, +79, 10.33), (41, +71, 8.14), (29, +21, 0.52), (33, +38, 2.05)),
    "trusting": (58, 29, (33, +14, 0.31), (36, +24, 1.26), (27, -7, 0.03), (38, +31, 2.26)),
}


@cache
def _rescored_release() -> dict:
    return rescore_ratings_file(fetch_pinned(PINS, RATINGS_FILE).path)


@pytest.fixture
def released(mirror: Path) -> dict:
    return _rescored_release()  # computed once per session: the tests only read it


def test_overall_reproduces_the_published_numbers(released: dict) -> None:
    sources = released["sources"]
    assert (sources["human"]["n"], sources["human"]["good"]) == (2000, 986)
    for llm, (increase, chi2) in PUBLISHED_OVERALL.items():
        assert sources[llm]["good_increase_pct"] == increase
        assert sources[llm]["chi2_good_vs_human"] == chi2
        assert sources[llm]["p"] < 0.01
    assert sources["chatgpt_empathy"]["chi2_3way"] == 134.12
    assert sources["human"]["good_increase_pct"] is None  # the baseline is not compared with itself


def test_valence_tables(released: dict) -> None:
    positive_gemini = released["valence"]["positive"]["gemini_empathy"]
    assert positive_gemini["chi2_good_vs_human"] == 1.54
    assert positive_gemini["good_increase_pct"] == 5.95
    assert positive_gemini["p"] > 0.05
    assert released["valence"]["negative"]["chatgpt_empathy"]["chi2_good_vs_human"] == 36.78
    assert released["valence"]["positive"]["human"]["n"] == 881


def test_per_emotion_table_of_spec_4_4(released: dict) -> None:
    assert set(released["emotions"]) == set(PER_EMOTION)
    for emotion, (n, human_good, *cells) in PER_EMOTION.items():
        entry = released["emotions"][emotion]
        assert entry["n"] == n
        assert entry["sources"]["human"]["good"] == human_good
        for llm, (good, increase, chi2) in zip(LLMS, cells, strict=True):
            got = entry["sources"][llm]
            assert got["good"] == good, (emotion, llm)
            assert round(got["good_increase_pct"]) == increase, (emotion, llm)
            assert got["chi2_good_vs_human"] == pytest.approx(chi2, abs=0.006), (emotion, llm)
            assert got["p_holm"] >= got["p"]


def test_pairwise_of_spec_4_3(released: dict) -> None:
    pairs = {(p["a"], p["b"]): p for p in released["pairwise"]["all"]}
    assert pairs[("chatgpt_empathy", "llama_empathy")]["chi2"] == 7.19
    assert pairs[("gemini_empathy", "mixtral_empathy")]["chi2"] == 13.13
    assert pairs[("human", "chatgpt_empathy")]["chi2"] == 134.12


def _write_subset(source: Path, target: Path, keep: int) -> list[dict[str, str]]:
    with source.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        rows = [row for index, row in enumerate(reader) if index % 7 == 0][:keep]
        fields = list(reader.fieldnames or [])
    with target.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    return rows


def test_a_subset_is_analysed_as_correctly(mirror: Path, tmp_path: Path) -> None:
    subset_file = tmp_path / "subset.csv"
    rows = _write_subset(fetch_pinned(PINS, RATINGS_FILE).path, subset_file, keep=150)
    result = rescore_ratings_file(subset_file)
    human_good = sum(r["rating_human"] == "3" for r in rows)
    for llm in LLMS:
        good = sum(r[f"rating_{llm}"] == "3" for r in rows)
        expected, *_ = chi2_contingency([[good, len(rows) - good], [human_good, len(rows) - human_good]])
        entry = result["sources"][llm]
        assert entry["n"] == len(rows) == 150
        assert entry["good"] == good
        assert entry["good_increase_pct"] == round(100 * (good - human_good) / human_good, 2)
        assert entry["chi2_good_vs_human"] == round(expected, 2)
    assert sum(e["n"] for e in result["emotions"].values()) == 150


def test_cli_json(mirror: Path, tmp_path: Path) -> None:
    subset_file = tmp_path / "subset.csv"
    _write_subset(fetch_pinned(PINS, RATINGS_FILE).path, subset_file, keep=60)
    completed = cli_in_process(["rescore", "empathetic", str(subset_file), "--json"])
    assert completed.returncode == 0, completed.stderr
    result = json.loads(completed.stdout)
    assert set(result["sources"]) == {"human", *LLMS}
    for key in ("n", "good", "okay", "bad", "good_increase_pct", "chi2_good_vs_human", "p"):
        assert key in result["sources"]["llama_empathy"]
    assert "positive" in result["valence"] and result["emotions"]


def test_earlier_chatgpt_study(mirror: Path) -> None:
    result = rescore_ratings_file(
        fetch_pinned(PINS, "empathetic_responding/welivita_pu_2024_chatgpt_vs_human_ratings.csv").path
    )
    assert result["sources"]["chatgpt"]["good"] == 1268
    assert result["sources"]["chatgpt"]["chi2_good_vs_human"] == 80.26  # spec §4.6


def test_holm_by_hand() -> None:
    # m = 3: sorted 0.01, 0.02, 0.04 -> 0.03, max(0.03, 0.04), max(0.04, 0.04); None stays None.
    assert holm_adjust([0.04, None, 0.01, 0.02]) == pytest.approx([0.04, None, 0.03, 0.04])
