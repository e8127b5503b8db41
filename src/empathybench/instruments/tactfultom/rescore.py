"""`empathybench rescore tactfultom FILE...`: the released result files (results/{original,clean}/<model>[-cot]-<set>
.json) scored as upstream scored them, per file (cases/prettytable.txt's rows) and pooled per model over its set
files (cases/main_table.txt's rows), under the table's names; specs/tactfultom.md sections 5-7.

Two readings of each file: `clean` scores the `clean_result` the file holds (what main_table.py read) and
`original` re-reads `original_result` with our parser (upstream's `clean` step, keyed on the file name).
"""

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from empathybench import formatting
from empathybench.data.fetch import fetch_pinned
from empathybench.errors import UserError
from empathybench.instruments.protocol import RescoreOutput
from empathybench.instruments.support import read_text_argument
from empathybench.instruments.tactfultom.data import legacy_key
from empathybench.instruments.tactfultom.freeform import (
    cosine_similarities,
    gold_is_closest,
    require_extra,
    upstream_answer,
)
from empathybench.instruments.tactfultom.parse import (
    FORMATS,
    apply_prestep,
    clean_reply,
    list_matches_leniently,
    prestep_for,
    read_list_lenient,
)
from empathybench.instruments.tactfultom.prompts import options_of
from empathybench.instruments.tactfultom.score import (
    CATEGORIES,
    Verdict,
    category_counts,
    is_correct,
    is_scored,
    pooled,
    rounded,
    table_row,
)

READINGS = ("clean", "original")
FREEFORM_NOTE = (
    "freeform_check (ours, --freeform): per category the percent of free-form answers whose most similar option "
    "(cosine, all-MiniLM-L6-v2, options from the legacy dataset) is the gold one; overall_micro / overall_macro over "
    "them; upstream stores the similarities only"
)
# main_table.py: name[:-2] is the model, the last digit the set
_SET_SUFFIX = re.compile(r"^(?P<model>.+)-(?P<set>\d)$")
MAX_FILES = 200
MAX_FILE_BYTES = 64 * 1024 * 1024  # the largest released file is a few MiB
_TEXT_OR_NONE = (str, type(None))


def model_and_set(path: Path) -> tuple[str, str]:
    """("gpt-4o-2024-08-06-cot", "3") from ".../gpt-4o-2024-08-06-cot-3.json"; another name is a UserError."""
    if not path.name.isprintable():
        raise UserError(f"{path.name!r}: a result file's name must be printable text")
    found = _SET_SUFFIX.match(path.name.removesuffix(".json"))
    if not path.name.endswith(".json") or found is None:
        raise UserError(f"{path}: not a TactfulToM result file name (<model>[-cot]-<set>.json, as upstream wrote it)")
    return found["model"], found["set"]


def read_results(path: Path) -> Any:
    """A result file's JSON, bounded in size and depth; anything else is a one-line UserError."""
    text = read_text_argument(path, limit=MAX_FILE_BYTES, what="a TactfulToM result file")
    try:
        return json.loads(text)
    except RecursionError:
        raise UserError(f"{path}: nested too deeply for a TactfulToM result file") from None
    except ValueError as exc:
        raise UserError(f"{path} is not a JSON file: {str(exc)[:200]}") from None


def _well_formed(entry: Mapping[str, Any]) -> bool:
    """The fields scoring reads have the types upstream wrote (strings; a list's names; the mapping's indices)."""
    question_format = entry.get("question_type")
    gold, clean, mapping = entry.get("correct_answer"), entry.get("clean_result"), entry.get("mcq_mapping", [])
    names_or_text = (str, list) if question_format == "list" else (str,)
    return (
        isinstance(entry.get("original_result"), _TEXT_OR_NONE)
        and isinstance(gold, names_or_text)
        and (not isinstance(gold, list) or all(isinstance(name, str) for name in gold))
        and (clean is None or (isinstance(clean, str | int | list) and not isinstance(clean, bool)))
        and (not isinstance(clean, list) or all(isinstance(name, str) for name in clean))
        and isinstance(mapping, list)
        and all(isinstance(index, int) and not isinstance(index, bool) for index in mapping)
    )


