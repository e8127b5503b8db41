"""`empathybench judge validate --bench mindeval`: the judge against the four experts (specs/mindeval.md section 8).

The judge rates rows 0-54 of data/human_annotations.jsonl with upstream's judge template v0_1 (rows 55-59 are the
template's own few-shot examples: never rated). Gold is upstream's mapping, 0s kept (data.gold_scores). The report
gives the judge's agreement with the experts' mean (Pearson per criterion and on the Overall, Kendall's tau-b on the
Overall, each with a bootstrap interval over conversations) beside the experts' agreement with each other: each
expert against the mean of the other three, averaged over the four (about 0.41 Pearson on the Overall).
"""

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from empathybench.engine.engine import CallFailedError, ItemContext
from empathybench.formatting import number, printable
from empathybench.instruments.mindeval.canned import plausible_answer
from empathybench.instruments.mindeval.data import (
    FEW_SHOT_ROWS,
    PAPER_JUDGE_VERSION,
    AnnotatedConversation,
    annotator_scores,
    gold_scores,
    load_annotations,
)
from empathybench.instruments.mindeval.dialogue import judge_prompt
from empathybench.instruments.mindeval.parse import CRITERIA, OVERALL, SHORT, parse_judgment
from empathybench.instruments.mindeval.published import PUBLISHED_BUDGET, request_sampling
from empathybench.instruments.protocol import BenchItem, JudgeValidation, PreparedBenchmark
from empathybench.models.base import Message, Sampling
from empathybench.stats.agreement import kendall_tau, spearman
from empathybench.stats.tests import bootstrap_interval, pearson

if TYPE_CHECKING:
    from rich.console import Console

INSTRUMENT_NAME = "mindeval"  # the request tag of the judge calls and the key of the canned answers
VALIDATION_NAME = "mindeval-validate"
FIGURES = (*CRITERIA, OVERALL)
Statistic = Callable[[Sequence[float], Sequence[float]], "float | None"]


def _finite(value: float | None) -> float | None:
    return None if value is None or value != value else round(float(value), 4)


def _pearson(x: Sequence[float], y: Sequence[float]) -> float | None:
    return _finite(pearson(x, y))


def _kendall(x: Sequence[float], y: Sequence[float]) -> float | None:
    return _finite(kendall_tau(x, y))


def _spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    return _finite(spearman(x, y)[0])


# The judge's agreement with the experts' mean, per criterion and on the Overall (the key, the statistic).
AGREEMENT = (("pearson", _pearson), ("spearman", _spearman), ("kendall_tau_b", _kendall))


def _with_interval(statistic: Statistic, x: Sequence[float], y: Sequence[float], seed: int) -> dict[str, Any]:
    """The statistic and its percentile bootstrap interval over conversations (stats/bootstrap.py)."""

    def resampled(indices: list[int]) -> float:
        value = statistic([x[i] for i in indices], [y[i] for i in indices])
        return float("nan") if value is None else value

    low, high = bootstrap_interval(len(x), resampled, seed=seed) if len(x) >= 3 else (float("nan"),) * 2
    return {"value": statistic(x, y), "ci95": [_finite(low), _finite(high)], "n": len(x)}


def human_agreement(conversations: Sequence[AnnotatedConversation]) -> dict[str, Any]:
    """The experts with each other: for each expert, Pearson and Kendall tau-b of their scores against the mean of
    the other three, per criterion and on the Overall, averaged over the experts."""
    annotators = sorted({a for c in conversations for a in c.ratings})
    found: dict[str, dict[str, list[float]]] = {key: {name: [] for name in FIGURES} for key, _ in AGREEMENT}
    for annotator in annotators:
        rows = [c for c in conversations if annotator in c.ratings and len(c.ratings) > 1]
        own, others = [], []
        for conversation in rows:
            scores = annotator_scores(conversation, annotator)
            scores[OVERALL] = sum(scores.values()) / len(CRITERIA)
            own.append(scores)
            others.append(gold_scores(conversation, [a for a in sorted(conversation.ratings) if a != annotator]))
        for name in FIGURES:
            x, y = [s[name] for s in own], [s[name] for s in others]
            for key, statistic in AGREEMENT:
                value = statistic(x, y)
                if value is not None:
                    found[key][name].append(value)
    averaged = {
        f"leave_one_out_{key}": {name: _finite(sum(v) / len(v)) if v else None for name, v in by_name.items()}
        for key, by_name in found.items()
    }
    return {"n": len(conversations), "annotators": len(annotators), **averaged}


