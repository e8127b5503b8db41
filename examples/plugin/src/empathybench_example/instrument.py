"""The `example` instrument on the typed protocol: presets and options, items, one item's run, the summary with
its headline metric, canned answers for scripted models, a report section and a rescore command.

It imports only `empathybench.instruments.protocol` and `empathybench.instruments.support`.
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from empathybench.instruments.protocol import (
    BenchItem,
    ChatRequest,
    DemoPreset,
    Draw,
    FactsTable,
    Instrument,
    ItemContext,
    ItemLink,
    Message,
    PreparedBenchmark,
    ReportSection,
    RescoreCommand,
    Sampling,
)
from empathybench.instruments.support import (
    MAX_ATTEMPTS,
    MAX_TEMPERATURE,
    MAX_TOKENS_LIMIT,
    UserError,
    apply_options,
    bounded,
    evenly_spread,
    mean_metric,
    read_json_argument,
)
from empathybench_example.items import EMOTIONS, ITEMS, Sentence

QUICK_SIZE = 4
CHANCE = 100.0 / len(EMOTIONS)  # % correct when answering at random
PROMPT = (
    "Which emotion does the speaker of this sentence feel most? Answer with one word: {emotions}.\n\nSentence: {text}"
)
REASK = "Please answer with exactly one of these words: {emotions}."


@dataclass(frozen=True)
class ExampleConfig:
    """Everything that defines a run of the instrument; recorded in run.json and part of the run's fingerprint."""

    temperature: float = field(default=0.0, metadata=bounded(0, MAX_TEMPERATURE))
    max_tokens: int = field(default=16, metadata=bounded(1, MAX_TOKENS_LIMIT))
    attempts: int = field(default=2, metadata=bounded(1, MAX_ATTEMPTS))


OPTIONS = {
    "temperature": "sampling temperature (default 0)",
    "max_tokens": "tokens per answer (default 16)",
    "attempts": "asks per item until the answer is one emotion word (default 2)",
}
PRESETS = {
    "quick": f"{QUICK_SIZE} of the {len(ITEMS)} sentences",
    "paper": f"all {len(ITEMS)} sentences",
    "full": f"all {len(ITEMS)} sentences",
}


def parse_emotion(reply: str) -> str | None:
    """The one emotion word the reply names, or None (none, or more than one)."""
    named = {word for word in re.findall(r"[a-z]+", reply.lower()) if word in EMOTIONS}
    return named.pop() if len(named) == 1 else None


async def run_sentence(config: ExampleConfig, item: BenchItem[Sentence], ctx: ItemContext) -> dict[str, Any]:
    """Ask until the reply names one emotion (at most `attempts` times); the record fields for samples.jsonl."""
    words = ", ".join(EMOTIONS)
    messages = [Message("user", PROMPT.format(emotions=words, text=item.payload.text))]
    sampling = Sampling(temperature=config.temperature, max_tokens=config.max_tokens, seed=ctx.seed)
    answer, attempts = None, 0
    for attempt in range(config.attempts):
        reply = (await ctx.generate(messages, sampling, attempt=attempt)).text
        attempts = attempt + 1
        answer = parse_emotion(reply)
        if answer is not None:
            break
        messages = [*messages, Message("assistant", reply), Message("user", REASK.format(emotions=words))]
    expected = item.payload.emotion
    return {"expected": expected, "answer": answer, "correct": answer == expected, "attempts": attempts}


def summarize(records: Sequence[Mapping[str, Any]], n_items: int, seed: int) -> dict[str, Any]:
    """The summary envelope: one headline metric (`accuracy`, with its bootstrap interval) and the details."""
    accuracy = mean_metric(
        "emotion named correctly",
        {r["item_id"]: 100.0 if r["correct"] else 0.0 for r in records},
        unit="%",
        paired_test="mcnemar",  # each item is right or wrong: compare two runs item by item
        reference={"kind": "chance", "label": f"chance (1 in {len(EMOTIONS)})", "value": CHANCE},
        seed=seed,
    )
    return {
        "headline_metric": "accuracy",
        "metrics": {"accuracy": accuracy},
        "score": accuracy["value"],
        "score_metric": "accuracy",
        "score_name": "% of sentences whose emotion was named correctly",
        "n_items": n_items,
        "n_parsed": sum(1 for r in records if r["answer"] is not None),
        "answers": {r["item_id"]: r["answer"] for r in records},
    }


