"""The human reference (spec §8): crowd.xlsx, one PANAS before and one after imagining a situation, per person."""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from empathybench.data.fetch import fetch_pinned
from empathybench.instruments.emotionbench.data import CROWD_KEY, EMOTIONS
from empathybench.instruments.emotionbench.stats import ALPHA, _factor_sort_key, _round
from empathybench.stats.tests import compare_paired, describe

PA_ITEMS = (1, 3, 5, 9, 10, 12, 14, 16, 17, 19)
NA_ITEMS = (2, 4, 6, 7, 8, 11, 13, 15, 18, 20)
_EMOTION_SPELLING = {"Angry": "Anger", "Jealous": "Jealousy"}
_LABEL = re.compile(r"^(?P<emotion>[A-Za-z]+)_F(?P<factor>\d+)S(?P<scenario>\d+)$")
# Rows of the Raw sheet (0-based): row 0 = labels, rows 6-25 = PANAS before, rows 26-45 = PANAS after.
_LABEL_ROW, _DEFAULT_FIRST_ROW, _EVOKED_FIRST_ROW, _FIRST_RESPONDENT_COLUMN = 0, 6, 26, 2


@dataclass(frozen=True)
class HumanResponse:
    factor_key: str
    scenario_index: int
    default_answers: tuple[int, ...]  # PANAS items 1..20
    evoked_answers: tuple[int, ...]

    @property
    def emotion(self) -> str:
        return self.factor_key.rsplit("-", 1)[0]

    @staticmethod
    def _affect(answers: tuple[int, ...], items: tuple[int, ...]) -> int:
        return sum(answers[i - 1] for i in items)

    @property
    def default_pa(self) -> int:
        return self._affect(self.default_answers, PA_ITEMS)

    @property
    def default_na(self) -> int:
        return self._affect(self.default_answers, NA_ITEMS)

    @property
    def evoked_pa(self) -> int:
        return self._affect(self.evoked_answers, PA_ITEMS)

    @property
    def evoked_na(self) -> int:
        return self._affect(self.evoked_answers, NA_ITEMS)


def read_crowd_workbook(path: Path) -> list[HumanResponse]:
    from openpyxl import load_workbook

    workbook = load_workbook(path, read_only=True, data_only=True)
    try:
        rows = list(workbook["Raw"].iter_rows(values_only=True))
    finally:
        workbook.close()
    responses = []
    for column in range(_FIRST_RESPONDENT_COLUMN, len(rows[_LABEL_ROW])):
        label = rows[_LABEL_ROW][column]
        match = _LABEL.match(str(label or ""))
        if not match:
            continue
        emotion = _EMOTION_SPELLING.get(match["emotion"], match["emotion"])
        before = tuple(int(rows[_DEFAULT_FIRST_ROW + i][column]) for i in range(20))
        after = tuple(int(rows[_EVOKED_FIRST_ROW + i][column]) for i in range(20))
        # F and S are 1-based in the workbook; S1..S5 are taken as scenario-0..4 in the tested order.
        factor_key = f"{emotion}-{int(match['factor']) - 1}"
        responses.append(HumanResponse(factor_key, int(match["scenario"]) - 1, before, after))
    return responses


def load_crowd(*, allow_unverified: bool = False) -> list[HumanResponse]:
    return read_crowd_workbook(fetch_pinned(__package__, CROWD_KEY, allow_unverified=allow_unverified).path)


def _group_row(level: str, emotion: str | None, factor: str | None, group: Sequence[HumanResponse]) -> dict[str, Any]:
    row: dict[str, Any] = {"level": level, "emotion": emotion, "factor": factor, "n": len(group)}
    for affect in ("PA", "NA"):
        before = [getattr(r, f"default_{affect.lower()}") for r in group]
        after = [getattr(r, f"evoked_{affect.lower()}") for r in group]
        before_stats, after_stats = describe(before), describe(after)
        row[f"default_{affect}_mean"] = _round(before_stats.mean)
        row[f"default_{affect}_sd"] = _round(before_stats.sd)
        row[f"{affect}_mean"] = _round(after_stats.mean)
        row[f"{affect}_sd"] = _round(after_stats.sd)
        paired = compare_paired(before, after, alpha=ALPHA)
        row[f"{affect}_delta"] = _round(paired.delta)
        row[f"{affect}_t"] = _round(paired.t)
        row[f"{affect}_p"] = _round(paired.p, 6)
        row[f"{affect}_marker"] = paired.marker
    return row


def human_table(responses: Sequence[HumanResponse]) -> list[dict[str, Any]]:
    """Per factor, emotion and overall: before/after PA and NA, paired t-test at alpha 0.01 (spec §8.3)."""
    rows = []
    factor_keys = sorted({r.factor_key for r in responses}, key=_factor_sort_key)
    for emotion in EMOTIONS:
        for factor_key in [k for k in factor_keys if k.rsplit("-", 1)[0] == emotion]:
            rows.append(_group_row("factor", emotion, factor_key, [r for r in responses if r.factor_key == factor_key]))
        group = [r for r in responses if r.emotion == emotion]
        if group:
            rows.append(_group_row("emotion", emotion, None, group))
    rows.append(_group_row("overall", None, None, list(responses)))
    return rows


def alignment(
    model_rows: Sequence[dict[str, Any]],
    human_rows: Sequence[dict[str, Any]],
    *,
    resamples: int = 2000,
    seed: int = 0,
) -> dict[str, Any]:
    """Model delta beside human delta per factor; sign agreement and Pearson r across factors, bootstrap 95% CIs.

    A descriptive comparison only: the paper compares model and people by direction and size, with no test.
    """
    from empathybench.stats.tests import bootstrap_interval, pearson

    human = {r["factor"]: r for r in human_rows if r["level"] == "factor"}
    model = {r["factor"]: r for r in model_rows if r["level"] == "factor"}
    shared = [k for k in sorted(human, key=_factor_sort_key) if k in model]
    result: dict[str, Any] = {"n_factors": len(shared), "factors": []}
    for key in shared:
        result["factors"].append(
            {
                "factor": key,
                **{f"model_{a}_delta": model[key][f"{a}_delta"] for a in ("PA", "NA")},
                **{f"human_{a}_delta": human[key][f"{a}_delta"] for a in ("PA", "NA")},
            }
        )
    for affect in ("PA", "NA"):
        pairs = [
            (float(model[k][f"{affect}_delta"]), float(human[k][f"{affect}_delta"]))
            for k in shared
            if model[k][f"{affect}_delta"] is not None
        ]

        def agreement(indices: list[int], pairs: list[tuple[float, float]] = pairs) -> float:
            if not indices:
                return float("nan")
            return sum(1 for i in indices if (pairs[i][0] > 0) == (pairs[i][1] > 0)) / len(indices)

        def correlation(indices: list[int], pairs: list[tuple[float, float]] = pairs) -> float:
            return pearson([pairs[i][0] for i in indices], [pairs[i][1] for i in indices])

        everything = list(range(len(pairs)))
        result[affect] = {
            "sign_agreement": _round(agreement(everything)),
            "sign_agreement_ci95": [
                _round(v) for v in bootstrap_interval(len(pairs), agreement, resamples=resamples, seed=seed)
            ]
            if pairs
            else None,
            "pearson_r": _round(correlation(everything)),
            "pearson_r_ci95": [
                _round(v) for v in bootstrap_interval(len(pairs), correlation, resamples=resamples, seed=seed)
            ]
            if pairs
            else None,
        }
    return result
