"""MindEval's figures, comparability label and ranking test (pure; specs/mindeval.md sections 5 and 6).

- The headline: the mean over conversations of the judge's Overall score (1-6), and the five per-criterion means
  (README: `pd.DataFrame(parsed).mean()`).
- The comparability label, computed from what was sent: each role's model as recorded and each call's sent
  settings (budget, thinking, temperature), beside the published settings (README, run_benchmark.sh): member
  claude-haiku-4-5@20251001 and judge claude-sonnet-4-5@20250929 through litellm 1.74.15 (poetry.lock) with
  max_completion_tokens 16000 and reasoning_effort "high" (litellm sends Anthropic thinking with budget_tokens 4096
  for "high"), temperature unset.
- The ranking test (significance_testing.rank_systems): a one-sided paired t-test between every two runs on their
  shared conversations; runs in descending mean order join the current cluster unless a run in it is better than
  the newcomer at p < 0.05.
"""

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from empathybench.instruments.mindeval.data import N_PROFILES, PAPER_CLINICIAN_VERSION, PAPER_JUDGE_VERSION

PAPER_ROUNDS = 10  # run_benchmark.sh --n_turns 10
PUBLISHED_MEMBER = "claude-haiku-4-5@20251001"
PUBLISHED_JUDGE = "claude-sonnet-4-5@20250929"
PUBLISHED_BUDGET = 16000  # max_completion_tokens
PUBLISHED_THINKING = 4096  # reasoning_effort "high" as litellm maps it for Anthropic
PUBLISHED_EFFORT = "high"
RANKING_P = 0.05  # rank_systems threshold_p_value
# The published models as providers and gateways name them (Anthropic API: dated with "-"; Vertex: with "@";
# gateways: "4.5"), compared on the name's last path segment in lower case.
_MEMBER_NAME = re.compile(r"claude-haiku-4[-.]5(?:[-@]20251001)?")
_JUDGE_NAME = re.compile(r"claude-sonnet-4[-.]5(?:[-@]20250929)?")


def call_settings(call: Mapping[str, Any]) -> dict[str, Any]:
    """What one recorded call sent: its token budget, thinking budget, reasoning effort and temperature. From the
    request as sent (`sent`) where the backend recorded it, else from the requested sampling."""
    sent = call.get("sent")
    sampling = call.get("sampling") or {}
    if not isinstance(sent, Mapping):
        return {"max_tokens": sampling.get("max_tokens"), "temperature": sampling.get("temperature")}
    thinking = sent.get("thinking")
    settings: dict[str, Any] = {
        "max_tokens": sent.get("max_tokens", sent.get("max_completion_tokens")),
        "temperature": sent.get("temperature"),
    }
    if isinstance(thinking, Mapping) and thinking.get("type") == "enabled":
        settings["thinking"] = thinking.get("budget_tokens")
    elif sent.get("reasoning_tokens") is not None:  # inspect's name for a thinking budget
        settings["thinking"] = sent.get("reasoning_tokens")
    if sent.get("reasoning_effort") is not None:
        settings["reasoning_effort"] = sent.get("reasoning_effort")
    return settings


def role_settings(calls: Iterable[Mapping[str, Any]], role: str | None) -> list[dict[str, Any]]:
    """The distinct settings the calls of one role sent (role None: the model under test), in first-seen order."""
    seen: list[dict[str, Any]] = []
    for call in calls:
        if call.get("role") == role:
            settings = call_settings(call)
            if settings not in seen:
                seen.append(settings)
    return seen


def _model_name(identity: Mapping[str, Any]) -> str:
    return str(identity.get("model") or identity.get("provider") or "unknown")


def _is_published(pattern: re.Pattern[str], model: str) -> bool:
    return pattern.fullmatch(model.strip().lower().rsplit("/", 1)[-1]) is not None


def _reasoning(settings: Mapping[str, Any]) -> str:
    if settings.get("thinking"):
        return f"thinking {settings['thinking']}"
    return f"effort {settings.get('reasoning_effort') or 'none'}"


def _setting_differences(what: str, settings: Sequence[Mapping[str, Any]]) -> list[str]:
    """How a role's sent settings differ from the published ones (budget 16000, thinking 4096 or effort high,
    temperature unset or the providers' default 1)."""
    if not settings:
        return [f"{what}: no call recorded"]
    differences: list[str] = []
    budgets = sorted({s.get("max_tokens") for s in settings}, key=str)
    if budgets != [PUBLISHED_BUDGET]:
        differences.append(f"{what} budget {', '.join(map(str, budgets))} tokens (published {PUBLISHED_BUDGET})")
    reasoning = sorted({_reasoning(s) for s in settings})
    if not all(_reasoning(s) in (f"thinking {PUBLISHED_THINKING}", f"effort {PUBLISHED_EFFORT}") for s in settings):
        differences.append(
            f"{what} {', '.join(reasoning)} (published reasoning effort {PUBLISHED_EFFORT}: {PUBLISHED_THINKING} "
            "thinking tokens)"
        )
    temperatures = sorted({s.get("temperature") for s in settings if s.get("temperature") not in (None, 1.0)})
    if temperatures:
        differences.append(f"{what} temperature {', '.join(map(str, temperatures))} (published: provider default)")
    return differences


