"""The published judge eras of EQ-Bench 3: which leaderboard a judge's numbers can sit beside (spec §6.2-6.3)."""

# Which published numbers a run's rubric score can sit beside: rubric scales differ across judges (spec §6.2-6.3).
# (era id, judge model markers, description)
JUDGE_ERAS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    (
        "sonnet-3.7",
        ("claude-3.7-sonnet", "claude-3-7-sonnet"),
        "Sonnet-3.7 judge era: the leaderboard @ e44d5e7 and the April 2025 Elo file",
    ),
    (
        "opus-4.6",
        ("claude-opus-4-6", "claude-opus-4.6", "opus-4-6", "opus-4.6"),
        "Opus-4.6 judge era: the leaderboard @ 04a8066",
    ),
)

# Published rubric scores (0-100) of the same models in each era (EQ-bench/EQ-bench-site eqbench3.js, spec §6.3):
# rubric numbers sit beside these only when the judge is of the same era.
PUBLISHED_RUBRIC: dict[str, tuple[str, tuple[tuple[str, float], ...]]] = {
    "sonnet-3.7": (
        "EQ-bench/EQ-bench-site eqbench3.js @ e44d5e7 (Claude 3.7 Sonnet judge)",
        (
            ("o3", 88.0),
            ("claude-3-7-sonnet-20250219", 78.8),
            ("Qwen/Qwen3-8B", 74.7),
            ("openai/gpt-oss-20b", 74.3),
            ("google/gemma-3-4b-it", 72.4),
            ("Qwen/Qwen3-30B-A3B", 66.0),
            ("google/gemma-2-9b-it", 45.9),
            ("meta-llama/llama-3.2-1b-instruct", 21.9),
        ),
    ),
    "opus-4.6": (
        "EQ-bench/EQ-bench-site eqbench3.js @ 04a8066 (later era; judge presumably Claude Opus 4.6, not recorded)",
        (
            ("o3", 74.7),
            ("claude-3-7-sonnet-20250219", 61.9),
            ("google/gemma-3-4b-it", 42.4),
            ("Qwen/Qwen3-8B", 36.8),
            ("google/gemma-2-9b-it", 25.4),
            ("meta-llama/llama-3.2-1b-instruct", 11.0),
        ),
    ),
}


def era_id(judge_model: str) -> str | None:
    """The published judge era of a judge model (None: no published era)."""
    lowered = judge_model.lower()
    for era, markers, _ in JUDGE_ERAS:
        if any(marker in lowered for marker in markers):
            return era
    return None


def published_reference(judge_model: str) -> dict[str, object] | None:
    """The published rubric rows of the judge's era, as a metric's `published_models` reference (None: no era)."""
    era = era_id(judge_model)
    if era is None:
        return None
    source, rows = PUBLISHED_RUBRIC[era]
    return {
        "kind": "published_models",
        "label": f"published EQ-Bench 3 rubric scores, {era} judge era",
        "models": [{"label": name, "value": value} for name, value in rows],
        "source": source,
    }


def judge_era(judge_model: str) -> str:
    """The published judge era a run's rubric numbers are comparable with (none for any other judge)."""
    era = era_id(judge_model)
    if era is None:
        return f"no published era: comparable only with runs judged by {judge_model or 'the same judge'}"
    return next(description for known, _, description in JUDGE_ERAS if known == era)
