"""The benches' progress bar: on stderr, so that stdout stays pure JSON, gone when done."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn


def bench_progress(show: bool) -> Progress:
    """A transient bar of named stages; ``show`` False gives one that draws nothing."""
    return Progress(
        TextColumn("{task.description:<28}"),
        BarColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
        disable=not show,
    )
