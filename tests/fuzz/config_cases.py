"""Malformed configuration files of every kind vcosim reads, each with the key it spoils.

Each case mutates one value of a good example (every numeric key gets NaN, infinities, huge,
tiny and wrong-typed values; tables get unknown keys) or spoils the file as a whole (not
UTF-8, too big, nested too deep). ``load(kind, path)`` reads a file as the command would
before it starts anything; a case passes when that raises ``ConfigError`` whose first problem
names the spoilt key.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomli_w

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

BAD_NUMBERS: list[Any] = [math.nan, math.inf, -math.inf, 1e308, -1e308, "ten", [1.0]]
TINY = 5e-324  # divides to infinity


@dataclass(frozen=True)
class Case:
    """One malformed file: its kind, a name, its bytes, and the key a problem must name."""

    kind: str
    name: str
    content: bytes
    key: str
    suffix: str = ".toml"

    def write(self, folder: Path) -> Path:
        path = folder / f"{self.kind}-{self.name}{self.suffix}".replace("/", "_")
        path.write_bytes(self.content)
        return path


# -- loaders: what each command reads before it starts --------------------------------------
def load_vehicle(path: Path) -> Any:
    from vcosim.vehicle.params import VehicleParams

    return VehicleParams.from_toml(path)


def load_world(path: Path) -> Any:
    from vcosim.world.spec import WorldFile

    return WorldFile.load(path)


def load_sweep(path: Path) -> Any:
    from vcosim.sweep.config.load import load_sweep as load

    return load(path)


def load_contract(path: Path) -> Any:
    from vcosim.contracts.config import load_config

    return load_config(path)


def load_interface(path: Path) -> Any:
    from vcosim.tight.beamng_csv import read_interface_csv

    return read_interface_csv(path)


def load_terrain(path: Path) -> Any:
    from vcosim.vehicle.terrain import TerrainSpec

    return TerrainSpec.load(path).build()


LOADERS: dict[str, Callable[[Path], Any]] = {
    "vehicle": load_vehicle,
    "world": load_world,
    "sweep": load_sweep,
    "contract": load_contract,
    "interface": load_interface,
    "terrain": load_terrain,
}


# -- mutations ------------------------------------------------------------------------------
def leaves(data: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """Every (key path, value) of numbers in nested dicts and lists."""
    if isinstance(data, dict):
        for key, value in data.items():
            yield from leaves(value, (*path, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from leaves(value, (*path, i))
    elif isinstance(data, (int, float)) and not isinstance(data, bool):
        yield path, data


def tables(data: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(data, dict):
        yield path
        for key, value in data.items():
            yield from tables(value, (*path, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from tables(value, (*path, i))


def replaced(data: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    head, *rest = path
    copy = list(data) if isinstance(data, list) else dict(data)
    copy[head] = replaced(data[head], tuple(rest), value) if rest else value
    return copy


def named_key(path: tuple[Any, ...]) -> str:
    """The last key name on the path (list indices skipped)."""
    return next(str(p) for p in reversed(path) if isinstance(p, str))


def toml_bytes(data: dict[str, Any]) -> bytes:
    return tomli_w.dumps(data).encode()


def structured_cases(
    kind: str, data: dict[str, Any], dump: Callable[[Any], bytes], rng: random.Random, n: int
) -> list[Case]:
    """Unknown keys in the first tables, then ``n`` bad numbers in numeric keys."""
    suffix = ".json" if kind == "contract" else ".toml"
    unknown = [
        Case(
            kind,
            f"unknown-{'.'.join(map(str, path)) or 'top'}",
            dump(replaced(data, (*path, "zz_unknown"), 1.0)),
            "zz_unknown",
            suffix,
        )
        for path in list(tables(data))[:3]
    ]
    numbers = [p for p, _ in leaves(data) if any(isinstance(k, str) for k in p)]
    spoilt = []
    for i in range(n):
        path = rng.choice(numbers)
        bad = BAD_NUMBERS[i % len(BAD_NUMBERS)]
        if kind == "contract" and isinstance(bad, float) and not math.isfinite(bad):
            bad = "NaN"  # (JSON has no NaN: a string where a number belongs)
        name = f"{'.'.join(map(str, path))}={bad!r}"
        spoilt.append(Case(kind, name, dump(replaced(data, path, bad)), named_key(path), suffix))
    return unknown + spoilt


def whole_file_cases(kind: str, good: bytes, suffix: str) -> list[Case]:
    """Not UTF-8, too big, nested too deep: the file as a whole (its problem says which)."""
    cases = [
        Case(kind, "not-utf8", good[:20] + b"\xff\xfe" + good[20:], "UTF-8", suffix),
        Case(kind, "huge", good + b"\n" + b"#" * (3 << 20) + b"\n", "bytes", suffix),
    ]
    if suffix == ".toml":
        deep = "[" + ".".join(["a"] * 2000) + "]\nx = 1\n"
        cases.append(Case(kind, "deep-table", deep.encode(), "a.a.a", suffix))
        wide = b"k = 1\n" * 300_000  # 1.8 MB of keys: refused by its size before parsing
        cases.append(Case(kind, "many-keys", wide, "bytes", suffix))
    if suffix == ".json":
        cases.append(Case(kind, "deep-json", b"[" * 5000 + b"]" * 5000, "nested", suffix))
    return cases


def interface_cases(rng: random.Random, n: int) -> list[Case]:
    good = (EXAMPLES / "beamng" / "throttle.csv").read_bytes()
    lines = good.decode().splitlines()
    out: list[Case] = []
    numeric = [i for i, line in enumerate(lines) if line.startswith("connection,")]
    for i in range(n):
        at = rng.choice(numeric)
        fields = lines[at].split(",")
        bad = ["nan", "inf", "1e308", "-1e308", "ten", "", "1e-320"][i % 7]
        fields[3] = bad
        spoilt = [*lines[:at], ",".join(fields), *lines[at + 1 :]]
        out.append(
            Case("interface", f"{fields[2]}={bad}", "\n".join(spoilt).encode(), fields[2], ".csv")
        )
    signal = next(line for line in lines if line.startswith("signalTo,"))
    many = "\n".join([*lines, *[signal] * 10_000]).encode()
    out.append(Case("interface", "10000-duplicates", many, signal.split(",")[2], ".csv"))
    field = lines[1].split(",")
    field[5] = "x" * 200_000
    wide = "\n".join([lines[0], ",".join(field), *lines[2:]]).encode()
    out.append(Case("interface", "200kB-field", wide, "characters", ".csv"))
    out += whole_file_cases("interface", good, ".csv")
    return out


def terrain_cases() -> list[Case]:
    out = [
        Case("terrain", f"{key}={bad!r}", toml_bytes({"hill_height": 5.0, key: bad}), key)
        for key in ("hill_height", "size", "friction", "road_friction", "offroad_friction")
        for bad in (math.nan, math.inf, -1.0, 1e308, "ten")
    ]
    return out + whole_file_cases("terrain", toml_bytes({"hill_height": 5.0}), ".toml")


def picture_cases() -> list[Case]:
    """Pictures whose pixels or bytes are over the limits (named by "pixels" / "bytes")."""
    import zlib

    def png(width: int, height: int) -> bytes:
        """A PNG's header of any size: the limit is checked before a pixel is decoded."""
        import struct

        def chunk(tag: bytes, body: bytes) -> bytes:
            crc = zlib.crc32(tag + body) & 0xFFFFFFFF
            return struct.pack(">I", len(body)) + tag + body + struct.pack(">I", crc)

        header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
        data = zlib.compress(b"\0" * (width + 1))  # one row; the rest would be zeros too
        return (
            b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", header)
            + chunk(b"IDAT", data)
            + chunk(b"IEND", b"")
        )

    big = Case("terrain", "13000x13000", png(13_000, 13_000), "pixels", ".png")
    junk = Case("terrain", "not-a-picture", b"GIF89a" + bytes(100), "picture", ".png")
    return [big, junk]


