"""`empathybench judge compare --bench spiral --judge SPEC`: another judge on the released conversations, beside the
published judge's verdicts (gpt-5-2025-08-07).

The released result files (res_v0.2/<model>.json, pinned for the atlas: 4 models x 30 conversations of 20 turns, 19
judged chunks each) hold the transcripts and the published judge's chunk-by-chunk and final judgements. The new judge
is asked exactly what a run's judge is asked (dialogue.judge_chunk and judge_final: the same prompts, chunking, sampling
rules, re-asks and parsing), one task per chunk and one per conversation's final judgement. Then:
- agreement per criterion: each chunk's figure (the sum of its strengths, capped at 5 as the scoring caps it) under
  both judges, paired over the chunks both rated: mean difference, Pearson, Spearman, incidence agreement and kappa,
  with intervals that resample conversations (stats.agreement.clustered_agreement); the final judge's three ratings
  likewise, one per conversation;
- the headline each model gets under either judge on the same conversations (score.py, the leaderboard's code), the
  difference with a paired bootstrap interval over conversations, and the equivalence verdict against the
  instrument's margin (stats.equivalence; the atlas's reproduction margin, 3 points); the mean difference over the
  models, its interval resampling conversations within each model, and the verdict of the judge.
"""

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from empathybench.engine.engine import ItemContext, stored_text, stored_value
from empathybench.errors import UserError
from empathybench.instruments.protocol import (
    ComparisonJudging,
    JudgeComparison,
    PreparedJudgeComparison,
    ReleasedRun,
)
from empathybench.instruments.spiral import published
from empathybench.instruments.spiral.canned import canned_answer
from empathybench.instruments.spiral.data import ScoringRules, SpiralProtocol
from empathybench.instruments.spiral.score import FINAL_KEYS, SKIPPED_RUN_KEYS, Unit, canonical_metric_key

MAX_FILE_BYTES = 64 * 1024 * 1024  # the released files are 3-4 MB; a bound before one is decoded
NAME_CHARS = 120
METRIC = "Spiral-Bench score (0-100, higher = safer)"
HEADLINE_METHOD = (
    "the leaderboard's score (score.py) of the same conversations under either judge; the interval of the difference "
    "resamples conversations (paired), 2000 resamples, seed {seed}, 95%"
)
OVERALL_METHOD = (
    "the mean over the models of their differences; the interval resamples conversations within each model "
    "(stratified), 2000 resamples, seeds {seed}.., 95%"
)
LIMIT_HELP = (
    "At most N conversations of each released model (the openings taken a category at a time, as the quick preset "
    "takes them), each with its 19 chunks and its final judgement: 20 judge calls per conversation"
)


@dataclass(frozen=True)
class ReleasedConversation:
    """One released conversation: its transcript and the published judge's verdicts (chunk records, final)."""

    model: str  # the leaderboard's label of its file
    run_id: str
    prompt_id: str
    category: str
    transcript: tuple[Mapping[str, str], ...]
    chunks: Mapping[str, Mapping[str, Any]]  # "chunk<i>" -> upstream's record (or its error stub)
    final_judgement: Any  # None: none released


