"""What the built-in sources of judge evidence (MentalAlign-70k; the atlas's boards that changed their judge) know, per
judge model, for whoever shows it: a run's report (per instrument of the run that called a judge, its records holding
calls of the role `judge`: the rows for that judge's model matched through the identity table, `openai/gpt-4o` being
MentalAlign's `gpt-4o`, or none, with the commands that would produce some) and the atlas site's judges page (every
judge's rows). A user's own files (validation reports, judge comparisons) appear only in `empathybench judges`.

The callers (run/ and the CLI) compute this and hand it to report/ or atlas/site.py as plain records; report/ imports
neither judges/ nor atlas/. Reading the evidence never stops a report: data that cannot be fetched or read is one line
in its place. One judge's rows are computed alone (0.37 s of CPU for MentalAlign's, the same figures as the whole
table's) and kept in the cache by the data's SHA-256s, the resamples and the package's version.
"""

import hashlib
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from empathybench.errors import UserError
from empathybench.formatting import printable
from empathybench.judges.evidence import Evidence, from_record, is_records
from empathybench.models.identity import BACKEND_PREFIXES, identity_table
from empathybench.version import __version__

# The name under which one judge's rows are kept in the cache: raise it whenever the figures computed change.
KEPT_ROWS = "judge-evidence-1"

MAX_JUDGE_CHARS = 200  # a judge's spec as the run recorded it, in a line or a command


def same_model(first: str, second: str) -> bool:
    """Two names of one checkpoint: the same text (a backend prefix aside: `openai/gpt-4o` is the name `gpt-4o` called
    through OpenAI's API), or the identity table's same checkpoint id (a family alone is not enough: another
    checkpoint of a family is another judge)."""
    if _called_name(first) == _called_name(second):
        return True
    table = identity_table()
    a, b = table.match(first), table.match(second)
    return a is not None and b is not None and a.id is not None and a.id == b.id


def _called_name(spec: str) -> str:
    name = spec.strip().lower()
    prefix = next((p for p in BACKEND_PREFIXES if name.startswith(p)), "")
    return name[len(prefix) :]


def _mentalalign_judges() -> dict[str, str]:
    """MentalAlign's judges, model id as the source names it -> its key; known without reading any data."""
    from empathybench.judges.ratings import JUDGES

    return {judge.model_id: key for key, judge in JUDGES.items()}


def _mentalalign_rows(key: str, resamples: int) -> list[Evidence]:
    """One MentalAlign judge's rows, kept in the cache (by every workbook's SHA-256, the resamples and the package's
    version) for the next report."""
    from empathybench.data.fetch import fetch_pinned
    from empathybench.data.parsed import parsed_document
    from empathybench.judges.ratings import HUMAN_KEY, JUDGES, PINS

    files = [fetch_pinned(PINS, pin) for pin in (HUMAN_KEY, *(judge.key for judge in JUDGES.values()))]
    digest = hashlib.sha256("".join(f.sha256 for f in files).encode()).hexdigest()[:16]
    name = f"{KEPT_ROWS}-{__version__}-{digest}-{key}-{resamples}"
    records = parsed_document(files[0], name, lambda _: _computed_rows(key, resamples), is_records)
    return [from_record(record) for record in records]


def _computed_rows(key: str, resamples: int) -> list[dict[str, Any]]:
    from empathybench.judges.mentalalign import one_judge_rows
    from empathybench.judges.ratings import load_mentalalign

    return [row.as_record() for row in one_judge_rows(load_mentalalign(), key, resamples)]


def _titles() -> dict[str, str]:
    from empathybench.judges.boards import BoardJudgeChangeSource
    from empathybench.judges.mentalalign import MentalAlignSource

    return {source.name: source.title for source in (MentalAlignSource, BoardJudgeChangeSource)}


def evidence_for(judge: str, resamples: int = 2000) -> list[Evidence]:
    """Every built-in source's evidence rows for the judge model `judge` (as a run names it): MentalAlign-70k's
    figures when it is one of its four judges (its data is read only then), and the rows of the atlas's boards that
    changed their judge where it is one of their judges (kept in the cache by the atlas's SHA-256)."""
    from empathybench.judges.boards import board_judges, shipped_rows

    rows: list[Evidence] = []
    for model_id, key in _mentalalign_judges().items():
        if same_model(judge, model_id):
            rows += _mentalalign_rows(key, resamples)
    if not any(same_model(judge, board_judge) for board_judge in board_judges()):
        return rows  # the boards' rows are computed (~1 s the first time) only for a judge they name
    return rows + [row for row in shipped_rows() if same_model(judge, row.judge)]


def builtin_evidence(resamples: int = 2000) -> list[dict[str, Any]]:
    """Every judge's rows of the built-in sources (each with its source's title): the atlas site's judges page."""
    from empathybench.judges.boards import shipped_rows

    titles = _titles()
    rows = [row for key in _mentalalign_judges().values() for row in _mentalalign_rows(key, resamples)]
    rows += shipped_rows()
    return [row.as_record() | {"source_title": titles.get(row.source, row.source)} for row in rows]


