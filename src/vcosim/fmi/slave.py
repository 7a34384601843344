"""What the vehicle and coupling FMUs share: variable registration for FMI 2 and FMI 3.

The FMU classes are mixins placed before pythonfmu's ``Fmi2Slave`` or pythonfmu3's
``Fmi3Slave`` in a small generated script (see :mod:`vcosim.fmi.build`); ``fmi_version`` tells
them which library's variable classes to use. pythonfmu(3) is imported only here and only
when an FMU instance is made, so ``vcosim`` itself does not need it.
"""

from __future__ import annotations

import ctypes
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, NoReturn, cast
from xml.etree.ElementTree import Element

from vcosim.fmi.metadata import Variable, annotate

CONFIG_FILE = "vcosim_fmu.json"
_PINNED: list[dict[str, Any]] = []
"""One more reference to the model script's namespace per instance. With pythonfmu 0.7 a
script whose namespace nothing else holds (ours: no functions of its own) has it freed by
the runtime at the first instantiation, and the second finds "module has no attribute ...";
the script keeps one itself (``_namespace``) and each instance adds one here. Measured
with these, the namespace's reference count stays put across instances."""
"""The build options, shipped in the FMU's resources and read when it is instantiated."""

_CAST: dict[str, Callable[[float], Any]] = {
    "real": float,
    "integer": lambda v: int(round(v)),
    "boolean": lambda v: v != 0.0,
    "string": str,
}


@dataclass(frozen=True)
class Api:
    """One FMI version's variable classes and enums, by the names the mixins use."""

    types: dict[str, Any]
    causality: Any
    variability: Any
    error: Any


def api(version: int) -> Api:
    """The variable classes and enums of pythonfmu (FMI 2) or pythonfmu3 (FMI 3)."""
    if version == 2:
        from pythonfmu import Boolean, Fmi2Causality, Fmi2Variability, Integer, Real, String
        from pythonfmu.enums import Fmi2Status

        types = {"real": Real, "integer": Integer, "boolean": Boolean, "string": String}
        return Api(types, Fmi2Causality, Fmi2Variability, Fmi2Status.error)
    from pythonfmu3 import Boolean, Float64, Fmi3Causality, Fmi3Variability, Int32, String
    from pythonfmu3.enums import Fmi3Status

    types = {"real": Float64, "integer": Int32, "boolean": Boolean, "string": String}
    return Api(types, Fmi3Causality, Fmi3Variability, Fmi3Status.error)


def read_config(resources: str | None) -> dict[str, Any]:
    """The build options from the FMU's resources ({} when there are none)."""
    path = Path(resources) / CONFIG_FILE if resources else None
    return json.loads(path.read_text()) if path is not None and path.exists() else {}


class FmuRefused(RuntimeError):
    """An FMI call the FMU refuses; the message is logged as an FMI error before it."""


class SlaveMixin:
    """Registration helpers and the model-description hook for both FMI versions."""

    fmi_version: ClassVar[int] = 2
    _meta: dict[str, Variable]
    _api: Api

    def _setup(self) -> None:
        self._api = api(self.fmi_version)
        self._meta = {}
        module = sys.modules.get(type(self).__module__)
        if module is not None:
            _PINNED.append(vars(module))

    def _add(
        self,
        meta: Variable | str,
        causality: str,
        getter: Callable[[], Any],
        setter: Callable[[Any], None] | None = None,
    ) -> None:
        """Register one variable; ``causality`` is input, output, parameter or independent."""
        spec = meta if isinstance(meta, Variable) else Variable(meta)
        kind = spec.kind
        a = self._api
        variability = None
        if causality == "parameter":
            variability = a.variability.fixed
        elif causality == "independent":
            variability = a.variability.continuous
        elif kind != "real":
            variability = a.variability.discrete
        cast_value = _CAST[kind]
        slave = cast(Any, self)
        slave.register_variable(
            a.types[kind](
                spec.name,
                causality=getattr(a.causality, causality),
                variability=variability,
                getter=lambda: cast_value(getter()),
                setter=setter,
            )
        )
        self._meta[spec.name] = spec

    def _error(self, text: str) -> bool:
        """Log ``text`` as an FMI error (the master shows it) and return False for doStep."""
        cast(Any, self).log(text, status=self._api.error)
        return False

    def _fail_fmi2_call(self, text: str) -> NoReturn:
        """Fail the FMI 2 call under way, so the master stops: logged, then raised.

        pythonfmu 0.7's runtime answers a raised exception with fmi2Fatal (its only failing
        status: a call returns fmi2Error only for a C++ exception of its own), passing on the
        logged messages (the reason, at error) and then its own fatal line. On the way it
        releases its references to this instance, its class and its log queue, and
        ``fmi2FreeInstance`` releases the same three again (``PySlaveInstance::cleanPyObject``
        runs both times and does not forget them): freed twice, they crashed the process
        later. One reference each that nobody gives back takes that second release, so a
        refused instance is never freed (a few MB).
        """
        self._error(text)
        slave = cast(Any, self)
        for held in (slave, type(slave), slave.log_queue):
            ctypes.pythonapi.Py_IncRef(ctypes.py_object(held))
        raise FmuRefused(text)

    def to_xml(self, model_options: dict[str, str] | None = None) -> Element:
        """The library's model description, with units, ranges and descriptions added."""
        root = cast(Any, super()).to_xml(model_options or {})
        return annotate(root, self._meta)