@dataclass(frozen=True)
class JudgeTask:
    key: str  # judge + exact prompt: the judgements file's key
    kind: str  # "chunk" | "final"
    model: str
    prompt_id: str
    chunk: str  # "chunk<i>" ("" for the final judgement)
    index: int

    @property
    def label(self) -> str:
        return f"{self.model} {self.prompt_id} {self.chunk or 'final judgement'}"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _conversations_of(model: str, data: Any) -> list[ReleasedConversation]:
    """The conversations of one released file (run id -> prompt file -> prompt id -> conversations), in file order."""
    if not isinstance(data, dict):
        raise UserError(f"the released file of {model} is not a Spiral-Bench result file")
    found = []
    for run_id, bucket in data.items():
        if not isinstance(bucket, dict):
            continue
        for file_key, prompts in bucket.items():
            if file_key in SKIPPED_RUN_KEYS or not isinstance(prompts, dict):
                continue
            for prompt_id, conversations in prompts.items():
                for convo in conversations if isinstance(conversations, list) else []:
                    if not isinstance(convo, dict) or not isinstance(convo.get("transcript"), list):
                        continue
                    transcript = tuple(
                        {"role": _text(t.get("role")), "content": _text(t.get("content"))}
                        for t in convo["transcript"]
                        if isinstance(t, dict)
                    )
                    judgements = convo.get("judgements")
                    chunks = {
                        str(k): _compact_chunk(v)
                        for k, v in (judgements.items() if isinstance(judgements, dict) else ())
                        if isinstance(v, dict)
                    }
                    found.append(
                        ReleasedConversation(
                            model,
                            str(run_id),
                            str(prompt_id),
                            _text(convo.get("category")),
                            transcript,
                            chunks,
                            convo.get("final_judgement"),
                        )
                    )
    return found


def _compact_chunk(chunk: Mapping[str, Any]) -> dict[str, Any]:
    """What the comparison reads of a released chunk: its figures, or that it is an error stub."""
    if "error" in chunk or not isinstance(chunk.get("metrics"), dict):
        return {"error": str(chunk.get("error", "no metrics"))[:200]}
    return {"metrics": {str(k): v for k, v in chunk["metrics"].items() if isinstance(v, int | float)}}


@cache
def _released_file(model: str, path: str) -> tuple[ReleasedConversation, ...]:
    """The conversations of one verified released file, read once per process (a file is 3-4 MB of JSON)."""
    return tuple(_conversations_of(model, _read_released(path)))


@cache
def _recomputed(model: str, path: str) -> float:
    """The published judge's headline over every conversation of the file (score.py)."""
    from empathybench.instruments.spiral.data import scoring_rules
    from empathybench.instruments.spiral.score import leaderboard_row

    rules = scoring_rules()
    units = [_unit(rules, c.run_id, c.prompt_id, c.chunks, c.final_judgement) for c in _released_file(model, path)]
    return leaderboard_row(rules, units, model).score_0_100


# Per conversation, the digests of its judge prompts (chunks in order, then the final judge's): the task keys are
# these with the judge's identity, so a process that prepares again (a resumed command, the tests) builds no prompt
# twice.
_PROMPT_DIGESTS: dict[tuple[str, str, str], tuple[str, ...]] = {}


def _read_released(path: str) -> Any:
    file = Path(path)
    if file.stat().st_size > MAX_FILE_BYTES:
        raise UserError(f"{file.name} is larger than a released Spiral-Bench result file can be")
    try:
        return json.loads(file.read_bytes())
    except (ValueError, RecursionError) as exc:
        raise UserError(f"{file.name} is not a JSON file: {str(exc)[:200]}") from None


def released_runs(*, allow_unverified: bool = False) -> list[tuple[ReleasedRun, list[ReleasedConversation], Any]]:
    """Each released run (the atlas's), its conversations and its fetched file."""
    from empathybench.data.fetch import fetch_entry
    from empathybench.instruments.spiral.atlas import pins, runs

    pinned = pins()
    found = []
    for run in runs():
        (key,) = run.files
        fetched = fetch_entry(pinned[key], allow_unverified=allow_unverified)
        found.append((run, list(_released_file(run.model, str(fetched.path))), fetched))
    return found


def stratified(conversations: Sequence[ReleasedConversation], protocol: SpiralProtocol) -> list[ReleasedConversation]:
    """The conversations in the order `--limit` takes them: the openings' first of each category (in file order),
    then the second of each, and so on (the quick preset's cut, widened); conversations of no known opening last."""
    rank: dict[str, tuple[int, int]] = {}
    seen: dict[str, int] = {}
    categories: dict[str, int] = {}
    for opening in protocol.openings:
        categories.setdefault(opening.category, len(categories))
        rank[opening.prompt_id] = (seen.get(opening.category, 0), categories[opening.category])
        seen[opening.category] = seen.get(opening.category, 0) + 1
    last = (len(protocol.openings), 0)
    return sorted(conversations, key=lambda c: rank.get(c.prompt_id, last))


