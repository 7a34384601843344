"""``vcosim sim`` as a projection of ``RunSpec``: which option sets which field, and ``--set``.

The options of ``vcosim sim`` are the fields of a run (``vcosim.scenarios.spec.RunSpec``) with
short names; ``FIELDS`` says which field each one sets, ``OUTSIDE`` why the others are not a
field of the run. The model keeps the defaults: an option left out is not said, and the help
shows the model's default (read when the help is shown, so that ``vcosim --help`` stays fast).
Every field without an option of its own is reached by ``--set SECTION.KEY=VALUE``, which the
model validates. tests/app/test_sim_options.py holds the table against the model.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Iterable, Sequence
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperCommand, TyperOption

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

if TYPE_CHECKING:
    from pydantic import BaseModel

    from vcosim.scenarios.spec import RunSpec

RUN = "Run"
TIMING = "Timing"
COUPLING = "Coupling (BeamNG-compatible)"
CONTRACTS = "Contracts (VS Connect-style)"
BUS = "Bus (NightRider)"
WORLD = "World and scenario"
OUTPUTS = "Outputs"

PANELS: dict[str, str] = {
    **dict.fromkeys(
        ("spec", "allow_code", "settings", "duration", "vehicle", "start_pose", "start_speed"), RUN
    ),
    **dict.fromkeys(("start", "gearbox", "engine"), RUN),
    **dict.fromkeys(
        ("pacing", "time_dilation", "frame_rate", "on_late", "realtime_priority", "cpu"), TIMING
    ),
    **dict.fromkeys(
        ("coupling", "interface", "gear_slot", "ext_time", "ping_time", "window", "send_skips"),
        COUPLING,
    ),
    **dict.fromkeys(
        ("send_offset", "timeout", "controller", "listen", "allow", "exact_peer", "spin"),
        COUPLING,
    ),
    **dict.fromkeys(("debug_log", "custom_hooks"), COUPLING),
    **dict.fromkeys(
        ("contracts", "contracts_listen", "contracts_allow", "vehicle_name", "wait_for_clients"),
        CONTRACTS,
    ),
    "bus": BUS,
    **dict.fromkeys(
        ("world", "scenario", "maps", "ego_driver", "terrain", "sumo", "sumo_host"),
        WORLD,
    ),
    **dict.fromkeys(("sumo_step", "sumo_seed"), WORLD),
    **dict.fromkeys(
        ("record", "record_rate", "osi", "osi_trace", "osi_rate", "foxglove", "foxglove_allow"),
        OUTPUTS,
    ),
    **dict.fromkeys(("foxglove_rate", "json_out"), OUTPUTS),
}
"""The help's panel of each option of ``vcosim sim`` (by parameter name)."""

FACE_KINDS = ("coupling", "contracts", "bus")
"""Faces a key path may start with (``coupling.window``): the run has at most one of each."""

FIELDS: dict[str, tuple[str, ...]] = {
    "duration": ("duration",),
    "vehicle": ("vehicle",),
    "terrain": ("terrain",),
    "world": ("world",),
    "start_pose": ("start.pose", "start.road"),
    "start_speed": ("start.speed",),
    "start": ("start.how",),
    "gearbox": ("gearbox",),
    "engine": ("engine",),
    "pacing": ("pacing.mode",),
    "time_dilation": ("pacing.time_dilation",),
    "frame_rate": ("pacing.frame_rate",),
    "on_late": ("pacing.on_late",),
    "record": ("recording.path",),
    "record_rate": ("recording.rate",),
    "coupling": ("coupling",),
    "interface": ("coupling.interface",),
    "gear_slot": ("coupling.gear_slot",),
    "ext_time": ("coupling.ext_time",),
    "ping_time": ("coupling.ping_time",),
    "window": ("coupling.window",),
    "send_skips": ("coupling.send_skips",),
    "send_offset": ("coupling.send_offset",),
    "timeout": ("coupling.timeout",),
    "controller": ("coupling.controller_host", "coupling.controller_port"),
    "listen": ("coupling.listen_host", "coupling.listen_port"),
    "allow": ("coupling.allow",),
    "exact_peer": ("coupling.exact_peer",),
    "spin": ("coupling.spin",),
    "debug_log": ("coupling.debug_log",),
    "custom_hooks": ("coupling.custom_hooks",),
    "contracts": ("contracts",),
    "contracts_listen": ("contracts.host", "contracts.port"),
    "contracts_allow": ("contracts.allowed_hosts",),
    "vehicle_name": ("contracts.vehicle_name",),
    "wait_for_clients": ("contracts.wait_for_clients",),
    "bus": ("bus.host", "bus.port"),
    "scenario": ("world",),
    "sumo": ("sumo.config",),
    "sumo_host": ("sumo.host",),
    "sumo_step": ("sumo.step_length",),
    "sumo_seed": ("sumo.seed",),
}
"""The field (key path in ``RunSpec``, a face by its kind) each option of ``vcosim sim`` sets."""

