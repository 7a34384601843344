"""The base of every typed report: fields as attributes, ``to_dict()`` for JSON.

A leaf module (it imports nothing of vcosim), so the simulation host, every face, the modules
and the command line share it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any


@dataclass
class Report(Mapping[str, Any]):
    """What a run or a face did: typed fields, and ``to_dict()`` for JSON and summary tables.

    It reads as a read-only mapping too (``report["sent"]``), so code and JSON consumers
    written when reports were dicts keep working while they move to the attributes.
    """

    def to_dict(self) -> dict[str, Any]:
        """The fields by name (nested reports and dicts copied), ready for ``json.dumps``."""
        return asdict(self)

    def __getitem__(self, key: str) -> Any:
        if key not in self.__dataclass_fields__:
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return (f.name for f in fields(self))

    def __len__(self) -> int:
        return len(fields(self))