def _judge_key(identity: Mapping[str, Any]) -> str:
    """The judge as its verdicts depend on it: its model, its server and its model arguments (`--judge-arg`)."""
    return json.dumps({k: identity.get(k) for k in ("provider", "model", "base_url", "model_args")}, sort_keys=True)


def _digest(messages: Sequence[Any]) -> str:
    prompt = json.dumps([[m.role, m.content] for m in messages], ensure_ascii=False)
    return hashlib.sha256(prompt.encode()).hexdigest()


def _prompt_digests(protocol: SpiralProtocol, transcript: list[Mapping[str, str]]) -> list[str]:
    """The digests of a conversation's chunk judge prompts, in chunk order, then of its final judge prompt."""
    from empathybench.instruments.spiral import prompts

    digests = []
    turns = [dict(turn) for turn in transcript]
    for index, pairs in enumerate(prompts.make_chunks(turns, published.PUBLISHED_CHUNK_SIZE)):
        prompt = prompts.chunk_judge_prompt(
            protocol,
            turns[0]["content"],
            pairs,
            index,
            chunk_size=published.PUBLISHED_CHUNK_SIZE,
            assistant_max_chars=published.PUBLISHED_JUDGE_ASSISTANT_MAX_CHARS,
        )
        digests.append(_digest(prompt.messages))
    return [*digests, _digest(prompts.final_judge_messages(protocol, turns))]


def _task_key(judge_key: str, kind: str, digest: str) -> str:
    """The judgements file's key of one task: the judge and the exact prompt (by its digest)."""
    return hashlib.sha256(f"{judge_key}\n{kind}\n{digest}".encode()).hexdigest()


def _settings(judge_name: str) -> Any:
    from empathybench.instruments.spiral.dialogue import JudgeSettings

    return JudgeSettings(
        chunk_size=published.PUBLISHED_CHUNK_SIZE,
        assistant_max_chars=published.PUBLISHED_JUDGE_ASSISTANT_MAX_CHARS,
        attempts=7,  # api_client's 7 tries, as a run's default
        judge_name=judge_name,
    )


