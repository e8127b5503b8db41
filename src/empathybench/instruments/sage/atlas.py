"""SAGE in the atlas: the released conversations (SAGE/dataset/<simulator>_based_simulator/<model>_result.jsonl), each
file scored by `rescore_file`, the code of `empathybench rescore sage FILE`, beside the README's leaderboard.

The published leaderboard used DeepSeek-V3 (2024-12-27) as the simulated person; five models were also released with
GPT-4o as the person and one with Gemini-2.5-Flash (no thinking): the same model, another person. Those entries are
not primary (kept out of rankings) and measure what the simulator alone moves. The per-item values are each
person's final emotion (0-100), keyed as a run keys them (the person's line number in the pinned profile file), so a
run pairs with a released model person by person. The README also gives each model's Arena score, the general
capability figure the atlas sets beside the Sentient score.
"""

import re
from collections.abc import Mapping, Sequence
from html import unescape
from pathlib import Path

from empathybench.data.fetch import fetch_entry, fetch_pinned
from empathybench.data.registry import DataFile, load_pins
from empathybench.errors import DataError, UserError
from empathybench.instruments.protocol import (
    AtlasScore,
    AtlasSource,
    PublishedFigure,
    PublishedOnly,
    ReleasedRun,
    ReproductionMargin,
)
from empathybench.instruments.sage.data import PROFILES_KEY, parse_people
from empathybench.instruments.sage.score import PUBLISHED_LEADERBOARD
from empathybench.instruments.support import bounded_lines, jsonl_lines
from empathybench.stats.intervals import mean_interval

ATLAS_PINS = "atlas_pins.json"
README_KEY = "sage/atlas/README.md"
README_SOURCE = "Tencent/digitalhuman@6dcfa78b SAGE/README.md, Sentient leaderboard"
RESULT_SUFFIX = "_result.jsonl"
ROUNDING_TOLERANCE = 1e-9  # the README's figure and the mean rounded as the README rounds it: equal, or not
PUBLISHED_ROUNDS = 10  # SAGE/test_npc.py `if turns > 10: break`, as the paper preset (bench.PAPER_ROUNDS)
SIMULATOR_FOLDER_SUFFIX = "_based_simulator"
PUBLISHED_SIMULATOR_FOLDER = "deepseek-v3-2024-1227"
# The simulated person of each released folder, as a run names its --simulator (and the README its model).
SIMULATORS = {
    "deepseek-v3-2024-1227": "deepseek-v3-2024-12-26",
    "gpt-4o-2024-0806": "gpt-4o-2024-08-06",
    "gemini-2.5-flash-nothink": "gemini-2.5-flash (no thinking)",
}
# The README's name of each released file's model (file name -> leaderboard row).
README_NAMES = {
    "claude3.7-think": "Claude3.7-Think",
    "claude3.7": "Claude3.7",
    "deepseek-v3-0324": "DeepSeek-V3-0324",
    "deepseek-v3-1227": "DeepSeek-V3",
    "gemini2.0-flash": "Gemini2.0-Flash",
    "gpt-4.1": "GPT-4.1",
    "gpt-4.5": "GPT-4.5-Preview",
    "gpt-4o-0808": "GPT-4o",
    "llama3.3-70b": "Llama3.3-70B",
    "openai-o1": "o1",
    "openai-o4mini": "o4-mini",
    "qwen2.5-72b": "Qwen2.5-72B",
}


def pins() -> Mapping[str, DataFile]:
    return load_pins(__package__, ATLAS_PINS)


def _folder_and_model(entry: DataFile) -> tuple[str, str]:
    folder = entry.path.rsplit("/", 2)[-2].removesuffix(SIMULATOR_FOLDER_SUFFIX)
    return folder, entry.filename.removesuffix(RESULT_SUFFIX)


def _published(model: str) -> PublishedFigure | None:
    name = README_NAMES.get(model)
    for row_name, row_score, *_ in PUBLISHED_LEADERBOARD:
        if row_name == name:
            return PublishedFigure(row_score, README_SOURCE)
    return None


def runs() -> Sequence[ReleasedRun]:
    found = []
    for key, entry in sorted(pins().items()):
        if not entry.filename.endswith(RESULT_SUFFIX):
            continue
        folder, model = _folder_and_model(entry)
        primary = folder == PUBLISHED_SIMULATOR_FOLDER
        settings = {
            "simulator": SIMULATORS.get(folder, folder),
            "language": "zh",
            "rounds": PUBLISHED_ROUNDS,
        }
        found.append(ReleasedRun(model, (key,), settings, _published(model) if primary else None, primary=primary))
    return found


