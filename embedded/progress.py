"""A progress bar for long byte copies (joining the model's 22 slices into 1.1 GB): one updating line on a
terminal (stderr, so stdout keeps only what a script reads), one line saying what happens otherwise."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)

from service.terminal import console, styled

ByteProgress = Callable[[int, int], None]  # (bytes done, bytes in all)


@contextmanager
def byte_progress(what: str) -> Iterator[ByteProgress]:
    """A callback for (done, total) byte counts, shown as a bar under `what`; nothing is shown until it is
    first called (a cached model joins nothing)."""
    if not styled(sys.stderr):
        said = False

        def line(done: int, total: int) -> None:
            nonlocal said
            if not said:
                said = True
                size = f"{total / 1e9:.1f} GB" if total >= 1e9 else f"{total / 1e6:.1f} MB"
                print(f"{what} ({size}) ...", file=sys.stderr, flush=True)

        yield line
        return
    bar = Progress(
        TextColumn(what, markup=False),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=console(sys.stderr),
        transient=False,
    )
    task: TaskID | None = None

    def update(done: int, total: int) -> None:
        nonlocal task
        if task is None:
            bar.start()
            task = bar.add_task(what, total=total)
        bar.update(task, completed=done)

    try:
        yield update
    finally:
        bar.stop()