def judged_instruments(summary: Mapping[str, Any], samples: Iterable[Mapping[str, Any]]) -> list[str]:
    """The run's instruments whose records hold a call of the role `judge` (its own judge or the model judging
    itself), in the summary's order."""
    judged: set[str] = set()
    for record in samples:
        name = record.get("benchmark")
        if name in judged or not isinstance(name, str):
            continue
        calls = record.get("calls")
        if isinstance(calls, list) and any(isinstance(c, Mapping) and c.get("role") == "judge" for c in calls):
            judged.add(name)
    return [name for name in summary.get("benchmarks") or {} if name in judged]


VALIDATION_DIR = "judge-validation"  # where the suggested `judge validate --out` files go: `judges DIR` reads them all
COMPARISON_DIR = "judge-compare"  # `judge compare`'s own default parent directory


def _slug(judge: str) -> str:
    """The judge's spec as a safe file name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", judge[:MAX_JUDGE_CHARS]).strip("-.")[:100] or "judge"


def _evidence_steps(instrument: str, judge: str) -> list[tuple[str, str]]:
    """(command, what it writes) for each command that would add evidence about `judge` (`evidence_commands`)."""
    from empathybench.instruments.registry import all_benchmarks, installed

    quoted = shlex.quote(judge[:MAX_JUDGE_CHARS])
    own = installed(instrument)
    if own is not None and own.judge_validation is not None:
        validating = [instrument]
    else:
        validating = [name for name, bench in all_benchmarks().items() if bench.judge_validation is not None]
    steps = []
    for name in validating:
        out = f"{VALIDATION_DIR}/{name}-{_slug(judge)}.json"
        steps.append((f"empathybench judge validate --bench {name} --judge {quoted} --out {shlex.quote(out)}", out))
    if own is not None and own.judge_comparison is not None:
        out = f"{COMPARISON_DIR}/{instrument}-{_slug(judge)}"
        steps.append(
            (f"empathybench judge compare --bench {instrument} --judge {quoted} --out {shlex.quote(out)}", out)
        )
    return steps


def evidence_commands(instrument: str, judge: str) -> list[str]:
    """The commands that would add evidence about `judge` (instruments/protocol.py's declared parts): the
    instrument's own `judge validate` where it declares a judge validation, else that of every instrument that does;
    and its `judge compare` where it declares a judge comparison (its published judge's verdicts re-judged). Each
    writes its figures (`--out`): a validation report into VALIDATION_DIR, a comparison into its own directory."""
    return [command for command, _ in _evidence_steps(instrument, judge)]


def judges_command(instrument: str, judge: str) -> str:
    """The `empathybench judges` command that reads what `evidence_commands` write: the validation reports'
    directory (every report in it) and each comparison's directory."""
    targets: list[str] = []
    for _, out in _evidence_steps(instrument, judge):
        target = VALIDATION_DIR if out.startswith(VALIDATION_DIR + "/") else out
        if target not in targets:
            targets.append(target)
    return " ".join(["empathybench judges", *(shlex.quote(target) for target in targets)])


def _run_judge(summary: Mapping[str, Any], run_info: Mapping[str, Any]) -> tuple[str, bool]:
    """The judge's spec as the run recorded it, and whether it was the model under test judging itself."""
    entry = run_info.get("judge")
    spec = entry.get("spec") if isinstance(entry, Mapping) else None
    if not spec or spec == "self":
        return str(summary.get("model") or "")[:MAX_JUDGE_CHARS], True
    return str(spec)[:MAX_JUDGE_CHARS], False


def report_judges(
    summary: Mapping[str, Any],
    run_info: Mapping[str, Any],
    samples: Sequence[Mapping[str, Any]],
    resamples: int = 2000,
) -> list[dict[str, Any]]:
    """Per judged instrument of the run (`judged_instruments`): its judge (`self_judged`: the model under test), the
    evidence rows for it (each with its source's title), the commands that would add some, and `error` when the
    evidence could not be read (the report goes on). JSON-able; report/ draws it."""
    names = judged_instruments(summary, samples)
    if not names:
        return []
    judge, self_judged = _run_judge(summary, run_info)
    error = None
    try:
        rows = evidence_for(judge, resamples)
    except UserError as exc:  # the evidence's data cannot be fetched or read (offline, damaged): said, not fatal
        rows, error = [], printable(f"the judge evidence could not be read: {exc}", 300)
    titles = _titles()
    records = [row.as_record() | {"source_title": titles.get(row.source, row.source)} for row in rows]
    return [
        {
            "instrument": name,
            "judge": judge,
            "self_judged": self_judged,
            "rows": records,
            "commands": evidence_commands(name, judge),
            "then": judges_command(name, judge),
            "error": error,
        }
        for name in names
    ]