MAKES = {"bus", "record", "sumo", "sumo_host"}
"""Options that add their section to the run: left out, the run has none (no default shown)."""

OUTSIDE: dict[str, str] = {
    "spec": "the run itself, as a file",
    "allow_code": "what a run file may run, not what the run is",
    "settings": "any field, by its key path (--set)",
    "maps": "where a scenario's named maps are looked for",
    "ego_driver": "who drives the scenario's ego: it makes the world (its ego's driver)",
    "osi": "a ground-truth output beside the run",
    "osi_trace": "a ground-truth output beside the run",
    "osi_rate": "a ground-truth output beside the run",
    "foxglove": "a ground-truth output beside the run",
    "foxglove_allow": "a ground-truth output beside the run",
    "foxglove_rate": "a ground-truth output beside the run",
    "json_out": "where the summary goes",
    "realtime_priority": "how this process runs",
    "cpu": "how this process runs",
}
"""Options of ``vcosim sim`` that set no field of ``RunSpec``, and why."""


Set = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        metavar="SECTION.KEY=VALUE",
        help="Any field of the run (docs/cli.md: a run as a file), e.g. pacing.on_late=stop or "
        "coupling.window=3 (repeatable). VALUE is read as TOML "
        "(3, 0.5, true, [1, 2]), else as text. A field with an option of its own is set by it.",
    ),
]


