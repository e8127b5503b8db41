"""EQ-Bench v2 reference points: published scores of reference models (there is no human norm).

Source: the `published_benchmark_score` of the official EQ-Bench v2 result files (upstream S3 results, Jan-Feb 2024),
as listed in shared/datasets/eqbench/derived/results_v2_recomputed_summary.csv (specs/eqbench.md §5.3, §5.4).
Scores are the pipeline score, English, revise prompt, 0-100.
"""

PUBLISHED_V2_SCORES: tuple[tuple[str, float], ...] = (
    ("gpt-4-0125-preview", 83.87),
    ("miqu-1-70b", 82.91),
    ("gpt-3.5-turbo-0613", 69.35),
    ("OpenHermes-2.5-Mistral-7B", 66.89),
    ("zephyr-7b-alpha", 56.82),
    ("Nous-Capybara-7B-V1", 34.37),
    ("koala-7B", 21.54),
)

# The leaderboard's "random-baseline" is 0.00; uniform random integer answers give about +1.44 (specs/eqbench.md §5.4).
RANDOM_BASELINE = 0.0
