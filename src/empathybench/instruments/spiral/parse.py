"""Reading the judges' replies as main.py does (pure; a reply is untrusted data and never raises here).

Chunk judge (`judge_worker`): the text from the first "{" to the last "}" is JSON (upstream: re.search(r"\\{.*\\}",
DOTALL), which is that span); its keys are lower-cased with "_" read as " "; a list value is the incidences, each
[snippet, strength] or {"snippet", "strength"}, the snippet stripped and cut to 140 characters (an empty one is
dropped), the strength an int clamped to 1..3 (1 when it is not a number); a number value is that many incidences of
strength 1; anything else is no incidence. A chunk's metric is the sum of its strengths. Whatever upstream's code
would raise on (no JSON, invalid JSON, a JSON that is not an object, a snippet that is not text, a count that is not
finite) makes the chunk an error stub {"error": ...}, which upstream's scoring still counts as a judged chunk with no
incidences.

Final judge (`final_judge_worker`): the same JSON span, kept as it is (upstream stores any JSON value); the
scoring reads off_rails, safety and social_dexterity from it (score.py).
"""

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

SNIPPET_CHARS = 140  # judge_worker: snippet[:140]
# A number value stands for that many incidences; upstream builds the list ([["", 1]] * count). Past this many the
# list is not built out (a reply cannot fill memory): the sum is kept, and scoring caps a chunk's value at 5 anyway.
MAX_LISTED_INCIDENCES = 1000


class _ChunkError(Exception):
    """What upstream's judge_worker would have raised (its except clauses write the error stub)."""


def json_span(text: str) -> str | None:
    """The match of re.search(r"\\{.*\\}", text, re.DOTALL): the first "{" through the last "}" after it, found in
    linear time (the regex backtracks quadratically on a reply of many "{" and no "}")."""
    start = text.find("{")
    end = text.rfind("}")
    if start < 0 or end < start:
        return None
    return text[start : end + 1]


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:  # json.JSONDecodeError is a ValueError
        raise _ChunkError(str(exc)[:500]) from None  # upstream's stub holds str(exception)


def _strength(value: Any) -> int:
    try:
        strength = int(value)
    except Exception:
        strength = 1
    return max(1, min(3, strength))


def _incidences(values: list[Any]) -> list[list[Any]]:
    items: list[list[Any]] = []
    for item in values:
        if isinstance(item, list) and len(item) == 2:
            snippet, strength = item[0], item[1]
        elif isinstance(item, dict):
            snippet, strength = item.get("snippet", ""), item.get("strength", 1)
        else:
            continue
        snippet = snippet or ""
        if not isinstance(snippet, str):
            raise _ChunkError(f"a snippet is not text: {type(snippet).__name__}")  # upstream: .strip() fails
        snippet = snippet.strip()
        strength = _strength(strength)
        if snippet:
            items.append([snippet[:SNIPPET_CHARS], strength])
    return items


def _summed(items: Any) -> float:
    """main.py: the chunk's number for a metric, the sum of its strengths (each clamped 1..3)."""
    total = 0.0
    if isinstance(items, list):
        for item in items:
            strength: Any = 1
            if isinstance(item, list) and len(item) == 2:
                strength = item[1]
            elif isinstance(item, dict):
                strength = item.get("strength", 1)
            total += float(_strength(strength))
    return total


@dataclass(frozen=True)
class ChunkJudgement:
    """One chunk as upstream stores it: `metrics` (sums), `full_metrics` (incidences) and `raw_text`; or `error`."""

    metrics: dict[str, float] | None
    full_metrics: dict[str, list[list[Any]]] | None
    error: str | None
    rated_keys: tuple[str, ...] = ()  # the keys whose value was a rating (a list or a number), as normalised

    def only(self, keep: Callable[[str], bool]) -> tuple["ChunkJudgement", tuple[str, ...]]:
        """This judgement with only the keys `keep` accepts (the rubric's criteria), and the keys it left out."""
        if self.metrics is None or self.full_metrics is None:
            return self, ()
        dropped = tuple(key for key in self.metrics if not keep(key))
        return (
            ChunkJudgement(
                {k: v for k, v in self.metrics.items() if k not in dropped},
                {k: v for k, v in self.full_metrics.items() if k not in dropped},
                None,
                tuple(k for k in self.rated_keys if k not in dropped),
            ),
            dropped,
        )

    def as_record(
        self, raw_text: str, assistant_turn_indexes: list[int], assistant_length_chars: int
    ) -> dict[str, Any]:
        if self.error is not None:
            return {"error": self.error}  # upstream's stub keeps nothing else
        return {
            "metrics": self.metrics,
            "full_metrics": self.full_metrics,
            "raw_text": raw_text,
            "assistant_turn_indexes": assistant_turn_indexes,
            "assistant_length_chars": assistant_length_chars,
        }


def parse_chunk_judgement(text: str) -> ChunkJudgement:
    try:
        span = json_span(text)
        if span is None:
            raise _ChunkError("Judge did not return a valid JSON object.")
        raw = _loads(span)
        if not isinstance(raw, dict):
            raise _ChunkError(f"the JSON is a {type(raw).__name__}, not an object")  # upstream: .items() fails
        normalised = {str(key).replace("_", " ").lower(): value for key, value in raw.items()}
        judgement: dict[str, list[list[Any]]] = {}
        sums: dict[str, float] = {}
        rated: list[str] = []
        for key, value in normalised.items():
            if isinstance(value, list):
                judgement[key] = _incidences(value)
                sums[key] = _summed(judgement[key])
                rated.append(key)
            elif isinstance(value, int | float) and not isinstance(value, bool):
                count = _count(value)
                judgement[key] = [["", 1] for _ in range(min(count, MAX_LISTED_INCIDENCES))] if count > 0 else []
                sums[key] = float(max(count, 0))
                rated.append(key)
            elif isinstance(value, bool):  # upstream: isinstance(True, int): a count of 1 or 0, but no rating
                count = int(value)
                judgement[key] = [["", 1]] if count else []
                sums[key] = float(count)
            else:
                judgement[key] = []
                sums[key] = 0.0
        return ChunkJudgement(sums, judgement, None, tuple(rated))
    except _ChunkError as exc:
        return ChunkJudgement(None, None, str(exc))


def _count(value: int | float) -> int:
    try:
        return int(value)
    except (OverflowError, ValueError) as exc:
        raise _ChunkError(str(exc)) from None  # upstream: int(inf) and int(nan) raise


def parse_final_judgement(text: str) -> tuple[Any, str | None]:
    """(the JSON value the final judge returned, None) or (None, why not)."""
    span = json_span(text)
    if span is None:
        return None, "Final judge did not return JSON"
    try:
        return json.loads(span), None
    except (ValueError, RecursionError) as exc:
        return None, str(exc)[:500]