class SimCommand(TyperCommand):
    """``vcosim sim``: its options in panels, their defaults shown from the model."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            if isinstance(param, TyperOption) and param.name in PANELS:
                param.rich_help_panel = PANELS[param.name]

    def format_help(self, ctx: Any, formatter: Any) -> None:
        """The help, each option that sets a field showing the field's default.

        (``ctx`` and ``formatter`` are typer's private click's: not named here.)
        """
        for param in self.params:
            if isinstance(param, TyperOption) and param.default is None:
                shown = shown_default(param.name or "")
                if shown is not None:
                    param.show_default = shown
        super().format_help(ctx, formatter)


def model_of(path: str) -> tuple[type[BaseModel], str]:
    """The model class that holds the last key of ``path``, and that key.

    Raises ``KeyError`` for a path the model does not have.
    """
    from vcosim.scenarios.spec import RunSpec

    keys = path.split(".")
    model: type[BaseModel] = RunSpec
    if keys[0] in FACE_KINDS:
        model = face_class(keys[0])
        keys = keys[1:] or ["kind"]
    for key in keys[:-1]:
        model = _submodel(model.model_fields[key].annotation)
    if keys[-1] not in model.model_fields:
        raise KeyError(path)
    return model, keys[-1]


def face_class(kind: str) -> type[BaseModel]:
    """The spec class of a face kind."""
    from vcosim.scenarios.spec import BusFaceSpec, ContractsFaceSpec, CouplingFaceSpec

    faces: dict[str, type[BaseModel]] = {
        "coupling": CouplingFaceSpec,
        "contracts": ContractsFaceSpec,
        "bus": BusFaceSpec,
    }
    return faces[kind]


def _submodel(annotation: Any) -> type[BaseModel]:
    """The model class in a field's annotation (``StartSpec``, ``RecordingSpec | None``)."""
    from typing import get_args

    from pydantic import BaseModel

    for candidate in (annotation, *get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    raise KeyError(str(annotation))


def model_default(path: str) -> object:
    """The default of the field at ``path`` (``pacing.frame_rate`` -> 60.0; None: none)."""
    model, key = model_of(path)
    field = model.model_fields[key]
    return None if field.is_required() else field.get_default(call_default_factory=True)


def shown_default(option: str) -> str | None:
    """The default the help shows for an option: the model's (None: the option's own)."""
    paths = () if option in MAKES else FIELDS.get(option, ())
    if len(paths) != 1 and not (len(paths) == 2 and paths[1].endswith("port")):
        return None
    values = [model_default(path) for path in paths]
    if any(value is None or value == () for value in values):
        return None
    if len(values) == 2:  # an address: HOST:PORT
        return f"{values[0]}:{values[1]}"
    (value,) = values
    if isinstance(value, bool):
        return option.replace("_", "-") if value else f"no-{option.replace('_', '-')}"
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def parse_setting(text: str) -> tuple[str, object]:
    """``--set SECTION.KEY=VALUE``: the key path and the value (TOML, else the text)."""
    key, eq, value = text.partition("=")
    path = key.strip()
    if not eq or not all(part.isidentifier() for part in path.split(".")):
        raise typer.BadParameter(
            f"{text!r} is not SECTION.KEY=VALUE, e.g. pacing.on_late=stop", param_hint="'--set'"
        )
    try:
        return path, tomllib.loads(f"value = {value.strip()}")["value"]
    except tomllib.TOMLDecodeError:
        return path, value.strip()


def apply_settings(run: RunSpec, settings: Sequence[str], given: Iterable[str] = ()) -> RunSpec:
    """``run`` with each ``--set`` applied, validated by the model.

    ``given``: the options given beside (a field is set by its option or by ``--set``, not
    both). Raises ``typer.BadParameter`` (exit 2) naming every bad key path and value.
    """
    from pydantic import ValidationError

    by_option = {path: option for option in given for path in FIELDS.get(option, ())}
    problems = []
    for text in settings:
        path, value = parse_setting(text)
        option = by_option.get(path)
        if option is not None:
            problems.append(f"{path} is also given by --{option.replace('_', '-')}")
            continue
        try:
            run = _set(run, path, value)
        except ValidationError as exc:
            problems += [f"{path}: {error['msg']}" for error in exc.errors()]
        except LookupError as exc:
            problems.append(str(exc.args[0]))
    if settings and not problems:
        problems = run.problems()
    if problems:
        raise typer.BadParameter("; ".join(problems), param_hint="'--set'")
    return run


def _set(run: RunSpec, path: str, value: object) -> RunSpec:
    """A copy of ``run`` with the field at ``path`` set (``LookupError``: no such key)."""
    first, *rest = path.split(".")
    run = run.model_copy()
    if first in FACE_KINDS:
        index = next((i for i, face in enumerate(run.faces) if face.kind == first), None)
        if index is None:
            raise LookupError(f"{path}: this run has no {first} face (give --{first})")
        if not rest:
            raise LookupError(f"{path}: a face; set its keys, e.g. {first}.{_a_key(first)}=...")
        faces = list(run.faces)
        faces[index] = _set_in(faces[index], rest, path, value)
        run.faces = faces
        return run
    return _set_in(run, [first, *rest], path, value)


def _set_in(model: Any, keys: list[str], path: str, value: object) -> Any:
    """A copy of ``model`` with ``keys`` set, each step validated on assignment."""
    key, *rest = keys
    if key not in type(model).model_fields:
        known = [name for name in type(model).model_fields if name != "kind"]
        if model is not None and type(model).__name__ == "RunSpec":
            known += list(FACE_KINDS)
        close = difflib.get_close_matches(key, known, n=1)
        hint = f"did you mean {close[0]}? " if close else ""
        section = path[: len(path) - len(".".join(keys))].rstrip(".") or "a run"
        raise LookupError(f"{path}: unknown key ({hint}the keys of {section}: {', '.join(known)})")
    model = model.model_copy()
    if rest:
        inner = getattr(model, key)
        if inner is None or not hasattr(type(inner), "model_fields"):
            raise LookupError(f"{path}: this run has no {key} to set a key of")
        setattr(model, key, _set_in(inner, rest, path, value))
    else:
        setattr(model, key, value)
    return model


def _a_key(kind: str) -> str:
    """An example key of a face kind, for a refusal."""
    return {"coupling": "window", "contracts": "session_timeout", "bus": "port"}[kind]