def _entries(results: Any, where: Path) -> Iterable[tuple[str, Mapping[str, Any]]]:
    if not isinstance(results, list):
        raise UserError(f"{where}: not a TactfulToM result file (a list of conversations)")
    for number, conversation in enumerate(results):
        if not isinstance(conversation, dict):
            raise UserError(f"{where}: conversation {number} is not an object")
        for category in CATEGORIES:
            questions = conversation.get(category) or []
            if not isinstance(questions, list):
                raise UserError(f"{where}: conversation {number} {category} is not a list of questions")
            for question in questions:
                for entry in question if isinstance(question, list) else []:
                    if not isinstance(entry, dict) or entry.get("question_type") not in FORMATS:
                        raise UserError(f"{where}: conversation {number} {category} holds an entry of no known format")
                    if not _well_formed(entry):
                        raise UserError(f"{where}: conversation {number} {category} holds an entry of wrong types")
                    yield category, entry


def file_verdicts(results: Any, where: Path, reading: str) -> list[Verdict]:
    """Every scored entry's verdict in one result file, reading `clean_result` (clean) or `original_result`."""
    return [verdict for _, verdict in file_scored_entries(results, where, reading)]


def file_scored_entries(results: Any, where: Path, reading: str) -> list[tuple[Mapping[str, Any], Verdict]]:
    """Every scored entry of one result file with its verdict (the entry holds its `question_id`, the dataset's
    q_id), reading `clean_result` (clean) or `original_result` (upstream's pre-step chosen by the file's name)."""
    step = prestep_for(where.name.removesuffix(".json"))
    scored = []
    for category, entry in _entries(results, where):
        question_format = entry["question_type"]
        if reading == "clean":
            cleaned = entry.get("clean_result")
        else:
            reply = entry.get("original_result")
            mapping = entry.get("mcq_mapping") or []
            cleaned = clean_reply(reply, question_format, mapping, step) if isinstance(reply, str) else None
        if is_scored(question_format, cleaned, str(entry.get("context_type", "full_context"))):
            verdict = Verdict(category, is_correct(question_format, cleaned, entry.get("correct_answer")))
            scored.append((entry, verdict))
    return scored


def file_lenient_lists(results: Any, where: Path) -> list[Verdict]:
    """Ours, beside upstream's: each list answer of a file (original_result, upstream's pre-step for its name) read
    leniently, its verdict against the gold names."""
    step = prestep_for(where.name.removesuffix(".json"))
    verdicts = []
    for category, entry in _entries(results, where):
        reply = entry.get("original_result")
        if entry["question_type"] == "list" and isinstance(reply, str) and reply != "ERROR":
            names = read_list_lenient(apply_prestep(reply, step))
            verdicts.append(Verdict(category, list_matches_leniently(names, entry.get("correct_answer") or [])))
    return verdicts


def file_freeform_checks(results: Any, where: Path, set_id: str) -> tuple[list[Verdict], int]:
    """Ours, per free-form entry of a released file: whether its most similar option is the gold one, the options
    taken from the legacy dataset's question at the same place (evaluate_freeform.py L77-91; the released outputs
    were made on it). API failures are left out; an entry whose gold answer is not its legacy question's is counted
    as misaligned (a file made on another dataset) and left out."""
    legacy = json.loads(fetch_pinned(__package__, legacy_key(set_id)).path.read_text("utf-8"))
    verdicts, misaligned = [], 0
    for _ in _entries(results, where):  # the file's shape checked as the readings check it, before it is walked
        pass
    for number, conversation in enumerate(results):
        for category in CATEGORIES:
            for index, question in enumerate(conversation.get(category) or []):
                for entry in question if isinstance(question, list) else []:
                    reply = entry.get("original_result")
                    if entry.get("question_type") != "freeform" or reply in (None, "ERROR"):
                        continue
                    try:
                        source = legacy[number][category][index]
                    except (IndexError, KeyError, TypeError):
                        source = None
                    if not isinstance(source, dict) or source.get("correct_answer") != entry.get("correct_answer"):
                        misaligned += 1
                        continue
                    similarity = cosine_similarities(upstream_answer(str(reply)), options_of(source))
                    verdicts.append(Verdict(category, gold_is_closest(similarity)))
    return verdicts, misaligned


