"""Python's cyclic garbage collector, set for the model calls of a run (issue 13: harness CPU per request).

A run allocates a few dicts and strings per call and keeps its records, while everything loaded before the calls
(the SDKs, numpy, pydantic, the items) lives until the end. With the default settings the collector scanned that
whole start-up heap again and again (full collections) and ran a young collection every 700 allocations: ~0.06 ms
of CPU per request of the 4,330-call EmotionBench run (bench/bench_emotionbench_full.py). During the calls the
start-up heap is frozen (left out of every collection) and young collections run less often; both are undone when
the calls end, so a program that calls `empathybench.run` keeps its own settings.
"""

import contextlib
import gc
from collections.abc import Iterator

# Allocations between two young collections during the calls (Python's default is 700).
YOUNG_THRESHOLD = 20_000


@contextlib.contextmanager
def collector_for_calls() -> Iterator[None]:
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()
