"""The one error hierarchy of vcosim: everything raised to a user derives from VcosimError."""

from __future__ import annotations


class VcosimError(Exception):
    """Root of every error vcosim raises on purpose."""


class ConfigError(VcosimError, ValueError):
    """A configuration or parameter file is invalid; lists every problem with its location."""

    def __init__(self, problems: list[str], source: str = "configuration") -> None:
        self.problems = list(problems)
        self.source = source
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"{source} is invalid ({len(self.problems)} problem(s)):\n{lines}")


class MissingExtra(VcosimError):
    """An optional part of vcosim is not installed: one sentence saying which extra to add.

    Raised before anything starts (``vcosim.extras.require``), so it is a usage error.
    """


class ProtocolError(VcosimError):
    """A message on the wire does not follow its protocol."""


class CouplingTimeout(VcosimError, TimeoutError):
    """A peer did not answer within the configured time."""


class UnknownNameError(VcosimError, KeyError):
    """A name (input, signal, preset, controller) is not one vcosim knows; suggests the closest."""

    def __init__(
        self,
        kind: str,
        name: str,
        valid: list[str] | tuple[str, ...],
        *,
        where_listed: str | None = None,
    ) -> None:
        """The message names ``name`` and the closest of ``valid``, then lists ``valid``.

        ``where_listed`` says where the valid names are instead of listing them (for
        hundreds of names, e.g. "vcosim signals lists them").
        """
        import difflib

        close = difflib.get_close_matches(name, list(valid), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        listing = where_listed or f"valid: {', '.join(valid)}"
        self.message = f"unknown {kind} {name!r}{hint} ({listing})"
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message
