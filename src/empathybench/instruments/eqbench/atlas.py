"""EQ-Bench v2 in the atlas: the 86 released result files of the official leaderboard runs (Jan-Feb 2024), each
scored by `rescore_upstream_results`, the code of `empathybench rescore eqbench` (specs/eqbench.md §5.1).

The headline is the pipeline score with the "lt5" sigmoid rule (the rule that reproduces the published numbers);
its items are each parsed question's score (0-10) in the selected pass, so headline = 10 x their mean, as in a run's
`score` metric. The published figure is the `benchmark_score` each file stores.
"""

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from empathybench.data.fetch import fetch_pinned
from empathybench.data.registry import DataFile, load_pins
from empathybench.errors import DataError
from empathybench.instruments.protocol import AtlasScore, AtlasSource, PublishedFigure, ReleasedRun, ReproductionMargin
from empathybench.stats.intervals import mean_interval

ATLAS_PINS = "atlas_pins.json"
QUESTIONS_KEY = "eqbench/v2/eq_bench_v2_questions_171.json"  # the v2 English set the official runs used
RESULT_SUFFIX = "_eqbench_v2_results.json"
MAX_RESULT_BYTES = 32 * 1024 * 1024  # the released files are 40-250 kB
ITEM_SCALE = 10.0  # headline = 10 x mean of the 0-10 item scores (score.aggregate_pass)

# Where the eqbench.com table (EQ-bench/EQ-bench-site@c5327daa eqbench-v2.js) shows another figure than the file's
# own `benchmark_score` (specs/atlas.md, "Per instrument"): the site's figure, for the entry's notes.
SITE_FIGURES = {
    "phixtral-2x2_8": 54.58,
    "phi-2-psy": 56.44,
    "stablelm-2-zephyr-1_6b": 15.04,
    "SOLAR-10.7b-Instruct-dpo": 73.21,
}
SITE_SOURCE = "EQ-bench/EQ-bench-site@c5327daa eqbench-v2.js"


def pins() -> Mapping[str, DataFile]:
    return load_pins(__package__, ATLAS_PINS)


def _model_of(entry: DataFile) -> str:
    """The model as the leaderboard names it: the file name's `org__name` (the file's `model_path`, checked)."""
    return entry.filename.removesuffix(RESULT_SUFFIX).replace("__", "/")


def runs() -> Sequence[ReleasedRun]:
    return [
        ReleasedRun(model=_model_of(entry), files=(key,), settings={"version": "v2", "language": "en"})
        for key, entry in sorted(pins().items())
        if entry.filename.endswith(RESULT_SUFFIX)
    ]


def _read_result(path: Path) -> Mapping[str, Any]:
    if path.stat().st_size > MAX_RESULT_BYTES:
        raise DataError(f"{path.name} is larger than {MAX_RESULT_BYTES // 2**20} MB: not an EQ-Bench v2 result file")
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise DataError(f"{path.name} is not a JSON file: {str(exc)[:200]}") from None
    if not isinstance(data, dict):
        raise DataError(f"{path.name} is not an EQ-Bench v2 result file: it holds a JSON {type(data).__name__}")
    return data


def _text_setting(value: Any) -> str | None:
    return value[:200] if isinstance(value, str) and value else None


def quantisation(data: Mapping[str, Any]) -> str | None:
    """The weights' quantisation as the released file records it: the GGUF file its download pattern names in
    `index_string` (`--include ["*Q4_K_M.gguf", "*.json"]`), a GGUF repository with no pattern, AWQ or GPTQ in the
    model path, else `bitsandbytes_quant` ("4bit", "8bit", "none"); None for a provider's API (not recorded)."""
    from empathybench.models.llamacpp_backend import gguf_quant_tag

    index = _text_setting(data.get("index_string")) or ""
    model_path = _text_setting(data.get("model_path")) or ""
    tag = gguf_quant_tag(index)
    if tag:
        return f"GGUF {tag}"
    if "gguf" in model_path.lower() or ".gguf" in index.lower():
        return "GGUF (quantisation not recorded)"
    for method in ("AWQ", "GPTQ"):
        if method in model_path.upper():
            return method
    bits = _text_setting(data.get("bitsandbytes_quant"))
    return None if bits is None else bits if bits == "none" else f"bitsandbytes {bits}"


def score(run: ReleasedRun, paths: Mapping[str, Path]) -> AtlasScore:
    """One released result file, scored as `empathybench rescore eqbench FILE` scores it."""
    from empathybench.instruments.eqbench.rescore import rescore_upstream_results  # a build's, not a run's, import

    (key,) = run.files
    data = _read_result(paths[key])
    questions = json.loads(fetch_pinned(__package__, QUESTIONS_KEY).path.read_text("utf-8"))
    try:
        result = rescore_upstream_results(data, questions)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise DataError(f"{paths[key].name} is not an EQ-Bench v2 result file: {str(exc)[:200]}") from None
    items: dict[str, float] = result["item_scores"]
    model_path = result.get("model_path")
    if model_path != run.model:
        raise DataError(f"{paths[key].name} holds model {str(model_path)[:100]!r}, not {run.model!r}")
    settings = {
        **run.settings,
        "revise": bool(result["revise_prompt_used"]),
        "protocol": "pipeline",
        "sigmoid_rule": "lt5",
        "temperature": 0.01,  # the pipeline's first attempt (+0.15 per re-ask; specs/eqbench.md §3)
        "inference_engine": _text_setting(data.get("inference_engine")),
        "instruction_template": _text_setting(data.get("instruction_template")),
        "quantisation": quantisation(data),
        # the text-generation-webui launch arguments (the llama.cpp loader, its context size), as recorded
        "ooba_params": _text_setting((data.get("ooba_params") or "").strip()),
    }
    published = None
    if result["published_score"] is not None:
        published = PublishedFigure(float(result["published_score"]), f"benchmark_score in {paths[key].name}")
    notes: list[str] = []
    if not result["valid"]:
        notes.append(f"below the upstream parse-rate gate: {result['n_parseable']} of 171 questions parsed")
    short_name = run.model.rsplit("/", 1)[-1]
    if short_name in SITE_FIGURES:
        notes.append(
            f"the eqbench.com table shows {SITE_FIGURES[short_name]} ({SITE_SOURCE}), not the released file's figure; "
            "the released run is the one scored here (upstream does not say which run the table shows)"
        )
    return AtlasScore(
        value=float(result["score"]),
        ci95=mean_interval(list(items.values()), scale=ITEM_SCALE),
        n=len(items),
        items=items,
        scale=ITEM_SCALE,
        published=published,
        settings=settings,
        notes=tuple(notes),
    )


ATLAS = AtlasSource(
    metric="EQ-Bench v2 score (0-100, pipeline, lt5 rule as published)",
    pins=pins,
    runs=runs,
    score=score,
    summary_metric="score",
    reproduction_margin=ReproductionMargin(
        1.0,
        "1 point of the 0-100 score, a documented default: upstream publishes no run-to-run figure for v2 (the paper "
        "calls its results highly repeatable without a number, arXiv:2312.06281v2); 1 point is of the order of the "
        "run-to-run sd its author measured for EQ-Bench 3's 0-100 rubric (0.75 over 10 iterations, eqbench.com "
        "about.html), above the published figures' rounding (0.01) and far above what a scoring rule alone moves "
        "(le5 against lt5: gpt-4-0613 +0.0016)",
    ),
)
