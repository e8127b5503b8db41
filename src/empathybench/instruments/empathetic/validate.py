"""`empathybench judge validate`: how well a judge reproduces the released human ratings (spec §6.1 step 5)."""

import math
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING, Any

from empathybench.engine.engine import CallFailedError, Generation, ItemContext
from empathybench.formatting import number
from empathybench.instruments.empathetic.canned import plausible_answer
from empathybench.instruments.empathetic.data import (
    BAD,
    GOOD,
    HUMAN,
    OKAY,
    RATING_LABELS,
    SOURCE_FAMILIES,
    Prompt,
    load_released,
)
from empathybench.instruments.empathetic.judge import JUDGE_ATTEMPTS, judge_reply
from empathybench.instruments.empathetic.stats import RatedRow, analyse
from empathybench.instruments.protocol import BenchItem, JudgeValidation, PreparedBenchmark
from empathybench.models.base import Message, Sampling
from empathybench.stats.agreement import accuracy, confusion_matrix, kendall_tau, spearman, weighted_kappa

if TYPE_CHECKING:
    from rich.console import Console

# The pilot's weighted kappa between two human raters on the 3-point scale (spec §3.4, from summaries of the
# paper; the weighting is not stated). Item-level judge-human kappa is read against it, not against 1.0.
HUMAN_HUMAN_KAPPA = 0.2817
HUMAN_HUMAN_KAPPA_NOTE = (
    "weighted kappa between two human raters in the authors' 3-point pilot (weighting not stated): "
    "the ceiling for item-level agreement on this task, so compare the judge's kappa with it, not with 1.0"
)
CATEGORIES = (BAD, OKAY, GOOD)
INSTRUMENT_NAME = "empathetic"  # the instrument whose judge this validates (its canned answers, its request tag)


@dataclass(frozen=True)
class ValidationCase:
    """One released reply, its single human rating, and the judge's rating (None: unparseable or failed)."""

    source: str
    emotion: str
    valence: str
    reply_words: int
    human_rating: int
    judge_rating: int | None
    attempts: int = 1  # judge asks made for this reply (1: the first answer was read)
    error: str | None = None  # the judge call failed (rejected, or retries exhausted): not a parse failure


