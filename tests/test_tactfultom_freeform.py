"""TactfulToM's optional free-form check (the `tactfultom-freeform` extra): the similarity is upstream's own
`sentence_cosine_similarity` (evaluate_freeform.py, pinned, compiled on its own) on the pinned all-MiniLM-L6-v2
weights, `rescore --freeform` takes each released answer's options from the legacy dataset at the same place (and
leaves out, counted, an answer that does not match it), a run records each answer's similarities; without the extra
the option and the flag are refused in one line. The tests that embed skip where the extra is not installed."""

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import cli_in_process, run_instrument
from empathybench.data.fetch import fetch_pinned
from empathybench.instruments.tactfultom import freeform
from empathybench.instruments.tactfultom.prompts import options_of
from upstream_code import upstream_functions_of

PACKAGE = "empathybench.instruments.tactfultom"
RELEASED = "tactfultom/results/clean/gpt-4o-2024-08-06-1.json"
needs_extra = pytest.mark.skipif(freeform.missing_extra() is not None, reason=str(freeform.missing_extra()))


def test_without_the_extra_the_option_and_the_flag_are_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(freeform, "missing_extra", lambda: "sentence-transformers is not installed (pip install x)")
    shown = cli_in_process(
        ["run", "-m", "scripted/plausible", "--bench", "tactfultom", "--option", "tactfultom.freeform_check=true"]
    )
    assert shown.returncode != 0 and "the TactfulToM free-form check needs its extra" in shown.stderr
    assert len(shown.stderr.strip().splitlines()) == 1
    path = tmp_path / "m-0.json"
    path.write_text("[]", "utf-8")
    flagged = cli_in_process(["rescore", "tactfultom", str(path), "--freeform"])
    assert flagged.returncode != 0 and len(flagged.stderr.strip().splitlines()) == 1
    options = ["--option", "tactfultom.freeform_check=true", "--option", "tactfultom.freeform=false"]
    quick = cli_in_process(["run", "-m", "scripted/plausible", "--bench", "tactfultom", *options])
    assert quick.returncode != 0 and "needs the free-form requests" in quick.stderr


def _released_freeform(limit: int) -> list[tuple[str, list[str], dict[str, Any]]]:
    """(answer, options from the legacy dataset, entry) of the first free-form entries of a released file."""
    results = json.loads(fetch_pinned(PACKAGE, RELEASED).path.read_text("utf-8"))
    legacy = json.loads(fetch_pinned(PACKAGE, "tactfultom/legacy/Tactful_conv_set_1.json").path.read_text("utf-8"))
    found = []
    for number, conversation in enumerate(results):
        for category, questions in conversation.items():
            for index, question in enumerate(questions):
                for entry in question:
                    if entry["question_type"] == "freeform" and len(found) < limit:
                        options = options_of(legacy[number][category][index])
                        found.append((entry["original_result"], options, entry))
    return found


@needs_extra
def test_the_weights_are_the_pinned_ones_and_the_similarity_is_upstreams(mirror: Path) -> None:
    from sklearn.metrics.pairwise import cosine_similarity

    assert freeform._sha256(freeform.model_dir() / "model.safetensors") == freeform.WEIGHTS_SHA256
    source = fetch_pinned(PACKAGE, "tactfultom/code/evaluate_freeform.py").path.read_text("utf-8")
    upstream = upstream_functions_of(
        source, "evaluate_freeform.py", ("sentence_cosine_similarity",), {"cosine_similarity": cosine_similarity}
    )
    model = freeform.embedder()
    for answer, options, entry in _released_freeform(4):
        assert entry["correct_answer"] == options[0]  # the legacy question at the same place is this entry's
        theirs = [upstream["sentence_cosine_similarity"](answer, option, model) for option in options]
        assert freeform.cosine_similarities(answer, options) == pytest.approx(theirs, abs=1e-5)
    assert freeform.cosine_similarities("the same words", ["the same words"]) == pytest.approx([1.0], abs=1e-5)


@needs_extra
def test_rescore_freeform_takes_the_legacy_options_and_counts_a_mismatch(tmp_path: Path, mirror: Path) -> None:
    results = json.loads(fetch_pinned(PACKAGE, RELEASED).path.read_text("utf-8"))[:1]  # one conversation
    freeform_entries = [
        e for q in results[0].values() for question in q for e in question if e["question_type"] == "freeform"
    ]
    path = tmp_path / "gpt-4o-2024-08-06-1.json"
    path.write_text(json.dumps(results), "utf-8")
    shown = cli_in_process(["rescore", "tactfultom", str(path), "--freeform", "--json"])
    assert shown.returncode == 0, shown.stderr
    checked = json.loads(shown.stdout)["models"]["gpt-4o-2024-08-06"]["freeform_check"]
    assert sum(checked["n"].values()) == len(freeform_entries) and checked["n_misaligned"] == 0
    assert 0 <= checked["overall_micro"] <= 100
    freeform_entries[0]["correct_answer"] = "not the legacy gold"
    path.write_text(json.dumps(results), "utf-8")
    moved = cli_in_process(["rescore", "tactfultom", str(path), "--freeform", "--json"])
    assert json.loads(moved.stdout)["models"]["gpt-4o-2024-08-06"]["freeform_check"]["n_misaligned"] == 1
    assert "1 free-form answers do not match the legacy dataset's questions" in moved.stderr


@needs_extra
def test_a_run_records_each_answers_similarities(tmp_path: Path, mirror: Path) -> None:
    summary, records, _ = run_instrument(
        tmp_path,
        "tactfultom",
        "scripted/plausible",
        "--limit",
        "3",
        "--option",
        "tactfultom.categories=beliefQAs",
        "--option",
        "tactfultom.freeform_check=true",
    )
    for record in records:
        answer = record["conditions"]["direct"]["freeform"]
        similarity = answer["similarity"]
        assert len(similarity) == len(record["conditions"]["direct"]["mcq"]["mapping"])
        assert answer["gold_closest"] == (
            similarity.index(max(similarity)) == 0 and similarity.count(max(similarity)) == 1
        )
    checked = summary["conditions"]["direct"]["freeform_check"]
    assert checked["overall"]["n"] == 3 and set(checked["categories"]) == {"beliefQAs"}
    expected = 100 * sum(r["conditions"]["direct"]["freeform"]["gold_closest"] for r in records) / 3
    assert checked["overall"]["value"] == pytest.approx(expected, abs=1e-3)