def comparability(
    *,
    member: Mapping[str, Any],
    judge: Mapping[str, Any],
    member_settings: Sequence[Mapping[str, Any]],
    judge_settings: Sequence[Mapping[str, Any]],
    protocol: Mapping[str, Any],
    n_scored: int,
    why_unscored: Sequence[str] = (),
) -> tuple[bool, str]:
    """(comparable with the published protocol, the label that says so or names every difference).

    `member` / `judge`: the roles' identities as recorded ({"model", "self"}); `*_settings`: what their calls sent
    (role_settings); `protocol`: rounds, clinician_template, judge_template, missing_criterion; `n_scored`: the
    profiles whose conversation was scored; `why_unscored`: why the others were not.
    """
    differences: list[str] = []
    for what, identity, pattern, published in (
        ("member", member, _MEMBER_NAME, PUBLISHED_MEMBER),
        ("judge", judge, _JUDGE_NAME, PUBLISHED_JUDGE),
    ):
        name = _model_name(identity)
        if identity.get("self"):
            role = "simulated" if what == "member" else "judged"
            differences.append(f"self-{role}: the model under test played the {what} ({name})")
        elif not _is_published(pattern, name):
            differences.append(f"{what} {name} (published {published})")
    differences += _setting_differences("member", member_settings)
    differences += _setting_differences("judge", judge_settings)
    rounds = protocol.get("rounds")
    if rounds != PAPER_ROUNDS:
        differences.append(f"{rounds} round{'' if rounds == 1 else 's'} (published {PAPER_ROUNDS})")
    if protocol.get("clinician_template") != PAPER_CLINICIAN_VERSION:
        differences.append(f"clinician template {protocol.get('clinician_template')} (published v0_1)")
    if protocol.get("judge_template") != PAPER_JUDGE_VERSION:
        differences.append(f"judge template {protocol.get('judge_template')} (published v0_1)")
    if protocol.get("missing_criterion") == "strict":
        differences.append("strict parse (upstream scores a missing criterion 3)")
    if n_scored != N_PROFILES:
        why = f": {'; '.join(why_unscored)}" if why_unscored else ""
        differences.append(f"{n_scored} of {N_PROFILES} profiles scored{why}")
    if not differences:
        return True, f"comparable with the published protocol (all {N_PROFILES} profiles scored; published settings)"
    return False, f"not comparable with the published protocol ({'; '.join(differences)})"


# --- the ranking test --------------------------------------------------------------------------------------------


def rank_runs(scores: Mapping[str, Mapping[str, float]], threshold: float = RANKING_P) -> dict[str, Any]:
    """rank_systems on runs: {label: {conversation id: Overall score}} -> the clusters (best first), each run's
    rank, and the one-sided p-value of "row better than column" on the conversations every run has."""
    from scipy.stats import ttest_rel

    labels = list(scores)
    shared = sorted(set.intersection(*(set(s) for s in scores.values()))) if scores else []
    columns = {label: [float(scores[label][item]) for item in shared] for label in labels}
    p_values: dict[str, dict[str, float | None]] = {}
    for first in labels:
        p_values[first] = {}
        for second in labels:
            if first == second or len(shared) < 2:
                p_values[first][second] = None
                continue
            result = ttest_rel(columns[first], columns[second], alternative="greater")
            p = float(result.pvalue)
            p_values[first][second] = p if p == p else None  # nan (identical columns): no difference
    means = {label: sum(columns[label]) / len(shared) if shared else float("nan") for label in labels}
    clusters: list[list[str]] = [[]]
    for label in sorted(labels, key=lambda name: means[name], reverse=True):  # stable: ties keep the given order
        current = clusters[-1]
        if any((p := p_values[member][label]) is not None and p < threshold for member in current):
            clusters.append([label])
        else:
            current.append(label)
    return {
        "n_shared": len(shared),
        "means": {label: round(means[label], 4) if shared else None for label in labels},
        "clusters": clusters,
        "rank": {label: index + 1 for index, cluster in enumerate(clusters) for label in cluster},
        "p_better": p_values,
        "threshold": threshold,
        "test": "one-sided paired t-test (scipy ttest_rel, alternative greater) on the shared conversations' "
        "Overall scores; greedy clusters in descending mean order (significance_testing.rank_systems)",
    }
