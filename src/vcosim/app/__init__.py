"""The ``vcosim`` command: every sub-command, and the kit they share (options, console).

Nothing in vcosim imports this package: it sits on top, and reaches into any other.
"""

from vcosim.app.cli import app, main

__all__ = ["app", "main"]
