"""Live progress: done/total, calls in flight, retries, tokens, ETA."""

import time
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from empathybench.engine.engine import RunStats


class RunProgress:
    """A rich progress bar on a terminal; a few plain lines elsewhere (CI logs, pipes)."""

    def __init__(self, console: Console, stats: RunStats, *, enabled: bool = True) -> None:
        self.console = console
        self.stats = stats
        self.enabled = enabled
        self.live = enabled and console.is_terminal
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        # The first plain line comes after 10 s of work, so a run that fails at once prints only its error.
        self._last_plain = self._started = time.monotonic()
        self._done_at_start = stats.items_done  # items finished by an earlier run of a resumed directory

    def __enter__(self) -> "RunProgress":
        if self.live:
            self._progress = Progress(
                TextColumn("{task.description}", style="bold", markup=False),  # names, printed literally
                BarColumn(),
                TextColumn("{task.completed}/{task.total}"),
                TextColumn("{task.fields[in_flight]}", style="cyan"),
                TextColumn("[yellow]{task.fields[retries]} retries"),
                TextColumn("[magenta]{task.fields[tokens]} tokens"),
                TextColumn("{task.fields[cached]} cached"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=self.console,
                refresh_per_second=4,
                transient=False,
            )
            self._progress.start()
            self._task = self._progress.add_task("run", total=self.stats.items_total, **self._fields())
        return self

    def _fields(self) -> dict[str, Any]:
        s = self.stats
        return {
            "in_flight": s.batch_state or f"{s.in_flight} in flight (limit {self.limit_text()})",
            "retries": s.retries,
            "tokens": s.prompt_tokens + s.completion_tokens,
            "cached": s.cache_hits,
        }

    def set_description(self, text: str) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, description=text)

    def update(self) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, completed=self.stats.items_done, **self._fields())
        elif self.enabled:
            now = time.monotonic()
            finished = self.stats.items_done == self.stats.items_total
            if now - self._last_plain >= 10 or finished:
                self._last_plain = now
                s = self.stats
                self.console.print(
                    f"  {s.items_done}/{s.items_total} items, "
                    f"{s.batch_state or f'{s.in_flight} in flight (limit {self.limit_text()})'}, "
                    f"{s.retries} retries, "
                    f"{s.prompt_tokens + s.completion_tokens} tokens, {s.cache_hits} cached, "
                    f"{_duration(now - self._started)} elapsed, ETA {self.eta_text(now)}",
                    markup=False,
                    highlight=False,
                )

    def limit_text(self) -> str:
        """The adaptive concurrency limit(s): "9", or "9, judge 16" with a judge model."""
        limits = self.stats.concurrency_limits
        return (
            ", ".join(f"{label} {limit}" if label != "model" else str(limit) for label, limit in limits.items()) or "-"
        )

    def eta_text(self, now: float) -> str:
        """Time left at the pace of the items finished so far in this process ("unknown" before the first)."""
        s = self.stats
        finished_here = s.items_done - self._done_at_start
        if s.items_done >= s.items_total:
            return "0s"
        if finished_here <= 0:
            return "unknown"
        return _duration((now - self._started) / finished_here * (s.items_total - s.items_done))

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self.update()
            self._progress.stop()


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"
