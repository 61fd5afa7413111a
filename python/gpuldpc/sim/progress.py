"""Live progress: one ``rich`` bar per Eb/N0 point, with its counts so far.

A bar fills with the larger of ``frame_errors / max_errors`` and
``frames / max_frames`` (the budget that will stop the point) and shows frames,
frame errors, FER, BER and the workers' frames per second; a failed point's bar
says ``[failed]`` and why.  On a terminal the
bars redraw in place; elsewhere (a log file, CI) rich prints them when the
campaign ends.  :class:`NoProgress` is the silent stand-in (``--quiet``).
"""
from __future__ import annotations

from .spec import Budget
from .stats import PointResult

__all__ = ["RichProgress", "NoProgress"]

_SCALE = 10_000


class NoProgress:
    """Shows nothing."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, label: str, point: PointResult, budget: Budget, done: bool):
        pass

    def fail(self, label: str, reason: str):
        pass


class RichProgress:
    """A rich Progress with a task per point label (created at the point's first batch)."""

    def __init__(self):
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self._progress = Progress(TextColumn("{task.description}", markup=False), BarColumn(),
                                  TextColumn("{task.fields[counts]}", markup=False), TimeElapsedColumn())
        self._tasks: dict = {}

    def __enter__(self):
        self._progress.start()
        return self

    def __exit__(self, *exc):
        self._progress.stop()
        return False

    def update(self, label: str, point: PointResult, budget: Budget, done: bool):
        """Redraw the point's bar from its counted result."""
        frac = max(point.frame_errors / budget.max_errors, point.frames / budget.max_frames)
        counts = (f"{point.frames} fr  {point.frame_errors} fe  FER {point.fer:.2e}  BER {point.ber:.2e}  "
                  f"{point.frames_per_second:,.0f} fr/s")
        if done:
            counts += f"  [{point.status}]"
        self._progress.update(self._task(label), completed=_SCALE if done else min(frac, 1.0) * _SCALE,
                              counts=counts)

    def fail(self, label: str, reason: str):
        """Mark the point's bar failed, with the reason."""
        self._progress.update(self._task(label), counts=f"[failed] {reason}")

    def _task(self, label: str):
        if label not in self._tasks:
            self._tasks[label] = self._progress.add_task(label, total=_SCALE, counts="")
        return self._tasks[label]
