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


PRINTED_CHARS = 120
"""The most characters of a peer's text (an error code, a name) that a log line prints."""


def printable(text: object, limit: int = PRINTED_CHARS) -> str:
    """A peer's ``text`` as one short printable line, so no peer can flood a log.

    Control characters are escaped; past ``limit`` characters it is cut, its length said.
    """
    line = str(text)
    if not line.isprintable():
        line = line.encode("unicode_escape").decode("ascii")
    if len(line) <= limit:
        return line
    return f"{line[:limit]}... ({len(line)} characters)"
