"""EQ-Bench 3 (EQ-bench/eqbench3 @ 3c21bcc): judged multi-turn role-play and analysis (specs/eqbench3.md).

One self-contained folder: pins and parsers (`data`), the messages each turn sends (`conversation`), the rubric
judge and its aggregation (`rubric`), the pairwise judge and TrueSkill Elo (`pairwise`), rescoring of upstream
files (`rescore`).
"""
