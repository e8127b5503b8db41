"""The published leaderboard's settings, and whether a run's figures can stand beside it (specs/spiral.md).

The canonical leaderboard (eqbench.com/spiral-bench.html) was made with the user agent Kimi-K2 (README:
`--user-model moonshotai/kimi-k2`; every released conversation records it as `user_model`) and the judge GPT-5,
snapshot gpt-5-2025-08-07 (README: `--judge-model "gpt-5-2025-08-07"`), 30 openings, 20 turns, chunk size 1.
Both the user agent and the judge move the figures, so a run with another simulator or judge is labelled.
"""

import re
from collections.abc import Mapping
from typing import Any

PUBLISHED_SIMULATOR = "moonshotai/kimi-k2"
PUBLISHED_JUDGE = "gpt-5-2025-08-07"
PUBLISHED_TURNS = 20
PUBLISHED_OPENINGS = 30
PUBLISHED_CHUNK_SIZE = 1
PUBLISHED_INJECTION_EVERY_N = 5  # main.py's default, which the README's command keeps

# Kimi-K2 as the providers name the July 2025 model the leaderboard used (OpenRouter moonshotai/kimi-k2, Moonshot
# kimi-k2-0711-preview, the open weights Kimi-K2-Instruct); the later kimi-k2-0905 and kimi-k2-thinking are other
# models. The judge only as its dated snapshot: the "gpt-5" alias may move.
_SIMULATOR_NAME = re.compile(r"kimi-k2(-instruct|-0711(-preview)?)?")
_JUDGE_NAME = re.compile(re.escape(PUBLISHED_JUDGE))


def _last_segment(model: str) -> str:
    return model.strip().lower().rsplit("/", 1)[-1]


def is_published_simulator(model: str) -> bool:
    return _SIMULATOR_NAME.fullmatch(_last_segment(model)) is not None


def is_published_judge(model: str) -> bool:
    return _JUDGE_NAME.fullmatch(_last_segment(model)) is not None


def comparability(
    simulator: str, judge: str, *, simulator_self: bool = False, judge_self: bool = False, protocol: Mapping[str, Any]
) -> tuple[bool, str]:
    """(comparable with the published leaderboard, the line that says so). `protocol` holds the run's num_turns,
    chunk_size, injection_every_n and n_openings."""
    simulator_label = f"{simulator or 'unknown'} (self-simulated)" if simulator_self else (simulator or "unknown")
    judge_label = f"{judge or 'unknown'} (self-judged)" if judge_self else (judge or "unknown")
    roles_match = (
        not simulator_self and not judge_self and is_published_simulator(simulator) and is_published_judge(judge)
    )
    differs = []
    if protocol.get("num_turns") != PUBLISHED_TURNS:
        differs.append(f"{protocol.get('num_turns')} turns")
    if protocol.get("chunk_size") != PUBLISHED_CHUNK_SIZE:
        differs.append(f"chunk size {protocol.get('chunk_size')}")
    if protocol.get("injection_every_n") != PUBLISHED_INJECTION_EVERY_N:
        differs.append(f"injection every {protocol.get('injection_every_n')}")
    if protocol.get("n_openings") != PUBLISHED_OPENINGS:
        differs.append(f"{protocol.get('n_openings')} of {PUBLISHED_OPENINGS} openings")
    settings = "; ".join([f"simulator {simulator_label}, judge {judge_label}", *differs])
    if roles_match and not differs:
        return True, f"comparable with the published leaderboard ({settings})"
    return False, f"not comparable with the published leaderboard ({settings})"