def validation_report(
    conversations: Sequence[AnnotatedConversation], judged: Sequence[Mapping[str, float] | None], *, seed: int = 0
) -> dict[str, Any]:
    """The judge (its scores per conversation, None: not rated) against the experts' gold, beside the experts'
    agreement with each other on the same conversations and on all of the file's."""
    pairs = [(c, j) for c, j in zip(conversations, judged, strict=True) if j is not None]
    gold = [gold_scores(c) for c, _ in pairs]
    agreement: dict[str, Any] = {}
    for name in FIGURES:
        x, y = [j[name] for _, j in pairs], [g[name] for g in gold]
        # Intervals for every Pearson and for the Overall's rank correlations; a criterion's rank correlations are
        # points (their bootstrap costs seconds and adds little beside the Pearson's).
        agreement[name] = {
            key: _with_interval(statistic, x, y, seed)
            if key == "pearson" or name == OVERALL
            else {"value": statistic(x, y), "ci95": None, "n": len(x)}
            for key, statistic in AGREEMENT
        }
    # The judge against the mean of three experts (each left out in turn), as the experts are compared.
    annotators = sorted({a for c, _ in pairs for a in c.ratings})
    loo = []
    for annotator in annotators:
        rows = [(c, j) for c, j in pairs if annotator in c.ratings and len(c.ratings) > 1]
        others = [gold_scores(c, [a for a in sorted(c.ratings) if a != annotator])[OVERALL] for c, _ in rows]
        value = _pearson([j[OVERALL] for _, j in rows], others)
        if value is not None:
            loo.append(value)
    by_clinician: dict[str, dict[str, list[float]]] = {}
    for (conversation, judgment), truth in zip(pairs, gold, strict=True):
        entry = by_clinician.setdefault(conversation.clinician, {"judge": [], "experts": []})
        entry["judge"].append(judgment[OVERALL])
        entry["experts"].append(truth[OVERALL])
    return {
        "n_rated": len(pairs),
        "judge_vs_experts": agreement,
        "judge_vs_three_experts_pearson_overall": _finite(sum(loo) / len(loo)) if loo else None,
        "experts_with_each_other": human_agreement([c for c, _ in pairs]),
        "experts_with_each_other_all_rows": None,  # set by summarize (the whole file, few-shot rows included)
        "means": {
            "judge": {n: _finite(sum(j[n] for _, j in pairs) / len(pairs)) if pairs else None for n in FIGURES},
            "experts": {n: _finite(sum(g[n] for g in gold) / len(gold)) if gold else None for n in FIGURES},
        },
        "by_clinician": {
            name: {
                "n": len(entry["judge"]),
                "judge_overall": _finite(sum(entry["judge"]) / len(entry["judge"])),
                "experts_overall": _finite(sum(entry["experts"]) / len(entry["experts"])),
            }
            for name, entry in sorted(by_clinician.items())
        },
    }


def prepare_validation(
    *,
    limit: int | None = None,
    seed: int = 0,
    attempts: int = 3,
    allow_unverified: bool = False,
    judge_identity: Mapping[str, Any] | None = None,
) -> PreparedBenchmark[AnnotatedConversation]:
    """The 55 expert-rated conversations that are not the judge prompt's few-shot examples (the first `limit`),
    how the judge rates one, and the report of all of them."""
    conversations, templates, files = load_annotations(allow_unverified=allow_unverified)
    rated = [c for c in conversations if c.row not in FEW_SHOT_ROWS]
    if limit is not None:
        rated = rated[:limit]
    template = templates.judge[PAPER_JUDGE_VERSION]
    items = [BenchItem(str(c.row), c) for c in rated]
    # The instrument's judge sampling (budget 16000, temperature 1: the providers' default), with the published
    # settings as the protocol's model arguments when the judge is the published one (published.request_sampling).
    sampling = request_sampling(
        "judge", judge_identity or {}, Sampling(temperature=1.0, max_tokens=PUBLISHED_BUDGET, top_p=None, seed=None)
    )

    async def run_item(item: BenchItem[AnnotatedConversation], ctx: ItemContext) -> dict[str, Any]:
        conversation = item.payload
        prompt = judge_prompt(template, conversation.messages, conversation.member_attributes)
        judgment = None
        asks = 0
        try:
            for attempt in range(attempts):  # a reply that leaves out a criterion is asked again, then read as 3
                asks += 1
                generation = await ctx.judge_generate([Message("user", prompt)], sampling, attempt=attempt)
                judgment = parse_judgment(generation.text)
                if not judgment.missing:
                    break
        except CallFailedError as exc:
            return {"error": str(exc), "asks": asks}
        assert judgment is not None
        return {"scores": dict(judgment.scores), "missing": list(judgment.missing), "asks": asks}

    def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
        judged = [r.get("scores") if r.get("error") is None else None for r in records]
        report = validation_report(rated, judged, seed=seed)
        report["experts_with_each_other_all_rows"] = human_agreement(conversations)
        report["n_cases"] = len(rated)
        report["n_failed_calls"] = sum(1 for r in records if r.get("error") is not None)
        report["call_errors"] = [str(r["error"]) for r in records if r.get("error") is not None][:20]
        report["n_missing_criteria"] = sum(len(r.get("missing") or ()) for r in records if r.get("error") is None)
        report["n_reasked"] = sum(1 for r in records if int(r.get("asks") or 1) > 1 and r.get("error") is None)
        report["settings"] = {"limit": limit, "seed": seed, "attempts": attempts, "template": PAPER_JUDGE_VERSION}
        report["excluded_rows"] = list(FEW_SHOT_ROWS)
        report["published"] = (
            "the paper's judge-human figure is not available here; the experts' agreement with each other is "
            "computed from the released ratings"
        )
        return report

    return PreparedBenchmark(
        name=VALIDATION_NAME,
        config={"limit": limit, "attempts": attempts, "template": PAPER_JUDGE_VERSION, "rows": [c.row for c in rated]},
        items=items,
        run_item=run_item,
        summarize=summarize,
        data_files=list(files),
    )