def _interleaved(sources: Sequence[str], emotions: Sequence[str]) -> list[tuple[str, str]]:
    """Every (source, emotion) once, ordered so that any prefix spreads evenly over sources and emotions.

    Position p takes source p mod S and emotion (p + p // lcm(S, E)) mod E: within each block of lcm(S, E)
    positions the pairs are distinct (Chinese remainder theorem), and the shift per block reaches the pairs
    the first block could not, so the S x E positions cover every pair exactly once.
    """
    n_sources, n_emotions = len(sources), len(emotions)
    if not n_sources or not n_emotions:
        return []
    period = math.lcm(n_sources, n_emotions)
    return [(sources[p % n_sources], emotions[(p + p // period) % n_emotions]) for p in range(n_sources * n_emotions)]


def stratified_cases(prompts: Sequence[Prompt], limit: int | None) -> list[tuple[Prompt, str]]:
    """(prompt, source) pairs; with a limit, round-robin over source x emotion so every stratum is represented.

    Strata are visited in an interleaved order (sources in file order, human first; emotions alphabetically),
    so even a small limit covers every source equally and as many emotions as it can.
    """
    strata: dict[tuple[str, str], list[tuple[Prompt, str]]] = defaultdict(list)
    sources: list[str] = []
    for prompt in prompts:
        for source in prompt.ratings:
            strata[(source, prompt.emotion)].append((prompt, source))
            if source not in sources:
                sources.append(source)
    keys = [key for key in _interleaved(sources, sorted({e for _, e in strata})) if key in strata]
    if limit is None:
        return [pair for key in keys for pair in strata[key]]
    chosen: list[tuple[Prompt, str]] = []
    depth = 0
    while len(chosen) < limit and any(depth < len(strata[k]) for k in keys):
        for key in keys:
            if depth < len(strata[key]) and len(chosen) < limit:
                chosen.append(strata[key][depth])
        depth += 1
    return chosen


# Released-source families recognised in a judge's model name (the provider says nothing: `openai/` is any
# OpenAI-compatible server, `local` and `llamacpp/` are llama.cpp running any model).
_FAMILY_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("llama", re.compile(r"llama")),
    ("gemini", re.compile(r"gemini|gemma")),
    ("mistral", re.compile(r"mistral|mixtral")),
    ("openai", re.compile(r"gpt|chatgpt|(?<![a-z0-9])o[134](?![a-z0-9])")),
)


def _family_of(judge_identity: dict[str, Any]) -> str | None:
    """The released-source family the judge belongs to, guessed from its model name (None: none of them)."""
    name = str(judge_identity.get("model", "")).lower()
    for family, pattern in _FAMILY_PATTERNS:
        if pattern.search(name):
            return family
    return None


def _ranking(by_source: dict[str, Any], ranked: list[str]) -> dict[str, Any]:
    """Sources by Good% for the human raters and for the judge; reproduced only if every pair is ordered alike."""
    human = {s: by_source[s]["good_pct_human"] for s in ranked}
    judge = {s: by_source[s]["good_pct_judge"] for s in ranked}

    def sign(value: float) -> int:
        return (value > 0) - (value < 0)

    pairs = list(combinations(ranked, 2))
    alike = [sign(human[a] - human[b]) == sign(judge[a] - judge[b]) for a, b in pairs]
    return {
        "human": sorted(ranked, key=lambda s: -human[s]),
        "judge": sorted(ranked, key=lambda s: -judge[s]),
        "kendall_tau": kendall_tau([human[s] for s in ranked], [judge[s] for s in ranked]),
        # A tie on one side and an order on the other is not a reproduction (a judge saying Good to everything
        # ties every source).
        "reproduced": all(alike) if pairs else None,
        "pairs_ordered_alike": sum(alike),
        "pairs": len(pairs),
    }


def validation_report(cases: Sequence[ValidationCase], judge_identity: dict[str, Any] | None = None) -> dict[str, Any]:
    """Item-level agreement, source-level reproduction, valence pattern, length bias and self-preference."""
    rated = [c for c in cases if c.judge_rating is not None]
    human = [c.human_rating for c in rated]
    judge = [c.judge_rating for c in rated if c.judge_rating is not None]
    sources = list(dict.fromkeys(c.source for c in cases))
    sources.sort(key=lambda s: s != HUMAN)

    by_source: dict[str, Any] = {}
    for source in sources:
        subset = [c for c in rated if c.source == source]
        n = len(subset)
        by_source[source] = {
            "n": n,
            "good_pct_judge": round(100.0 * sum(c.judge_rating == GOOD for c in subset) / n, 2) if n else None,
            "good_pct_human": round(100.0 * sum(c.human_rating == GOOD for c in subset) / n, 2) if n else None,
            "accuracy": accuracy([c.human_rating for c in subset], [c.judge_rating or 0 for c in subset]),
        }
    ranked = [s for s in sources if by_source[s]["n"]]

    rho, rho_p = spearman([c.reply_words for c in rated], judge)
    rho_human, rho_human_p = spearman([c.reply_words for c in rated], human)

    # Valence pattern: the paper's statistics on the judge's ratings and on the human ratings of the same replies.
    def rows(rating_of: str) -> list[RatedRow]:
        # One row per case; analyse() counts each source over the rows that carry it.
        return [
            RatedRow(c.emotion, c.valence, {c.source: (c.judge_rating if rating_of == "judge" else c.human_rating)})
            for c in rated
            if c.judge_rating is not None
        ]

    def valence_entry(entry: dict[str, Any]) -> dict[str, Any]:
        # The increase is on Good shares (stats.compare), so sources with different n on a subset compare fairly.
        return {
            "n": entry["n"],
            "pct_good": entry["pct_good"],
            "good_increase_pct": entry.get("good_increase_pct"),
            "p": entry.get("p"),
        }

    valence: dict[str, Any] = {}
    if HUMAN in ranked and len(ranked) > 1:
        for who in ("judge", "human"):
            table = analyse(rows(who), ranked, bootstrap=False)
            valence[who] = {v: {s: valence_entry(e) for s, e in t.items()} for v, t in table["valence"].items()}

    family = _family_of(judge_identity or {})
    own = [s for s in ranked if SOURCE_FAMILIES.get(s) == family] if family else []
    self_preference: dict[str, Any] = {"judge_family": family, "own_sources": own}
    if own:
        # Judge minus human Good% on its own family's replies, against the same gap on the other sources.
        def gap(names: list[str]) -> float | None:
            subset = [c for c in rated if c.source in names]
            if not subset:
                return None
            return round(
                100.0 * sum((c.judge_rating == GOOD) - (c.human_rating == GOOD) for c in subset) / len(subset), 2
            )

        self_preference["good_gap_pp_own"] = gap(own)
        self_preference["good_gap_pp_others"] = gap([s for s in ranked if s not in own])

    failed = [c for c in cases if c.error is not None]
    return {
        "n_cases": len(cases),
        "n_rated": len(rated),
        "n_unparseable": len(cases) - len(rated) - len(failed),
        "n_failed_calls": len(failed),
        "n_reasked": sum(1 for c in rated if c.attempts > 1),  # read only after a re-ask
        "judge_label_counts": {RATING_LABELS[r]: judge.count(r) for r in CATEGORIES},
        "accuracy": accuracy(human, judge),
        "weighted_kappa_linear": weighted_kappa(human, judge, CATEGORIES, "linear"),
        "weighted_kappa_quadratic": weighted_kappa(human, judge, CATEGORIES, "quadratic"),
        "human_human_kappa_reference": HUMAN_HUMAN_KAPPA,
        "human_human_kappa_note": HUMAN_HUMAN_KAPPA_NOTE,
        "confusion_matrix": {
            "order": [RATING_LABELS[r] for r in CATEGORIES],
            "rows": "human rating",
            "columns": "judge rating",
            "counts": confusion_matrix(human, judge, CATEGORIES),
        },
        "by_source": by_source,
        "ranking": _ranking(by_source, ranked),
        "valence": valence,
        "length_bias": {
            "spearman_words_vs_judge": rho,
            "p": rho_p,
            "spearman_words_vs_human": rho_human,
            "p_human": rho_human_p,
        },
        "self_preference": self_preference,
    }


VALIDATION_NAME = "empathetic-validate"  # its items' seeds: item_seed(seed, VALIDATION_NAME, "<dialog id>:<source>")


def prepare_validation(
    *,
    limit: int | None = None,
    seed: int = 0,
    attempts: int = JUDGE_ATTEMPTS,
    allow_unverified: bool = False,
    judge_identity: Mapping[str, Any] | None = None,
) -> PreparedBenchmark[tuple[Prompt, str]]:
    """The released replies to rate (stratified by source and emotion under a limit), how to rate one, and the
    report of all of them; run/judge.py runs them through the engine like any run's items."""
    prompts, fetched = load_released(allow_unverified=allow_unverified)
    pairs = stratified_cases(prompts, limit)
    items = [BenchItem(f"{prompt.dialog_id}:{source}", (prompt, source)) for prompt, source in pairs]

    async def run_item(item: BenchItem[tuple[Prompt, str]], ctx: ItemContext) -> dict[str, Any]:
        prompt, source = item.payload
        reply = prompt.replies[source]
        asked = 0

        async def call(messages: Sequence[Message], sampling: Sampling, attempt: int) -> Generation:
            nonlocal asked
            asked += 1
            # Tagged "<instrument>:judge", so a scripted judge gives the same canned labels as in a run.
            return await ctx.judge_generate(messages, sampling, attempt=attempt)

        rating: int | None = None
        raw: list[str] = []
        error: str | None = None
        try:
            verdict = await judge_reply(
                call,
                emotion=prompt.emotion,
                situation=prompt.situation,
                speaker_utterance=prompt.speaker_utterance,
                reply=reply,
                seed=ctx.seed,
                attempts=attempts,
            )
            rating, raw = verdict.rating, verdict.raw
        except CallFailedError as exc:  # one reply the judge could not be asked about; the others go on
            error = str(exc)
        case = ValidationCase(
            source,
            prompt.emotion,
            prompt.valence,
            len(reply.split()),
            prompt.ratings[source],
            rating,
            attempts=asked,
            error=error,
        )
        return {"case": case, "raw": raw, "error": error}

    def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
        cases: list[ValidationCase] = [r["case"] for r in records]
        report = validation_report(cases, dict(judge_identity or {}))
        report["settings"] = {"limit": limit, "seed": seed, "attempts": attempts, "temperature": 0.0}
        report["data_file"] = {"key": fetched.key, "sha256": fetched.sha256, "verified": fetched.verified}
        # Judge outputs only (never item content), for seeing why answers could not be read.
        report["raw_unparseable"] = [
            r["raw"] for r in records if r["case"].judge_rating is None and r["case"].error is None
        ][:20]
        report["call_errors"] = [r["case"].error for r in records if r["case"].error is not None][:20]
        return report

    return PreparedBenchmark(
        name=VALIDATION_NAME,
        config={"limit": limit, "attempts": attempts},
        items=items,
        run_item=run_item,
        summarize=summarize,
        data_files=[fetched],
    )


def _fmt(value: Any, digits: int = 3) -> str:
    """A figure as the terminal shows it: n/a for a missing one, floats to `digits` decimals."""
    return number(value, digits, missing="n/a")


def render_validation(report: Mapping[str, Any], stdout: "Console") -> None:
    """`judge validate` without --json: the report as tables; the judge's kappa beside the human-human reference."""
    from rich.table import Table
    from rich.text import Text

    judge = report["judge"]
    # Judge specs, judge answers and data-file names are printed literally (markup=False, Text), never as markup.
    stdout.print(
        Text.assemble(
            (f"judge {judge['spec']}", "bold"),
            f": {report['n_cases']} released replies, {report['n_rated']} rated, "
            f"{report['n_unparseable']} unparseable after {report['settings']['attempts']} asks, "
            f"{report['n_reasked']} read only after a re-ask, {report['n_failed_calls']} failed calls",
        )
    )

    agreement = Table(title="Item-level agreement with the one human rating of each reply")
    agreement.add_column("figure")
    agreement.add_column("judge vs human", justify="right")
    agreement.add_column("reference", justify="right")
    reference = f"{number(float(report['human_human_kappa_reference']), 2)} human vs human"
    agreement.add_row("weighted kappa, linear", _fmt(report["weighted_kappa_linear"]), reference)
    agreement.add_row("weighted kappa, quadratic", _fmt(report["weighted_kappa_quadratic"]), reference)
    agreement.add_row("accuracy (3 classes)", _fmt(report["accuracy"]), "0.333 chance")
    stdout.print(agreement)
    stdout.print(f"reference: {report['human_human_kappa_note']}", highlight=False, markup=False)

    matrix = report["confusion_matrix"]
    confusion = Table(title="Confusion matrix: rows human rating, columns judge rating")
    confusion.add_column("human \\ judge")
    for label in matrix["order"]:
        confusion.add_column(label, justify="right")
    for label, row in zip(matrix["order"], matrix["counts"], strict=True):
        confusion.add_row(label, *(str(n) for n in row))
    stdout.print(confusion)

    sources = Table(title="By source of the replies: Good% from the judge and from the human raters")
    for name in ("source", "n", "Good% judge", "Good% human", "accuracy"):
        sources.add_column(name, justify="left" if name == "source" else "right")
    for source, entry in report["by_source"].items():
        sources.add_row(
            Text(str(source)),
            str(entry["n"]),
            _fmt(entry["good_pct_judge"], 2),
            _fmt(entry["good_pct_human"], 2),
            _fmt(entry["accuracy"]),
        )
    stdout.print(sources)
    ranking = report["ranking"]
    stdout.print(
        f"sources by Good%: human raters {' > '.join(ranking['human'])}; judge {' > '.join(ranking['judge'])}; "
        f"Kendall tau {_fmt(ranking['kendall_tau'])}; {ranking['pairs_ordered_alike']}/{ranking['pairs']} pairs "
        f"ordered alike; reproduced: {ranking['reproduced']}",
        highlight=False,
        markup=False,
    )
    if report["valence"]:
        valence = Table(title="Valence pattern: Good% and relative Good increase over human replies")
        for name in ("valence", "source", "Good% judge", "increase judge", "Good% human", "increase human"):
            valence.add_column(name, justify="left" if name in ("valence", "source") else "right")
        for name, by_source in report["valence"]["judge"].items():
            for source, entry in by_source.items():
                human_entry = report["valence"]["human"][name][source]
                valence.add_row(
                    Text(str(name)),
                    Text(str(source)),
                    _fmt(entry["pct_good"], 2),
                    _fmt(entry["good_increase_pct"], 2),
                    _fmt(human_entry["pct_good"], 2),
                    _fmt(human_entry["good_increase_pct"], 2),
                )
        stdout.print(valence)
    length = report["length_bias"]
    stdout.print(
        f"length bias: Spearman rho words vs judge {_fmt(length['spearman_words_vs_judge'])}, "
        f"vs human {_fmt(length['spearman_words_vs_human'])} (the human raters: about 0)",
        highlight=False,
        markup=False,
    )
    preference = report["self_preference"]
    if preference["own_sources"]:
        stdout.print(
            f"self-preference: judge family {preference['judge_family']}; judge minus human Good% "
            f"{_fmt(preference['good_gap_pp_own'], 2)} pp on its own family's replies "
            f"({', '.join(preference['own_sources'])}), {_fmt(preference['good_gap_pp_others'], 2)} pp on the others",
            highlight=False,
            markup=False,
        )
    else:
        stdout.print("self-preference: no released source from the judge's model family", highlight=False, markup=False)
    if report["raw_unparseable"]:
        stdout.print(
            f"unreadable judge answers, first ones: {report['raw_unparseable'][:3]}", highlight=False, markup=False
        )
    stdout.print("all figures (p-values, usage): --json or --out FILE", highlight=False, markup=False)


def validation_evidence(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The judge's agreement with the human raters for `empathybench judges`: quadratic-weighted kappa over the rated
    replies (the headline) and the accuracy on the three classes."""
    n = int(report.get("n_rated") or 0)
    common = {"against": "human raters (Good/Okay/Bad)", "aspect": "reply rating", "ci95": None, "n": n, "unit": "item"}
    kappa = report.get("weighted_kappa_quadratic")
    return [
        common | {"statistic": "quadratic-weighted kappa", "value": kappa, "headline": True},
        common | {"statistic": "accuracy (3 classes)", "value": report.get("accuracy"), "headline": False},
    ]


JUDGE_VALIDATION = JudgeValidation(
    tag=INSTRUMENT_NAME,
    prepare=prepare_validation,
    render=render_validation,
    canned=plausible_answer,
    evidence=validation_evidence,
)