def rescore_files(paths: Sequence[Path], *, freeform: bool = False) -> dict[str, Any]:
    """Per model (file name less `-<set>`): per reading, the pooled row and each set file's row; with `freeform`,
    ours: the share of free-form answers closest to the gold option, pooled."""
    if freeform:
        require_extra()
    if not paths:
        raise UserError("name at least one TactfulToM result file")
    if len(paths) > MAX_FILES:
        raise UserError(f"at most {MAX_FILES} files at once, not {len(paths)}")
    models: dict[str, dict[str, Any]] = {}
    for path in sorted(paths, key=lambda p: p.name):
        model, set_id = model_and_set(path)
        results = read_results(path)
        entry = models.setdefault(model, {"sets": [], "counts": {r: [] for r in READINGS}, "rows": {}})
        if set_id in entry["sets"]:
            raise UserError(f"{path}: set {set_id} of {model} is named twice")
        entry["sets"].append(set_id)
        for reading in READINGS:
            counts = category_counts(file_verdicts(results, path, reading))
            entry["counts"][reading].append(counts)
            entry["rows"].setdefault(reading, {})[set_id] = rounded(table_row(counts))
        entry.setdefault("lenient", []).append(category_counts(file_lenient_lists(results, path)))
        if freeform:
            checks, misaligned = file_freeform_checks(results, path, set_id)
            entry.setdefault("freeform", []).append(category_counts(checks))
            entry["misaligned"] = entry.get("misaligned", 0) + misaligned
    output: dict[str, Any] = {}
    for model, entry in models.items():
        if freeform:
            closest = pooled(entry["freeform"])
            output[model] = {"freeform_check": {**rounded(table_row(closest)), "n_misaligned": entry["misaligned"]}}
        lenient = pooled(entry["lenient"])
        output[model] = {
            **output.get(model, {}),
            "lenient_lists": {c: round(100 * right / n, 2) for c, (right, n) in lenient.items()},
            "sets": entry["sets"],
            **{
                reading: {
                    "pooled": rounded(table_row(pooled(entry["counts"][reading]))),
                    "per_set": entry["rows"][reading],
                }
                for reading in READINGS
            },
        }
    return {
        "columns": list(CATEGORIES),
        "ours": ["overall_micro", "overall_macro"],
        "note": "per category: upstream's accuracy (%), pooled per model over its set files as main_table.py; "
        "overall_micro (every scored entry) and overall_macro (mean of the categories) are ours, and so is "
        "lenient_lists: the list answers split at commas and 'and', periods and case ignored",
        "models": output,
        **({"freeform_note": FREEFORM_NOTE} if freeform else {}),
    }


def run_rescore(paths: Sequence[Path], freeform: bool = False) -> RescoreOutput:
    result = rescore_files(paths, freeform=freeform)
    notes = []
    for model, entry in result["models"].items():
        if (entry.get("freeform_check") or {}).get("n_misaligned"):
            count = entry["freeform_check"]["n_misaligned"]
            notes.append(f"{model}: {count} free-form answers do not match the legacy dataset's questions (left out)")
        if len(entry["sets"]) != 5:
            notes.append(f"{model}: {len(entry['sets'])} of upstream's 5 set files (sets {', '.join(entry['sets'])})")
        if entry["clean"]["pooled"] != entry["original"]["pooled"]:
            notes.append(f"{model}: the stored clean_result and our re-reading of original_result differ")
    return RescoreOutput(result, tuple(notes))


def render_rescore(result: Mapping[str, Any], console: Any) -> None:
    """One table per model: a row per figure (ours first, then upstream's columns), pooled over its set files, from
    the stored clean_result and from original_result read again (the per-set rows: --json)."""
    from rich.table import Table
    from rich.text import Text

    for model, entry in result["models"].items():
        sets = ", ".join(entry["sets"])
        table = Table(title=Text(f"TactfulToM, {model} (accuracy %, pooled over sets {sets})"))
        table.add_column("figure", no_wrap=True)
        for column in ("clean_result", "original_result", "scored"):
            table.add_column(column, justify="right", no_wrap=True)
        clean, original = entry["clean"]["pooled"], entry["original"]["pooled"]
        for name in (*result["ours"], *result["columns"]):
            scored = sum(clean["n"].values()) if name in result["ours"] else clean["n"][name]
            cells = [formatting.number(row[name], 2, missing="-") for row in (clean, original)]
            table.add_row(name, *cells, str(scored))
        for name, value in (entry.get("lenient_lists") or {}).items():
            table.add_row(f"{name}, lenient (ours)", "", formatting.number(value, 2), str(clean["n"][name]))
        console.print(table)
        checked = entry.get("freeform_check")
        if checked:
            closest = Table(title=Text(f"{model}: free-form answers closest to the gold option (%, ours)"))
            closest.add_column("figure", no_wrap=True)
            closest.add_column("closest", justify="right")
            closest.add_column("answers", justify="right")
            for name in (*result["ours"], *result["columns"]):
                scored = sum(checked["n"].values()) if name in result["ours"] else checked["n"][name]
                if scored:
                    closest.add_row(name, formatting.number(checked[name], 2), str(scored))
            console.print(closest)
    console.print(result["note"], markup=False, highlight=False)
    if "freeform_note" in result:
        console.print(result["freeform_note"], markup=False, highlight=False)