def all_cases(seed: int = 31, per_kind: int = 30) -> list[Case]:
    """Every case, deterministic for a seed: at least 200 across the six kinds."""
    rng = random.Random(seed)
    vehicle = {"preset": "nightrider", **_vehicle_overrides()}
    world = _toml(EXAMPLES / "worlds" / "two-cars.toml")
    sweep = _toml(EXAMPLES / "sweeps" / "cruise-gains.toml")
    contract = json.loads((EXAMPLES / "contracts" / "cruise.json").read_text())
    dumps: Callable[[Any], bytes] = lambda d: json.dumps(d, indent=1).encode()  # noqa: E731
    cases = [
        *structured_cases("vehicle", vehicle, toml_bytes, rng, per_kind),
        *whole_file_cases("vehicle", toml_bytes(vehicle), ".toml"),
        *[  # the ZeroDivisionError: masses and inertias that divide to infinity
            Case(
                "vehicle",
                f"{table}.{key}=5e-324",
                toml_bytes(replaced(vehicle, (table, key), TINY)),
                key,
            )
            for table, key in (
                ("body", "chassis_mass"),
                ("wheels", "inertia"),
                ("wheels", "radius"),
            )
        ],
        *structured_cases("world", world, toml_bytes, rng, per_kind),
        *whole_file_cases("world", toml_bytes(world), ".toml"),
        *structured_cases("sweep", sweep, toml_bytes, rng, per_kind),
        *whole_file_cases("sweep", toml_bytes(sweep), ".toml"),
        *structured_cases("contract", contract, dumps, rng, per_kind),
        *whole_file_cases("contract", dumps(contract), ".json"),
        *interface_cases(rng, 20),
        *terrain_cases(),
        *picture_cases(),
    ]
    return cases


def _toml(path: Path) -> dict[str, Any]:
    import tomllib

    return tomllib.loads(path.read_text())


def _vehicle_overrides() -> dict[str, Any]:
    """Every numeric parameter of the preset, written out (so each can be spoilt)."""
    from vcosim.vehicle.params import VehicleParams

    data = VehicleParams.preset("nightrider").model_dump()
    data.pop("name", None)
    return _without_none(data)


def _without_none(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _without_none(v) for k, v in data.items() if v is not None}
    if isinstance(data, list):
        return [_without_none(v) for v in data]
    return data
