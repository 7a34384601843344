"""The ``vcosim`` command: every sub-command, and the kit they share (options, console).

Nothing in vcosim imports this package: it sits on top, and reaches into any other.
``main`` installs the signal policy (:mod:`vcosim.interrupts`) before anything slow is
imported, so a program stopped while it is still starting says so instead of vanishing.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["app", "main"]


def main() -> None:
    """Entry point of ``vcosim``."""
    from vcosim.interrupts import install_signal_policy

    install_signal_policy()
    try:
        from vcosim.app.cli import main as run
    except KeyboardInterrupt:
        print("interrupted while starting: nothing was recorded", file=sys.stderr)
        sys.exit(130)
    run()


def __getattr__(name: str) -> Any:
    if name == "app":
        from vcosim.app.cli import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
