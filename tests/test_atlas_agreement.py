"""Agreement between instruments: no rho under 5 models, each instrument oriented by its direction (none without
one), and several figures of one key averaged on both sides alike (an instrument's and the capability table's)."""

from typing import Any

import pytest

from empathybench.atlas import analysis
from empathybench.atlas.analysis import agreement


@pytest.fixture(autouse=True)
def _quick_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about rho and who enters it; the bootstrap (2000 resamples) is tested in test_atlas_views."""
    monkeypatch.setattr(analysis, "spearman_interval", lambda x, y, seed=0: (0.5, 1.0))


def _entry(instrument: str, model: str, family: str, value: float) -> dict[str, Any]:
    return {
        "instrument": instrument,
        "model": model,
        "model_id": model,
        "family": family,
        "status": "recomputed",
        "primary": True,
        "value": value,
        "published": None,
    }


def _atlas(directions: dict[str, bool | None], values: dict[str, list[float]], **extra: Any) -> dict[str, Any]:
    instruments = {name: {"title": name, "metric": "m", "higher_is_better": h} for name, h in directions.items()}
    for name, more in extra.items():
        instruments[name].update(more)
    entries = [_entry(name, f"m{i}", f"f{i}", value) for name, row in values.items() for i, value in enumerate(row)]
    return {"instruments": instruments, "entries": entries}


def test_a_lower_is_better_instrument_is_oriented_before_ranking() -> None:
    # the same order of quality: "up" scores higher for better models, "down" lower (e.g. an error rate)
    atlas = _atlas({"up": True, "down": False}, {"up": [1, 2, 3, 4, 5, 6], "down": [60, 50, 40, 30, 20, 10]})
    (pair,) = agreement(atlas)["pairs"]
    assert pair["rho"] == 1.0 and pair["verdict"] == "agree" and pair["left_out"] is None


def test_an_instrument_without_a_direction_has_no_rho_and_says_why() -> None:
    atlas = _atlas({"up": True, "shift": None}, {"up": [1, 2, 3, 4, 5, 6], "shift": [6, 5, 4, 3, 2, 1]})
    (pair,) = agreement(atlas)["pairs"]
    assert pair["rho"] is None and pair["verdict"] is None and "shift has no direction" in pair["left_out"]


def test_no_rho_under_five_models() -> None:
    atlas = _atlas({"a": True, "b": True}, {"a": [1, 2, 3, 4], "b": [1, 2, 3, 4]})
    (pair,) = agreement(atlas)["pairs"]
    assert pair["n"] == 4 and pair["rho"] is None and pair["ci95"] is None and pair["verdict"] is None


def test_both_sides_of_a_family_average_their_rows() -> None:
    # five families; family f0 has two models on both sides: the instrument's and the capability's rows averaged
    values = {"a": [10, 20, 30, 40, 50]}
    capability_rows = [
        {"model": f"m{i}", "model_id": f"m{i}", "family": f"f{i}", "value": float(v), "source": "s"}
        for i, v in enumerate([1, 2, 3, 4, 5])
    ]
    # a second model of family f0: high on both sides, so its family's mean moves above f1's on both (rank 2)
    capability_rows.append({"model": "x", "model_id": "x", "family": "f0", "value": 3.4, "source": "s"})
    atlas = _atlas({"a": True}, values, a={"capability": {"label": "Arena", "models": capability_rows}})
    atlas["entries"].append(_entry("a", "x", "f0", 34.0))
    (row,) = agreement(atlas, family=True)["capability"]
    # f0: instrument (10 + 34) / 2 = 22, capability (1 + 3.4) / 2 = 2.2: the same order as the others, rho 1. Taking
    # the capability's first row (1.0) instead would rank f0 below f1 on one side only.
    assert row["n"] == 5 and row["rho"] == 1.0