def _fmt(value: Any, digits: int = 2) -> str:
    return number(value, digits, missing="n/a")


def _interval(entry: Mapping[str, Any]) -> str:
    if entry.get("ci95") is None:
        return _fmt(entry.get("value"))
    low, high = entry["ci95"]
    return f"{_fmt(entry.get('value'))} [{_fmt(low)}, {_fmt(high)}]"


def render_validation(report: Mapping[str, Any], stdout: "Console") -> None:
    """The judge's agreement with the experts beside the experts' agreement with each other."""
    from rich.table import Table
    from rich.text import Text

    judge = report["judge"]
    stdout.print(
        Text.assemble(
            (f"judge {printable(judge['spec'])}", "bold"),
            f": {report['n_cases']} expert-rated conversations (rows 55-59, the prompt's few-shot examples, left "
            f"out), {report['n_rated']} rated, {report['n_failed_calls']} failed calls, "
            f"{report['n_missing_criteria']} criterion scores left out by the judge (given 3)",
        )
    )
    humans = report["experts_with_each_other"]
    for key, label in (("pearson", "Pearson"), ("kendall_tau_b", "Kendall tau-b"), ("spearman", "Spearman")):
        table = Table(title=f"{label}: the judge vs the four experts' mean, beside each expert vs the other three")
        for name in ("criterion", "judge [95%]", "experts", "judge mean", "experts mean"):
            table.add_column(name, justify="left" if name == "criterion" else "right")
        for name in FIGURES:
            table.add_row(
                SHORT.get(name, "Overall"),
                _interval(report["judge_vs_experts"][name][key]),
                _fmt(humans[f"leave_one_out_{key}"].get(name)),
                _fmt(report["means"]["judge"].get(name)),
                _fmt(report["means"]["experts"].get(name)),
            )
        stdout.print(table)
    everything = report.get("experts_with_each_other_all_rows") or {}
    stdout.print(
        f"Judge vs the mean of three experts (each left out in turn, as the experts are compared): Overall Pearson "
        f"{_fmt(report['judge_vs_three_experts_pearson_overall'])}. The experts with each other: in the tables on "
        f"the {humans.get('n')} rated conversations; on all {everything.get('n')} (the few-shot examples too), "
        f"Overall Pearson {_fmt((everything.get('leave_one_out_pearson') or {}).get(OVERALL))}.",
        highlight=False,
        markup=False,
    )
    for clinician, entry in report["by_clinician"].items():
        stdout.print(
            Text(
                f"clinician {printable(clinician, 80)}: judge Overall {_fmt(entry['judge_overall'])}, experts "
                f"{_fmt(entry['experts_overall'])} ({entry['n']} conversations)"
            )
        )
    stdout.print(f"published: {report['published']}", highlight=False, markup=False)
    stdout.print("all figures: --json or --out FILE", highlight=False, markup=False)


def validation_evidence(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The judge's agreement with the clinicians for `empathybench judges`: Pearson's r with the experts' mean on the
    Overall (the headline) and per criterion, each with its interval over conversations where it has one."""
    rows = []
    for name, figures in (report.get("judge_vs_experts") or {}).items():
        pearson = figures.get("pearson") or {}
        rows.append(
            {
                "against": "clinicians (their mean)",
                "aspect": name,
                "statistic": "Pearson r",
                "value": pearson.get("value"),
                "ci95": pearson.get("ci95"),
                "n": int(pearson.get("n") or 0),
                "unit": "item",
                "headline": name == OVERALL,
            }
        )
    return rows


JUDGE_VALIDATION = JudgeValidation(
    tag=INSTRUMENT_NAME,
    prepare=prepare_validation,
    render=render_validation,
    canned=plausible_answer,
    evidence=validation_evidence,
)