def prepare(
    *, limit: int | None, judge: str, judge_identity: Mapping[str, Any], allow_unverified: bool = False
) -> PreparedJudgeComparison:
    """Every chunk and final judgement of the chosen conversations, to judge; `finish` compares."""
    from empathybench.instruments.spiral import prompts
    from empathybench.instruments.spiral.data import load_protocol
    from empathybench.instruments.spiral.dialogue import Criteria

    protocol, files = load_protocol(allow_unverified=allow_unverified)
    released = released_runs(allow_unverified=allow_unverified)
    judge_key = _judge_key(judge_identity)
    chosen: list[ReleasedConversation] = []
    for _, conversations, _ in released:
        ordered = stratified(conversations, protocol)
        chosen.extend(ordered if limit is None else ordered[:limit])
    paths = {run.model: str(fetched.path) for run, _, fetched in released}
    tasks: list[JudgeTask] = []
    for convo in chosen:
        transcript = list(convo.transcript)
        if not transcript:
            continue
        cached = (paths[convo.model], convo.run_id, convo.prompt_id)
        if cached not in _PROMPT_DIGESTS:
            _PROMPT_DIGESTS[cached] = tuple(_prompt_digests(protocol, transcript))
        *chunk_digests, final_digest = _PROMPT_DIGESTS[cached]
        for index, digest in enumerate(chunk_digests):
            key = _task_key(judge_key, "chunk", digest)
            tasks.append(JudgeTask(key, "chunk", convo.model, convo.prompt_id, f"chunk{index}", index))
        tasks.append(
            JudgeTask(_task_key(judge_key, "final", final_digest), "final", convo.model, convo.prompt_id, "", -1)
        )
    by_id = {(c.model, c.prompt_id): c for c in chosen}
    criteria = Criteria.of(protocol)
    judge_name = str(judge_identity.get("model") or "")

    async def judge_task(task: JudgeTask, ctx: ItemContext) -> dict[str, Any]:
        from empathybench.instruments.spiral.dialogue import judge_chunk, judge_final

        convo = by_id[(task.model, task.prompt_id)]
        transcript = [dict(turn) for turn in convo.transcript]
        settings = _settings(judge_name)
        entry: dict[str, Any] = {"kind": task.kind, "model": task.model, "prompt_id": task.prompt_id}
        if task.kind == "chunk":
            pairs = prompts.make_chunks(transcript, settings.chunk_size)[task.index]
            reading = await judge_chunk(ctx, protocol, criteria, transcript[0]["content"], pairs, task.index, settings)
            entry.update(
                chunk=task.chunk,
                record=stored_value(reading.record),
                asks=reading.asks,
                unrated=list(reading.unrated),
                dropped=list(reading.dropped),
            )
            return entry
        value, error, raw, asked = await judge_final(ctx, protocol, transcript, settings)
        entry.update(final_judgement=value, error=error, raw=None if raw is None else stored_text(raw), asks=asked.asks)
        return entry

    n_final = sum(task.kind == "final" for task in tasks)
    scope = (
        f"{len(tasks) - n_final:,} chunks and {n_final:,} final judgements of {len(chosen):,} released conversations "
        f"of {len(released)} models"
        + ("" if limit is None else f" (--limit {limit}: at most {limit} per model)")
        + f", judged by {published.PUBLISHED_JUDGE} when released"
    )

    def finish(judging: ComparisonJudging) -> dict[str, Any]:
        return compare(protocol.scoring, list(criteria.names), released, chosen, tasks, judging.verdicts)

    return PreparedJudgeComparison(
        tasks=tasks,
        judge=judge_task,
        finish=finish,
        data_files=[*files, *(fetched for _, _, fetched in released)],
        scope=scope,
    )


# --- the comparison ------------------------------------------------------------------------------------------------


def chunk_figures(rules: ScoringRules, record: Any) -> dict[str, float] | None:
    """A chunk's figure per criterion (canonical key), capped as the scoring caps it; None for an error stub."""
    if not isinstance(record, Mapping) or "error" in record or not isinstance(record.get("metrics"), Mapping):
        return None
    figures: dict[str, float] = {}
    for key, value in record["metrics"].items():
        if isinstance(value, int | float) and not isinstance(value, bool):
            canonical = canonical_metric_key(rules, str(key))
            figures[canonical] = figures.get(canonical, 0.0) + min(float(value), rules.per_chunk_cap)
    return figures


def _unit(rules: ScoringRules, run_id: str, prompt_id: str, chunks: Mapping[str, Any], final: Any) -> Unit:
    from empathybench.instruments.spiral.score import unit_from_conversations

    convo: dict[str, Any] = {"judgements": dict(chunks)}
    if final is not None:
        convo["final_judgement"] = final
    return unit_from_conversations(rules, run_id, prompt_id, [convo])


def _bootstrap_differences(rules: ScoringRules, first: Sequence[Unit], second: Sequence[Unit], seed: int) -> Any:
    """The score differences (second - first) over paired resamples of the units (None: fewer than 2)."""
    if len(first) < 2:
        return None
    import numpy as np

    from empathybench.instruments.spiral.score import UnitMatrix
    from empathybench.stats.bootstrap import index_blocks

    a, b = UnitMatrix.of(rules, first), UnitMatrix.of(rules, second)
    return np.concatenate(
        [b.scores(rules, block) - a.scores(rules, block) for block in index_blocks(len(first), seed=seed)]
    )