def published_only() -> Sequence[PublishedOnly]:
    released = set(README_NAMES.values())
    return [
        PublishedOnly(
            name,
            PublishedFigure(value, README_SOURCE),
            "conversations not released at the pinned commit",
            {"simulator": SIMULATORS[PUBLISHED_SIMULATOR_FOLDER], "language": "zh", "rounds": PUBLISHED_ROUNDS},
        )
        for name, value, *_ in PUBLISHED_LEADERBOARD
        if name not in released
    ]


def _person_numbers() -> dict[str, int]:
    """Upstream's person id -> the person's line number in the pinned profile file (a run's item id)."""
    text = fetch_pinned(__package__, PROFILES_KEY).path.read_text("utf-8")
    return {person.id: person.number for person in parse_people(text)}


def _final_emotions(path: Path, numbers: Mapping[str, int]) -> dict[str, float]:
    """Each person's final emotion, by the run's item id, read line by line (bounded as rescore bounds the file)."""
    from empathybench.instruments.sage.rescore import MAX_LINE_BYTES, MAX_RESULT_FILE_BYTES

    if path.stat().st_size > MAX_RESULT_FILE_BYTES:
        raise DataError(f"{path.name} is larger than a SAGE result file can be")
    finals: dict[str, float] = {}
    with path.open("rb") as stream:
        lines = bounded_lines(stream, source=path.name, max_line_bytes=MAX_LINE_BYTES)
        for number, record in jsonl_lines(lines, source=path.name, max_line_bytes=MAX_LINE_BYTES):
            person = numbers.get(str(record.get("id")))
            point = record.get("emo_point")
            if person is None or isinstance(point, bool) or not isinstance(point, int | float):
                raise DataError(f"{path.name}: line {number} is not a conversation of a pinned person")
            finals[str(person)] = float(point)
    return finals


def score(run: ReleasedRun, paths: Mapping[str, Path]) -> AtlasScore:
    """One released file: the README's figures by `rescore_file`, each person's final emotion beside them."""
    from empathybench.instruments.sage.rescore import rescore_file  # a build's, not a run's, import

    (key,) = run.files
    path = paths[key]
    try:
        result = rescore_file(path)
        items = _final_emotions(path, _person_numbers())
    except UserError as exc:
        raise DataError(str(exc)) from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise DataError(f"{path.name} is not a SAGE result file: {str(exc)[:200]}") from None
    if len(items) != result["n_people"]:
        raise DataError(f"{path.name}: {len(items)} people read, rescore counted {result['n_people']}")
    notes = []
    if run.published is not None and abs(result["score"] - run.published.value) > ROUNDING_TOLERANCE:
        notes.append("the README's figure is not this file's mean final emotion (upstream gives no reason)")
    elif run.published is not None and result["score"] != result["score_exact"]:
        notes.append(f"the README's figure is this mean rounded half up to one decimal ({result['score']})")
    # the value is the mean itself (value = mean(items), as a run's sentient_score); the README's rounding is the
    # published figure beside it
    return AtlasScore(
        value=float(result["score_exact"]),
        ci95=mean_interval(list(items.values())),
        n=len(items),
        items=items,
        figures={"success": result["success"], "failure": result["failure"]},
        notes=tuple(notes),
    )


_ROW = re.compile(r"<tr>(.*?)</tr>", re.S)
_CELL = re.compile(r"<td[^>]*>(.*?)</t[dh]>", re.S)


def capability() -> Sequence[tuple[str, PublishedFigure]]:
    """The README's Arena score per leaderboard model (the general-capability figure it sets beside its own)."""
    text = fetch_entry(pins()[README_KEY]).path.read_text("utf-8")
    found = []
    for row in _ROW.findall(text):
        cells = [unescape(cell).strip() for cell in _CELL.findall(row)]
        if len(cells) == 8 and cells[7].isdigit():
            found.append((cells[0], PublishedFigure(float(cells[7]), f"{README_SOURCE}, Arena score")))
    return found


ATLAS = AtlasSource(
    metric="Sentient score (mean final emotion, 0-100)",
    pins=pins,
    runs=runs,
    score=score,
    published_only=published_only,
    summary_metric="sentient_score",
    capability=capability,
    capability_label="Arena score (SAGE README)",
    reproduction_margin=ReproductionMargin(
        3.0,
        "3 points of the 0-100 Sentient score, a documented default: upstream publishes no run-to-run figure; a "
        "quarter of the smallest simulated-person effect the atlas measures with an interval above 0 (claude3.7-think "
        "+11.7), so a rerun under another simulated person can come out differs, while the sampled person's own "
        "variation over 100 conversations is allowed",
    ),
)
