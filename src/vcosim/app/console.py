"""The command line's output kit: one console, one log format, summary tables, JSON files."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.logging import RichHandler
from rich.table import Table

console = Console(stderr=True)


def setup_logging() -> None:
    """Log through the console, as every command does."""
    logging.basicConfig(
        level=logging.INFO,
        format="%(message)s",
        handlers=[RichHandler(console=console, show_path=False)],
    )


def table(title: str, rows: dict[str, Any]) -> Table:
    """A two-column summary table; values that are not text go as JSON."""
    table = Table(show_header=False, title=title)
    for key, value in rows.items():
        text = value if isinstance(value, str) else json.dumps(value, default=str)
        table.add_row(key.replace("_", " "), text)
    return table


def save_json(report: dict[str, Any], json_out: Path | None) -> None:
    """Write a report as JSON (``--json-out``), creating the folder."""
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(report, indent=2, default=str))
