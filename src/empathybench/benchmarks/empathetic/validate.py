"""`empathybench judge validate`: how well a judge reproduces the released human ratings (spec §6.1 step 5)."""

import asyncio
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from empathybench.benchmarks.empathetic.data import (
    BAD,
    GOOD,
    HUMAN,
    OKAY,
    SOURCE_FAMILIES,
    Prompt,
    load_released,
)
from empathybench.benchmarks.empathetic.judge import JUDGE_ATTEMPTS, judge_reply
from empathybench.benchmarks.empathetic.stats import RatedRow, analyse
from empathybench.stats.agreement import accuracy, confusion_matrix, kendall_tau, spearman, weighted_kappa

HUMAN_HUMAN_KAPPA = 0.2817  # pilot, 3-point scale, weighted kappa between raters (spec §3.4)
CATEGORIES = (BAD, OKAY, GOOD)


@dataclass(frozen=True)
class ValidationCase:
    """One released reply, its single human rating, and the judge's rating (None: unparseable)."""

    source: str
    emotion: str
    valence: str
    reply_words: int
    human_rating: int
    judge_rating: int | None


def stratified_cases(prompts: Sequence[Prompt], limit: int | None) -> list[tuple[Prompt, str]]:
    """(prompt, source) pairs; with a limit, round-robin over source x emotion so every stratum is represented."""
    strata: dict[tuple[str, str], list[tuple[Prompt, str]]] = defaultdict(list)
    for prompt in prompts:
        for source in prompt.ratings:
            strata[(source, prompt.emotion)].append((prompt, source))
    if limit is None:
        return [pair for key in sorted(strata) for pair in strata[key]]
    chosen: list[tuple[Prompt, str]] = []
    keys = sorted(strata)
    depth = 0
    while len(chosen) < limit and any(depth < len(strata[k]) for k in keys):
        for key in keys:
            if depth < len(strata[key]) and len(chosen) < limit:
                chosen.append(strata[key][depth])
        depth += 1
    return chosen


def _family_of(judge_identity: dict[str, Any]) -> str | None:
    """The released-source family the judge belongs to, guessed from its provider and model name."""
    text = f"{judge_identity.get('provider', '')} {judge_identity.get('model', '')}".lower()
    hints = {"openai": ("gpt", "openai", "o1", "o3", "o4"), "llama": ("llama",), "gemini": ("gemini", "gemma")}
    hints["mistral"] = ("mistral", "mixtral")
    for family, words in hints.items():
        if any(w in text for w in words):
            return family
    return None


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
    tau = kendall_tau(
        [by_source[s]["good_pct_human"] for s in ranked], [by_source[s]["good_pct_judge"] for s in ranked]
    )
    order_human = sorted(ranked, key=lambda s: -by_source[s]["good_pct_human"])
    order_judge = sorted(ranked, key=lambda s: -by_source[s]["good_pct_judge"])

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

    valence: dict[str, Any] = {}
    if HUMAN in ranked and len(ranked) > 1:
        for who in ("judge", "human"):
            table = analyse(rows(who), ranked, bootstrap=False)
            valence[who] = {
                v: {s: {k: e.get(k) for k in ("pct_good", "good_increase_pct", "p")} for s, e in t.items()}
                for v, t in table["valence"].items()
            }

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

    return {
        "n_cases": len(cases),
        "n_rated": len(rated),
        "n_unparseable": len(cases) - len(rated),
        "accuracy": accuracy(human, judge),
        "weighted_kappa_linear": weighted_kappa(human, judge, CATEGORIES, "linear"),
        "weighted_kappa_quadratic": weighted_kappa(human, judge, CATEGORIES, "quadratic"),
        "human_human_kappa_reference": HUMAN_HUMAN_KAPPA,
        "confusion_matrix": {
            "order": ["Bad", "Okay", "Good"],
            "rows": "human rating",
            "columns": "judge rating",
            "counts": confusion_matrix(human, judge, CATEGORIES),
        },
        "by_source": by_source,
        "ranking": {
            "human": order_human,
            "judge": order_judge,
            "kendall_tau": tau,
            "reproduced": order_human == order_judge,
        },
        "valence": valence,
        "length_bias": {
            "spearman_words_vs_judge": rho,
            "p": rho_p,
            "spearman_words_vs_human": rho_human,
            "p_human": rho_human_p,
        },
        "self_preference": self_preference,
    }


async def _judge_all(
    engine: Any, pairs: list[tuple[Prompt, str]], seed: int, attempts: int
) -> list[tuple[ValidationCase, list[str]]]:
    from empathybench.engine.runner import item_seed

    async def call(messages: Any, sampling: Any, attempt: int) -> Any:
        _, generation = await engine.generate(messages, sampling, attempt=attempt)
        return generation

    async def one(prompt: Prompt, source: str) -> tuple[ValidationCase, list[str]]:
        reply = prompt.replies[source]
        verdict = await judge_reply(
            call,
            emotion=prompt.emotion,
            situation=prompt.situation,
            speaker_utterance=prompt.speaker_utterance,
            reply=reply,
            seed=item_seed(seed, "empathetic-validate", f"{prompt.dialog_id}:{source}"),
            attempts=attempts,
        )
        case = ValidationCase(
            source, prompt.emotion, prompt.valence, len(reply.split()), prompt.ratings[source], verdict.rating
        )
        return case, verdict.raw

    try:
        return list(await asyncio.gather(*(one(p, s) for p, s in pairs)))
    finally:
        await engine.backend.aclose()


def run_validation(
    judge: str,
    *,
    limit: int | None = None,
    seed: int = 0,
    base_url: str | None = None,
    max_concurrency: int | None = None,
    use_cache: bool = True,
    allow_unverified: bool = False,
    attempts: int = JUDGE_ATTEMPTS,
) -> dict[str, Any]:
    """Have `judge` rate released replies with known human ratings and compare (the engine's cache and retries)."""
    from empathybench.engine.cache import ResponseCache
    from empathybench.engine.engine import Engine
    from empathybench.models.registry import create_backend, parse_model_spec
    from empathybench.paths import cache_dir

    prompts, fetched = load_released(allow_unverified=allow_unverified)
    pairs = stratified_cases(prompts, limit)
    backend = create_backend(parse_model_spec(judge), base_url=base_url)
    cache = ResponseCache(cache_dir() / "responses.sqlite") if use_cache else None
    engine = Engine(backend, cache=cache, max_concurrency=max_concurrency, seed=seed)
    try:
        results = asyncio.run(_judge_all(engine, pairs, seed, attempts))
    finally:
        if cache is not None:
            cache.close()
    report = validation_report([case for case, _ in results], backend.identity())
    report["judge"] = {"spec": judge, **backend.identity()}
    report["data_file"] = {"key": fetched.key, "sha256": fetched.sha256, "verified": fetched.verified}
    report["raw_unparseable"] = [raw for case, raw in results if case.judge_rating is None][:20]
    return report
