"""How many runs each method needs to find the first falsifying run: the figures of docs/search.md.

Runs the search file once per method and seed, each stopping after the batch in which its first
falsifying run is found (``[search] stop = "first"``), and prints, per method, the runs it took
for each seed and their median (a search that found none counts as its budget, marked ``>``).

    python examples/search/compare.py examples/search/cut-in.toml --seeds 5 --workers 2
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from vcosim.search.config import load_search
from vcosim.search.driver import run_search
from vcosim.sweep.backends import LocalBackend


@dataclass
class Row:
    """One search: its seed, the runs to its first falsifying run (None: none), its budget."""

    seed: int
    first: int | None
    runs: int
    budget: int
    wall_time: float

    @property
    def needed(self) -> int:
        """The runs it needed: the budget when it found none (a lower bound)."""
        return self.first if self.first is not None else self.budget

    def cell(self) -> str:
        """As the table shows it (``>200``: none in a budget of 200)."""
        return str(self.first) if self.first is not None else f">{self.budget}"


def main() -> None:
    """Parse the options, search with every method and seed, print the table (and JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--methods", default="random,tpe,cmaes")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--budget", type=int, default=None)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args()
    base = load_search(args.file)
    figures: dict[str, list[Row]] = {}
    with LocalBackend(args.workers) as backend, tempfile.TemporaryDirectory() as tmp:
        for method in args.methods.split(","):
            for seed in range(args.seeds):
                changes: dict[str, object] = {"method": method, "seed": seed, "stop": "first"}
                if args.budget is not None:
                    changes["budget"] = args.budget
                section = base.section.model_copy(update=changes)
                search = replace(base, section=section)
                out = Path(tmp) / f"{method}-{seed}"
                outcome = run_search(search, backend, out_dir=out)
                row = Row(seed, outcome.first_falsifying, len(outcome.runs), section.budget,
                          outcome.wall_time)  # fmt: skip
                figures.setdefault(method, []).append(row)
                print(f"{method} seed {seed}: first falsifying run after {row.cell()} runs",
                      flush=True)  # fmt: skip
    print("\nmethod   runs to the first falsifying run, per seed       median")
    for method, rows in figures.items():
        cells = " ".join(r.cell() for r in rows)
        print(f"{method:8} {cells:48} {statistics.median(r.needed for r in rows)}")
    if args.json is not None:
        table = {method: [asdict(r) for r in rows] for method, rows in figures.items()}
        args.json.write_text(json.dumps(table, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
