"""The published judge eras of EQ-Bench 3: which leaderboard a judge's numbers can sit beside (spec §6.2-6.3)."""

# Which published numbers a run's rubric score can sit beside: rubric scales differ across judges (spec §6.2-6.3).
JUDGE_ERAS: tuple[tuple[tuple[str, ...], str], ...] = (
    (
        ("claude-3.7-sonnet", "claude-3-7-sonnet"),
        "Sonnet-3.7 judge era: the leaderboard @ e44d5e7 and the April 2025 Elo file",
    ),
    (("claude-opus-4-6", "claude-opus-4.6", "opus-4-6", "opus-4.6"), "Opus-4.6 judge era: the leaderboard @ 04a8066"),
)


def judge_era(judge_model: str) -> str:
    """The published judge era a run's rubric numbers are comparable with (none for any other judge)."""
    lowered = judge_model.lower()
    for markers, era in JUDGE_ERAS:
        if any(marker in lowered for marker in markers):
            return era
    return f"no published era: comparable only with runs judged by {judge_model or 'the same judge'}"