def _rounded(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(float(value), digits)


@dataclass
class _Pairing:
    """What the conversations give the comparison: the paired figures for the agreement, the tallies, and each model's
    units under either judge (only the conversations the new judge answered in full)."""

    chunk_pairs: dict[str, list[list[tuple[float, float]]]]
    final_pairs: dict[str, list[list[tuple[float, float]]]]
    counts: dict[str, int]
    units: dict[str, tuple[list[Unit], list[Unit]]]
    complete: int = 0


def _new_verdicts(
    own: Sequence[JudgeTask], verdicts: Mapping[str, Mapping[str, Any]], counts: dict[str, int]
) -> tuple[list[Any], dict[str, Any], Any]:
    """One conversation's answers from the new judge: every task's entry (None: not asked), its chunk records, and its
    final judgement; the unanswered tasks and the final's errors are tallied in `counts`."""
    answered = [verdicts.get(task.key) for task in own]
    new_chunks: dict[str, Any] = {}
    new_final: Any = None
    for task, entry in zip(own, answered, strict=True):
        if task.kind == "chunk":
            if entry is None:
                counts["chunks_unanswered"] += 1
                continue
            new_chunks[task.chunk] = entry.get("record")
        elif entry is None:
            counts["finals_unanswered"] += 1
        else:
            new_final = entry.get("final_judgement")
            counts["judge_final_errors"] += entry.get("error") is not None
    return answered, new_chunks, new_final


def _pair_figures(
    rules: ScoringRules,
    criteria: Sequence[str],
    convo: ReleasedConversation,
    new_chunks: Mapping[str, Any],
    new_final: Any,
    pairing: _Pairing,
) -> None:
    """Adds one conversation's (published, new) figure pairs: per chunk both judges rated, and the final ratings."""
    from empathybench.instruments.spiral.score import final_values

    counts = pairing.counts
    pairs: dict[str, list[tuple[float, float]]] = {c: [] for c in criteria}
    for name, record in new_chunks.items():
        mine, theirs = chunk_figures(rules, record), chunk_figures(rules, convo.chunks.get(name))
        counts["judge_chunk_errors"] += mine is None
        counts["published_chunk_errors"] += theirs is None
        if mine is None or theirs is None:
            continue
        counts["chunks_compared"] += 1
        for criterion in criteria:
            pairs[criterion].append((theirs.get(criterion, 0.0), mine.get(criterion, 0.0)))
    for criterion in criteria:
        pairing.chunk_pairs[criterion].append(pairs[criterion])
    theirs_final, mine_final = final_values(convo.final_judgement), final_values(new_final)
    counts["published_final_missing"] += theirs_final is None
    if theirs_final is not None and mine_final is not None:
        counts["final_compared"] += 1
        for position, key in enumerate(FINAL_KEYS):
            pairing.final_pairs[key].append([(theirs_final[position], mine_final[position])])


def _pairing(
    rules: ScoringRules,
    criteria: Sequence[str],
    chosen: Sequence[ReleasedConversation],
    tasks: Sequence[JudgeTask],
    verdicts: Mapping[str, Mapping[str, Any]],
) -> _Pairing:
    """The chosen conversations under both judges: figure pairs, tallies and the headline units."""
    by_conversation: dict[tuple[str, str], list[JudgeTask]] = {}
    for task in tasks:
        by_conversation.setdefault((task.model, task.prompt_id), []).append(task)
    counts = dict.fromkeys(("chunks_compared", "published_chunk_errors", "judge_chunk_errors", "chunks_unanswered"), 0)
    counts.update(final_compared=0, published_final_missing=0, judge_final_errors=0, finals_unanswered=0)
    pairing = _Pairing(
        chunk_pairs={c: [] for c in criteria}, final_pairs={k: [] for k in FINAL_KEYS}, counts=counts, units={}
    )
    for convo in chosen:
        own = by_conversation.get((convo.model, convo.prompt_id), [])
        answered, new_chunks, new_final = _new_verdicts(own, verdicts, counts)
        _pair_figures(rules, criteria, convo, new_chunks, new_final, pairing)
        if None in answered:
            continue  # a conversation enters the headlines only with every verdict of the new judge
        pairing.complete += 1
        first, second = pairing.units.setdefault(convo.model, ([], []))
        first.append(_unit(rules, convo.run_id, convo.prompt_id, convo.chunks, convo.final_judgement))
        second.append(_unit(rules, convo.run_id, convo.prompt_id, new_chunks, new_final))
    return pairing


def _agreement(rules: ScoringRules, criteria: Sequence[str], pairing: _Pairing, seed: int) -> list[dict[str, Any]]:
    """The agreement of the two judges per chunk criterion, then per final rating, resampling conversations."""
    from empathybench.stats.agreement import clustered_agreement

    return [
        {
            "criterion": criterion,
            "judge": "chunk",
            "protective": criterion in rules.positive_metrics,
            **clustered_agreement(pairing.chunk_pairs[criterion], seed=seed, unit="conversations"),
        }
        for criterion in criteria
    ] + [
        {
            "criterion": key,
            "judge": "final",
            "protective": key != "off_rails",
            **clustered_agreement(pairing.final_pairs[key], seed=seed, unit="conversations"),
        }
        for key in FINAL_KEYS
    ]


def _model_entry(
    rules: ScoringRules,
    released: tuple[ReleasedRun, Sequence[ReleasedConversation], Any],
    units: tuple[list[Unit], list[Unit]],
    seed: int,
    margin: float,
) -> tuple[dict[str, Any], Any]:
    """One released model's headline under either judge, the difference and its verdict; with the resampled
    differences (None: no interval)."""
    from empathybench.instruments.spiral.score import leaderboard_row
    from empathybench.stats.bootstrap import percentile_interval
    from empathybench.stats.equivalence import equivalence_verdict

    run, conversations, fetched = released
    first, second = units
    entry: dict[str, Any] = {
        "model": run.model,
        "published": None if run.published is None else {"value": run.published.value, "source": run.published.source},
        "published_recomputed": _rounded(_recomputed(run.model, str(fetched.path)), 2),
        "n_conversations_released": len(conversations),
        "n_conversations": len(first),
    }
    try:
        theirs = leaderboard_row(rules, first, run.model).score_0_100
        mine = leaderboard_row(rules, second, run.model).score_0_100
    except ValueError:  # no conversation with a usable judgement under one of the judges
        entry.update(published_judge=None, judge=None, difference=None, ci95=None, verdict=None)
        return entry, None
    differences = _bootstrap_differences(rules, first, second, seed)
    interval = None if differences is None else percentile_interval(differences)
    entry.update(
        published_judge=_rounded(theirs, 2),
        judge=_rounded(mine, 2),
        difference=_rounded(mine - theirs),
        ci95=None if interval is None else [_rounded(interval[0]), _rounded(interval[1])],
        method=HEADLINE_METHOD.format(seed=seed),
        verdict=equivalence_verdict(interval, margin),
    )
    return entry, differences


def _overall(models: Sequence[Mapping[str, Any]], resampled: Sequence[Any], seed: int, margin: float) -> dict[str, Any]:
    """The mean difference over the compared models, its interval (conversations resampled within each model) and
    the verdict of the judge."""
    import numpy as np

    from empathybench.stats.bootstrap import percentile_interval
    from empathybench.stats.equivalence import equivalence_verdict

    compared = [m for m in models if m.get("difference") is not None]
    overall: dict[str, Any] = {
        "n_models": len(compared),
        "n_conversations": sum(m["n_conversations"] for m in compared),
        "difference": _rounded(sum(m["difference"] for m in compared) / len(compared)) if compared else None,
        "ci95": None,
        "method": OVERALL_METHOD.format(seed=seed),
        "verdict": None,
    }
    if compared and len(resampled) == len(compared):
        interval = percentile_interval(np.mean(np.vstack(resampled), axis=0))
        if interval is not None:
            overall.update(ci95=[_rounded(interval[0]), _rounded(interval[1])])
            overall["verdict"] = equivalence_verdict(interval, margin)
    return overall


def _notes(counts: Mapping[str, int]) -> list[str]:
    notes = [
        "a chunk enters the agreement when both judges rated it (an error stub of either is left out); a conversation "
        "enters the headlines when the new judge answered all of its tasks; an unrated chunk is scored as upstream "
        "scores a failed judge call (no incidence), under either judge",
    ]
    if counts["chunks_unanswered"] or counts["finals_unanswered"]:
        notes.append(
            f"{counts['chunks_unanswered']} chunks and {counts['finals_unanswered']} final judgements could not be "
            "asked (the call failed): run the same command again to ask them"
        )
    return notes


def compare(
    rules: ScoringRules,
    criteria: Sequence[str],
    released: Sequence[tuple[ReleasedRun, Sequence[ReleasedConversation], Any]],
    chosen: Sequence[ReleasedConversation],
    tasks: Sequence[JudgeTask],
    verdicts: Mapping[str, Mapping[str, Any]],
    *,
    seed: int = 0,
) -> dict[str, Any]:
    """The comparison's result (JSON-able) from the published records and the new judge's verdicts."""
    from empathybench.instruments.spiral.atlas import ATLAS

    margin = ATLAS.reproduction_margin
    assert margin is not None
    pairing = _pairing(rules, criteria, chosen, tasks, verdicts)
    models: list[dict[str, Any]] = []
    resampled: list[Any] = []
    for position, release in enumerate(released):
        units = pairing.units.get(release[0].model, ([], []))
        entry, differences = _model_entry(rules, release, units, seed + position, margin.value)
        models.append(entry)
        if differences is not None:
            resampled.append(differences)
    overall = _overall(models, resampled, seed, margin.value)
    return {
        "published_judge": published.PUBLISHED_JUDGE,
        "metric": METRIC,
        "margin": {"value": margin.value, "source": margin.source},
        "verdict": overall["verdict"],
        "overall": overall,
        "models": models,
        "agreement": _agreement(rules, criteria, pairing, seed),
        "counts": {**pairing.counts, "conversations": len(chosen), "conversations_complete": pairing.complete},
        "notes": _notes(pairing.counts),
    }


# --- the terminal ----------------------------------------------------------------------------------------------------


def render(result: Mapping[str, Any], console: Any) -> None:
    """The comparison in the terminal: the verdict, a line per model (wrapping, a model's name never cut), the
    agreement per criterion as a table (the criteria are the rubric's short names)."""
    from rich.table import Column, Table
    from rich.text import Text

    from empathybench.formatting import interval, number, printable

    def say(text: str, style: str = "") -> None:
        console.print(Text(text, style))

    judge = result.get("judge") or {}
    margin = result["margin"]
    overall = result["overall"]
    say(
        f"Spiral-Bench judge comparison: {printable(judge.get('spec', ''), 300)} against the published judge "
        f"{result['published_judge']}",
        "bold",
    )
    say(f"what was judged: {printable(result.get('scope', ''), 400)}")
    say(
        f"verdict: {overall['verdict'] or 'none (too few conversations for an interval)'}: headline difference "
        f"{number(overall['difference'], 2, signed=True)} {interval(overall['ci95'])} over "
        f"{overall['n_models']} models, {overall['n_conversations']} conversations; margin ±{number(margin['value'])} "
        f"({margin['source']})",
        "bold",
    )
    for model in result["models"]:
        published_figure = (model.get("published") or {}).get("value")
        head = f"  {printable(model['model'], NAME_CHARS)}: "
        if model.get("difference") is None:
            say(head + f"no headline ({model['n_conversations']} conversations judged in full)")
            continue
        say(
            head
            + f"published judge {number(model['published_judge'])}, this judge {number(model['judge'])}, difference "
            f"{number(model['difference'], 2, signed=True)} {interval(model['ci95'])} over "
            f"{model['n_conversations']} conversations: {model['verdict'] or 'no verdict'} (leaderboard "
            f"{number(published_figure, 1)}, recomputed {number(model['published_recomputed'])} over all "
            f"{model['n_conversations_released']})"
        )
    from rich import box

    table = Table(
        Column("criterion", min_width=12),
        Column("n", justify="right"),
        Column("published", justify="right"),
        Column("new", justify="right"),
        Column("new - published", justify="right", no_wrap=True),
        Column("Pearson", justify="right"),
        Column("Spearman", justify="right", no_wrap=True),
        Column("incidence", justify="right"),
        Column("kappa", justify="right"),
        title=Text(
            "Agreement with the published judge per criterion: means per chunk (final: per conversation), 95% "
            "intervals resampling conversations (--json: every interval); incidence: the share rated alike as present "
            "or absent"
        ),
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )

    def cell(figure: Mapping[str, Any] | None, signed: bool = False) -> str:
        if not figure or figure.get("value") is None:
            return "—"
        return f"{number(figure['value'], 2, signed=signed)} {interval(figure.get('ci95'))}"

    for row in result["agreement"]:
        name = ("final: " if row["judge"] == "final" else "") + row["criterion"].replace("_", " ")
        if not row.get("n"):
            table.add_row(name, "0", *("—",) * 7)
            continue
        table.add_row(
            name,
            f"{row['n']:,}",
            number(row.get("mean_reference")),
            number(row.get("mean_other")),
            cell(row.get("mean_difference"), signed=True),
            number((row.get("pearson") or {}).get("value")),
            cell(row.get("spearman")),
            number((row.get("incidence_agreement") or {}).get("value")),
            number((row.get("kappa") or {}).get("value")),
        )
    console.print(table)
    counts = result["counts"]
    say(
        f"{counts['chunks_compared']:,} chunks compared ({counts['published_chunk_errors']} published and "
        f"{counts['judge_chunk_errors']} new error stubs left out), {counts['final_compared']} final judgements; "
        f"{counts['conversations_complete']} of {counts['conversations']} conversations in the headlines"
    )
    for note in result.get("notes", []):
        say(note)
    if result.get("cost_line"):
        say(str(result["cost_line"]))
    if result.get("result_file"):
        say(f"results: {printable(result['result_file'], 300)}")


def comparison_evidence(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The comparison's figures for `empathybench judges` (protocol.JudgeComparison.evidence): the headline
    difference over the models (the verdict's figure, the headline row), then per criterion Spearman's rho and the
    mean difference (new - published), per chunk for the chunk judge's criteria, per conversation for the final
    judge's."""
    against = f"published judge {result['published_judge']}"
    overall = result["overall"]
    rows = [
        {
            "against": against,
            "aspect": f"{METRIC}, mean over {overall['n_models']} models of each one's difference",
            "statistic": "mean difference (this judge - published)",
            "value": overall["difference"],
            "ci95": overall["ci95"],
            "n": overall["n_conversations"],
            "unit": "conversation",
            "headline": True,
        }
    ]
    for row in result["agreement"]:
        unit = "chunk" if row["judge"] == "chunk" else "conversation"
        aspect = ("final judgement: " if row["judge"] == "final" else "") + row["criterion"].replace("_", " ")
        for statistic, key in (
            ("Spearman's rho", "spearman"),
            ("mean difference (this judge - published)", "mean_difference"),
        ):
            figure = row.get(key) or {}
            rows.append(
                {
                    "against": against,
                    "aspect": aspect,
                    "statistic": statistic,
                    "value": figure.get("value"),
                    "ci95": figure.get("ci95"),
                    "n": row["n"],
                    "unit": unit,
                    "headline": False,
                }
            )
    return rows


JUDGE_COMPARISON = JudgeComparison(
    help="Re-judge the released Spiral-Bench conversations (4 models, 30 conversations each) chunk by chunk and their "
    "final judgements with the judge, beside the published judge's (gpt-5-2025-08-07) verdicts",
    limit_help=LIMIT_HELP,
    prepare=prepare,
    render=render,
    tag="spiral",
    canned=canned_answer,
    evidence=comparison_evidence,
)
