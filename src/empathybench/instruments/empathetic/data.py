"""The released ratings files (specs/empathetic_responding.md §1-2), read at run time through the fetch code."""

import csv
from dataclasses import dataclass
from pathlib import Path

from empathybench.data.fetch import FetchedFile, fetch_pinned
from empathybench.errors import UserError

RATINGS_FILE = "empathetic_responding/welivita_pu_2024_llm_vs_human_ratings.csv"
CHATGPT_STUDY_FILE = "empathetic_responding/welivita_pu_2024_chatgpt_vs_human_ratings.csv"

HUMAN = "human"
# Column suffixes of the released file, with the model each stands for (SOURCE.md).
SOURCE_NAMES: dict[str, str] = {
    "human": "Human (EmpatheticDialogues listener)",
    "chatgpt_empathy": "GPT-4 (empathy-definition prompt)",
    "llama_empathy": "LLaMA-2-70B-Chat",
    "gemini_empathy": "Gemini-1.0-Pro",
    "mixtral_empathy": "Mixtral-8x7B-Instruct",
    "chatgpt": "GPT-4 (standard prompt)",
}
# Model family of each released source, for the judge's self-preference check.
SOURCE_FAMILIES: dict[str, str] = {
    "chatgpt_empathy": "openai",
    "chatgpt": "openai",
    "llama_empathy": "llama",
    "gemini_empathy": "gemini",
    "mixtral_empathy": "mistral",
}

GOOD, OKAY, BAD = 3, 2, 1  # released coding
RATING_LABELS: dict[int, str] = {GOOD: "Good", OKAY: "Okay", BAD: "Bad"}
LABEL_RATINGS: dict[str, int] = {label.lower(): value for value, label in RATING_LABELS.items()}


@dataclass(frozen=True)
class Prompt:
    """One study prompt with each source's reply and its single human rating."""

    dialog_id: str
    emotion: str
    valence: str  # "positive" | "negative", the authors' grouping
    situation: str
    speaker_utterance: str
    replies: dict[str, str]  # source suffix -> reply text
    ratings: dict[str, int]  # source suffix -> 1 Bad / 2 Okay / 3 Good (only sources with a rating)


def sources_of(columns: list[str]) -> list[str]:
    """Column suffixes that have a rating column, human first."""
    found = [c.removeprefix("rating_") for c in columns if c.startswith("rating_")]
    return sorted(found, key=lambda s: (s != HUMAN, found.index(s)))


def read_prompts(path: Path) -> list[Prompt]:
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        columns = list(reader.fieldnames or [])
        required = {"dialog_id", "emotion", "sentiment", "situation", "speaker_uttr"}
        if missing := required - set(columns):
            raise UserError(f"{path} is not a released ratings file: no column(s) {', '.join(sorted(missing))}")
        sources = sources_of(columns)
        if HUMAN not in sources:
            raise UserError(f"{path} has no rating_human column: the human baseline is required")
        prompts = []
        for line, row in enumerate(reader, start=2):
            ratings: dict[str, int] = {}
            for source in sources:
                raw = (row.get(f"rating_{source}") or "").strip()
                if not raw:
                    continue
                value = int(float(raw))
                if value not in RATING_LABELS:
                    raise UserError(f"{path}:{line}: rating_{source} = {raw!r} is not 1, 2 or 3")
                ratings[source] = value
            prompts.append(
                Prompt(
                    dialog_id=row["dialog_id"],
                    emotion=row["emotion"].strip().lower(),
                    valence=row["sentiment"].strip().lower(),
                    situation=row["situation"],
                    speaker_utterance=row["speaker_uttr"],
                    replies={s: row.get(f"response_{s}") or "" for s in sources},
                    ratings=ratings,
                )
            )
    return prompts


def load_released(*, allow_unverified: bool = False) -> tuple[list[Prompt], FetchedFile]:
    fetched = fetch_pinned(__package__, RATINGS_FILE, allow_unverified=allow_unverified)
    return read_prompts(fetched.path), fetched


def one_per_emotion(prompts: list[Prompt]) -> list[Prompt]:
    """The quick preset: the first prompt (file order) of each emotion, so every machine gets the same 32."""
    chosen: dict[str, Prompt] = {}
    for prompt in prompts:
        chosen.setdefault(prompt.emotion, prompt)
    return sorted(chosen.values(), key=lambda p: p.emotion)


def word_count(text: str) -> int:
    return len(text.split())
