"""The pure statistics behind EmotionBench: F-test, Student/Welch choice, paired test, bootstrap."""

import math

import pytest
from scipy import stats as scipy_stats

from empathybench.stats.tests import (
    Describe,
    bootstrap_interval,
    compare_independent,
    compare_paired,
    describe,
    f_test_p,
    marker_for,
)


def test_describe_uses_sample_sd() -> None:
    summary = describe([1.0, 2.0, 3.0, 4.0])
    assert summary.n == 4
    assert summary.mean == 2.5
    assert summary.sd == pytest.approx(math.sqrt(5 / 3))


def test_f_test_is_two_sided_larger_over_smaller() -> None:
    p = f_test_p(2.0, 11, 1.0, 21)
    assert p == pytest.approx(2 * (1 - scipy_stats.f.cdf(4.0, 10, 20)))
    assert f_test_p(1.0, 21, 2.0, 11) == pytest.approx(p)


def test_equal_variances_use_student_and_unequal_use_welch() -> None:
    reference = Describe(50, 30.0, 5.0)
    student = compare_independent(Describe(50, 25.0, 5.2), reference)
    assert student.test == "student"
    assert student.marker == "down"
    assert student.delta == pytest.approx(-5.0)
    welch = compare_independent(Describe(50, 31.0, 15.0), reference)
    assert welch.test == "welch"
    assert welch.marker == "none"


def test_zero_variance_default_still_gives_a_test() -> None:
    comparison = compare_independent(Describe(50, 31.0, 5.8), Describe(50, 10.0, 0.0))
    assert comparison.test == "welch"
    assert comparison.marker == "up"
    assert math.isfinite(comparison.t)


def test_marker_needs_p_at_most_alpha() -> None:
    assert marker_for(3.0, 0.01, 0.01) == "up"
    assert marker_for(-3.0, 0.0101, 0.01) == "none"
    assert marker_for(-3.0, float("nan"), 0.01) == "none"


def test_paired_test_matches_mean_difference() -> None:
    paired = compare_paired([10, 12, 11, 13, 10], [20, 25, 19, 30, 22])
    assert paired.delta == pytest.approx(12.0)
    assert paired.marker == "up"


def test_bootstrap_interval_is_seeded_and_brackets_the_estimate() -> None:
    values = [float(i % 7) for i in range(40)]

    def mean_of(indices: list[int]) -> float:
        return sum(values[i] for i in indices) / len(indices)

    first = bootstrap_interval(len(values), mean_of, resamples=300, seed=3)
    assert first == bootstrap_interval(len(values), mean_of, resamples=300, seed=3)
    assert first[0] < sum(values) / len(values) < first[1]


def test_the_shift_interval_from_situation_sums_equals_joining_the_resampled_runs() -> None:
    """The clustered bootstrap of a shift: situations resampled with all their runs, default runs apart. Computed
    from each situation's sum and run count; here against the plain computation that joins the runs."""
    import random

    import numpy as np

    from empathybench.instruments.emotionbench.bench import _shift_metric
    from empathybench.stats.bootstrap import generator, percentile_interval
    from empathybench.stats.intervals import RESAMPLES

    chance = random.Random(7)

    def runs(count: int) -> list[dict[str, object]]:
        # Some runs went unanswered (answers None): they count in neither the sum nor the number of runs.
        return [
            {"run": i, "answers": None if chance.random() < 0.1 else [1], "PA": chance.uniform(10, 50)}
            for i in range(count)
        ]

    records = [{"item_id": f"s{i}", "factor": "f", "runs": runs(chance.randint(1, 10))} for i in range(60)]
    records += [{"item_id": f"d{i}", "factor": None, "runs": runs(1)} for i in range(30)]
    result = _shift_metric(records, "PA", None, seed=11)

    default = np.asarray(
        [run["PA"] for r in records if r["factor"] is None for run in r["runs"] if run["answers"] is not None]
    )
    situations = [
        np.asarray([run["PA"] for run in r["runs"] if run["answers"] is not None])
        for r in records
        if r["factor"] is not None
    ]
    situations = [values for values in situations if len(values)]
    rng = generator(11)
    draws = []
    for _ in range(RESAMPLES):
        picked = rng.integers(0, len(situations), size=len(situations))
        evoked = np.concatenate([situations[i] for i in picked])
        baseline = default[rng.integers(0, len(default), size=len(default))]
        draws.append(evoked.mean() - baseline.mean())
    low, high = percentile_interval(draws)  # type: ignore[misc]
    assert result["ci95"] == [round(low, 4), round(high, 4)]
    assert result["ci95"][0] < result["value"] < result["ci95"][1]


def test_the_t_and_f_tests_equal_scipy_stats_bit_for_bit() -> None:
    """The summary computes its tests with scipy.special (scipy.stats costs ~0.45 s of CPU to import): the same
    numbers as scipy.stats.ttest_ind_from_stats and stats.f.cdf, to the last bit, over many groups."""
    import random

    from scipy import stats

    from empathybench.stats.tests import t_test_from_stats

    chance = random.Random(3)
    cases = [(10.0, 0.0, 5, 10.0, 0.0, 7), (12.0, 0.0, 5, 10.0, 0.0, 7)]  # zero variances: nan and inf t
    for _ in range(300):
        cases.append(
            (
                chance.uniform(-50, 50),
                chance.choice([1e-8, chance.uniform(0, 20)]),
                chance.randint(2, 500),
                chance.uniform(-50, 50),
                chance.uniform(0, 20),
                chance.randint(2, 500),
            )
        )
    for mean_a, sd_a, n_a, mean_b, sd_b, n_b in cases:
        for equal_var in (True, False):
            expected = stats.ttest_ind_from_stats(mean_a, sd_a, n_a, mean_b, sd_b, n_b, equal_var=equal_var)
            t, p = t_test_from_stats(mean_a, sd_a, n_a, mean_b, sd_b, n_b, equal_var=equal_var)
            assert repr((t, p)) == repr((float(expected.statistic), float(expected.pvalue)))
        if sd_a > 0 and sd_b > 0:
            ratio = max(sd_a, sd_b) ** 2 / min(sd_a, sd_b) ** 2
            dfs = (n_a - 1, n_b - 1) if sd_a >= sd_b else (n_b - 1, n_a - 1)
            assert f_test_p(sd_a, n_a, sd_b, n_b) == float(2 * (1 - stats.f.cdf(ratio, *dfs)))
