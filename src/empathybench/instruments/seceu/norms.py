"""SECEU human norms: published numbers, cited (specs/seceu.md §2 and §4).

Source: Wang, Li, Yin, Wu & Liu (2023), "Emotional intelligence of Large Language Models", Journal of Pacific
Rim Psychology 17, doi 10.1177/18344909231213958 (preprint arXiv 2307.09042); SECEU_norm.docx in the authors'
repository emotional-intelligence/emotional-intelligence.github.io @ 22e029e.

The 40x4 standard scores and the 40-value human pattern template are read at run time from SECEU_norm.docx
(`instruments/seceu/data.py`); the scalars below are checked against that file when it is loaded.
"""

# Norm sample: N = 541 Chinese university students (paper, Methods).
NORM_SAMPLE_SIZE = 541

# Population mean and SD of the SECEU score (mean Euclidean distance), SECEU_norm.docx: "The population mean (M)
# is 2.79 and the standard deviation (SD) is 0.822."
SECEU_MEAN = 2.79
SECEU_SD = 0.822
SECEU_RANGE = (1.40, 6.29)  # paper, Results

# EQ = 15 x (M - SECEU) / SD + 100 (paper, Methods); bands (paper, Results): expert > 115, normal 85-115, poor < 85.
EQ_SCALE_MEAN = 100.0
EQ_SCALE_SD = 15.0
EQ_EXPERT_ABOVE = 115.0
EQ_POOR_BELOW = 85.0

# Pattern similarity: human-to-human r (leave-one-out template), M = 0.199, SD = 0.166 (paper, Results);
# SECEU_norm.docx: similarity "less than one SD below the population (<0.033)" means "a qualitatively different
# mechanism from humans".
PATTERN_R_MEAN = 0.199
PATTERN_R_SD = 0.166
PATTERN_R_THRESHOLD = 0.033

# "No response" rule (paper, Methods): a model FAILED when most items got no meaningful response, e.g. LLaMA 40/40,
# Fastchat 31/40, text-davinci-001 26/40 under the direct prompt; Alpaca and ChatGLM passed with 1/40 each.
FAILED_NO_RESPONSE_FRACTION = 0.5

# Every (SECEU score, % of the 541 humans with a larger distance) pair printed in Table 1, Table S1 and Table S2
# of the preprint. The raw human data are not public, so these anchors are the only empirical percentiles;
# where a score is printed twice with different %, both are kept and averaged on use.
EQ_PERCENTILE_ANCHORS: tuple[tuple[float, float], ...] = (
    (1.89, 89),
    (2.01, 83),
    (2.40, 64),
    (2.41, 64),
    (2.45, 61),
    (2.46, 61),
    (2.50, 59),
    (2.53, 57),
    (2.56, 55),
    (2.56, 56),
    (2.63, 52),
    (2.70, 50),
    (2.78, 43),
    (2.78, 44),
    (2.82, 42),
    (2.89, 38),
    (3.08, 30),
    (3.12, 28),
    (3.30, 23),
    (3.50, 18),
    (3.72, 13),
    (3.76, 12),
)

# Every (pattern r, % of humans with a lower r) pair printed in Table 1, S1 and S2 of the preprint.
PATTERN_R_PERCENTILE_ANCHORS: tuple[tuple[float, float], ...] = (
    (-0.26, 1),
    (-0.12, 4),
    (-0.11, 4),
    (-0.05, 7),
    (-0.04, 8),
    (-0.02, 10),
    (0.00, 11),
    (0.02, 14),
    (0.03, 15),
    (0.04, 17),
    (0.09, 24),
    (0.11, 28),
    (0.11, 29),
    (0.12, 31),
    (0.18, 45),
    (0.20, 47),
    (0.24, 59),
    (0.26, 62),
    (0.27, 66),
    (0.28, 67),
    (0.29, 70),
    (0.31, 73),
    (0.33, 79),
    (0.41, 91),
    (0.43, 93),
)
