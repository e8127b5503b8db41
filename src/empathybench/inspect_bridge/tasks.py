"""The inspect_ai entry point (`[project.entry-points.inspect_ai] empathybench`): one task per installed instrument.

inspect imports this module when asked for `empathybench/<name>`; it registers a task for every name in the
`empathybench.instruments` entry points (built-ins and plugins alike) without importing any instrument: an instrument
is loaded when its task is created.

    inspect eval empathybench/eqbench --model openai/gpt-4o-mini -T preset=paper -T language=de
"""

from collections.abc import Callable
from typing import Any

from inspect_ai import Task, task

from empathybench.inspect_bridge.task import instrument_task
from empathybench.instruments.registry import names

# -T parameters every task takes; any other -T NAME=VALUE is the instrument's option NAME (`--option <name>.NAME`).
RUN_PARAMETERS = ("preset", "limit", "seed", "allow_unverified")


def _task_of(name: str) -> Callable[..., Task]:
    def empathybench_task(
        preset: str = "quick",
        limit: int | None = None,
        seed: int = 0,
        allow_unverified: bool = False,
        **options: Any,
    ) -> Task:
        options.pop("model", None)  # inspect may pass its own `model` argument to a task that takes **kwargs
        return instrument_task(
            name, preset=preset, limit=limit, seed=seed, allow_unverified=allow_unverified, options=options
        )

    empathybench_task.__name__ = empathybench_task.__qualname__ = name.replace("-", "_")
    empathybench_task.__doc__ = (
        f"EmpathyBench's instrument {name}: -T preset=quick|paper|full|demo, -T limit=N, -T seed=N, "
        "and the instrument's own options as -T NAME=VALUE (`empathybench list` shows them)."
    )
    return task(name=name)(empathybench_task)


TASKS: dict[str, Callable[..., Task]] = {name: _task_of(name) for name in names()}
globals().update({task_fn.__name__: task_fn for task_fn in TASKS.values()})