def plausible_answer(request: ChatRequest, draw: Draw) -> str | None:
    """`scripted/plausible[-K]`: right about 3 times in 4 for K = 1 (less for higher K), sometimes no word at all."""
    asked = " ".join(message.content for message in request.messages)
    sentence = next((s for s in ITEMS if s.text in asked), None)
    if sentence is None:
        return None  # not one of ours: the scripted model's generic answer
    roll = draw(draw.salt, asked)
    if roll < 0.1:
        return "That is hard to say."  # unparseable: the instrument asks again
    if roll < 1.0 - 0.25 * draw.variant:
        return sentence.emotion.capitalize() + "."
    others = [emotion for emotion in EMOTIONS if emotion != sentence.emotion]
    return others[int(len(others) * draw("wrong", asked))]


def report_section(result: Mapping[str, Any], samples: Sequence[Mapping[str, Any]]) -> ReportSection:
    """A table of the answers, each row linked to its sample (report/ escapes and formats every cell)."""
    rows = tuple(
        (ItemLink(f"#{r['item_id']}", str(r["item_id"])), r.get("expected"), r.get("answer"), r.get("correct"))
        for r in samples
        if r.get("status") == "ok"
    )
    return ReportSection(
        tables=(FactsTable(("sentence", "expected", "answered", "correct"), rows, title="answers"),),
        note=f"{len(ITEMS)} sentences written for this example; chance is {CHANCE:.0f}%.",
    )


def sample_line(record: Mapping[str, Any]) -> str:
    """One record in the samples table."""
    return f"answered {record.get('answer')} (expected {record.get('expected')})"


def rescore_file(path: Path) -> dict[str, Any]:
    """`empathybench rescore example FILE`: a JSON object {item id: reply text} scored with our parser."""
    replies = read_json_argument(path)
    if not isinstance(replies, dict):
        raise UserError(f"{path}: expected a JSON object {{item id: reply text}}")
    by_id = {s.id: s for s in ITEMS}
    unknown = sorted(set(replies) - set(by_id))
    if unknown:
        raise UserError(f"{path}: unknown item ids {', '.join(map(str, unknown[:5]))}")
    correct = sum(1 for key, reply in replies.items() if parse_emotion(str(reply)) == by_id[key].emotion)
    return {"n": len(replies), "correct": correct, "accuracy": 100.0 * correct / len(replies) if replies else None}


class Example(Instrument[ExampleConfig, Sentence]):
    """The instrument object the entry point names: presets, options, items and how they run are its own; every
    optional part it does not set keeps the default `Instrument` declares."""

    name = "example"
    title = "Example (plugin): name the emotion of a short invented sentence"
    order = 1000  # after the built-in instruments
    profile_title = "Example plugin"
    profile_question = "Does it name the emotion of a simple sentence?"
    in_default_run = False  # runs only when named: `--bench example`
    presets = PRESETS
    options = OPTIONS
    preset_configs: Mapping[str, ExampleConfig] = {name: ExampleConfig() for name in PRESETS}
    limit_unit = "sentences (1 call each, up to `attempts`)"
    demo = DemoPreset(items=2)
    chart_domain = (0.0, 100.0)
    canned = staticmethod(plausible_answer)
    report_section = staticmethod(report_section)
    sample_line = staticmethod(sample_line)
    rescore = RescoreCommand(
        help="Score a JSON file of replies {item id: reply text} with the example's parser.",
        argument_help="A JSON object mapping item ids to reply texts",
        run=lambda path: rescore_file(path),
    )

    def configure(self, preset: str, options: Mapping[str, str]) -> ExampleConfig:
        return apply_options(
            self.preset_configs.get(preset, ExampleConfig()), options, benchmark=self.name, known=OPTIONS
        )

    def prepare(
        self, config: ExampleConfig, *, preset: str, limit: int | None, seed: int, allow_unverified: bool
    ) -> PreparedBenchmark[Sentence]:
        chosen = evenly_spread(ITEMS, QUICK_SIZE) if preset == "quick" else list(ITEMS)
        items = [BenchItem(sentence.id, sentence) for sentence in chosen[:limit]]

        async def run_item(item: BenchItem[Sentence], ctx: ItemContext) -> dict[str, Any]:
            return await run_sentence(config, item, ctx)

        return PreparedBenchmark(
            name=self.name,
            config={**asdict(config), "preset": preset},
            items=items,
            run_item=run_item,
            summarize=lambda records: summarize(records, len(items), seed),
        )
