"""Hardening, fourth pass (issue 45): generated bad files of five kinds, none crashes.

Seeded generation (the same files every run; no wall-clock deadline): mutations of the
examples' .xosc, .xodr, world and sweep files and of run specs, with random expressions,
extreme numbers, long strings, deep nesting and truncation. Every file is read in process
by the loader its command uses: it is accepted or refused with a ``ConfigError``; any other
exception fails the test. The refused ones of each kind then go through the command line
(in process): exit code 2, no traceback.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import tomli_w
import tomllib
from typer.testing import CliRunner

from vcosim.app import app
from vcosim.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "examples" / "scenarios"
SEED = 45
NUMBERS = ["nan", "inf", "-inf", "1e309", "1e308", "-1e308", "5e-324", "0", "-0", "1e-300",
           str(2**63 - 1), str(2**64), "-1", "9" * 30, "0x10", "", "ten"]  # fmt: skip
TOKENS = ["1", "0", "-", "+", "*", "/", "%", "**", "(", ")", "sqrt(", "pow(", "floor(", ",",
          "$EgoSpeed", "$nope", "1e308", "-8", "0.5", "not ", "&&", "||", "pi", "abs("]  # fmt: skip


def expression(rng: random.Random) -> str:
    """A random ``${...}``: mostly nonsense, sometimes long or deep."""
    kind = rng.random()
    if kind < 0.1:
        return "${" + "-" * rng.randint(1, 5000) + "1}"
    if kind < 0.2:
        return "${" + "(" * rng.randint(1, 300) + "1" + ")" * rng.randint(0, 300) + "}"
    if kind < 0.3:
        return "${" + "+".join(["1"] * rng.randint(1, 3000)) + "}"
    return "${" + " ".join(rng.choice(TOKENS) for _ in range(rng.randint(1, 12))) + "}"


def mutate_xml(text: str, rng: random.Random) -> str:
    """One to three spoilt places of an XML file."""
    for _ in range(rng.randint(1, 3)):
        kind = rng.random()
        values = list(re.finditer(r'="([^"]*)"', text))
        if kind < 0.45 and values:
            spot = rng.choice(values)
            new = rng.choice([expression(rng), rng.choice(NUMBERS), "x" * rng.randint(0, 5000),
                              "$" + rng.choice(["EgoSpeed", "nope", ""])])  # fmt: skip
            text = text[: spot.start(1)] + new.replace('"', "") + text[spot.end(1) :]
        elif kind < 0.55:
            depth = rng.choice([50, 150, 1000, 3000])
            at = text.find(">", text.find("<OpenS") + 1) + 1 or len(text) // 2
            text = text[:at] + "<A>" * depth + "</A>" * depth + text[at:]
        elif kind < 0.7:
            text = text[: rng.randint(0, len(text))]
        elif kind < 0.8:
            tags = list(re.finditer(r"<([A-Za-z]+)[ >/]", text))
            if tags:
                spot = rng.choice(tags)
                text = (
                    text[: spot.start(1)]
                    + rng.choice(["Bogus", "Catalog", "Act"])
                    + text[spot.end(1) :]
                )
        elif kind < 0.9:
            at = rng.randint(0, len(text))
            text = text[:at] + "".join(chr(rng.randint(0, 0x2FF)) for _ in range(8)) + text[at:]
        else:
            lines = text.splitlines(keepends=True)
            at = rng.randint(0, len(lines))
            text = "".join(lines[:at] + lines[at : at + 5] * rng.randint(2, 50) + lines[at:])
    return text


def mutate_toml(data: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """One to three spoilt keys of a TOML file's data (values, unknown keys, long strings)."""
    for _ in range(rng.randint(1, 3)):
        spots = list(_spots(data))
        if not spots:
            break
        parent, key = rng.choice(spots)
        kind = rng.random()
        if kind < 0.5:
            parent[key] = rng.choice([1e308, -1e308, 5e-324, 2**63 - 1, -(2**63), 0, -1,
                                      1e-12, 1e12, 0.5, True, [], {},
                                      "x" * rng.randint(0, 5000)])  # fmt: skip
        elif kind < 0.7:
            parent[key] = rng.choice(["", "../../etc/passwd", "/dev/zero", "a" * 300 + ":1",
                                      "subprocess:run", "${1+1}", "\u0000"])  # fmt: skip
        elif kind < 0.85 and isinstance(parent, dict):
            parent[rng.choice(["bogus", "options", "entry_point", "host"])] = rng.choice(
                [1, "x", ["--save-configuration", "x"], {"a": 1}]
            )
        elif isinstance(parent, dict):
            parent.pop(key, None)
    return data


def _spots(data: Any) -> Any:
    """(container, key) of every value in nested dicts and lists."""
    stack = [data]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in list(items):
            yield node, key
            if isinstance(value, (dict, list)):
                stack.append(value)


def _toml(data: dict[str, Any]) -> str:
    try:
        return tomli_w.dumps(data)
    except (TypeError, ValueError):  # a NUL or a value TOML cannot hold
        return tomli_w.dumps({k: v for k, v in data.items() if isinstance(v, (dict, int))})


def load_xosc(path: Path) -> Any:
    from vcosim.openscenario.reader import read_xosc

    return read_xosc(path)


def load_xodr(path: Path) -> Any:
    from vcosim.roads.opendrive import read_xodr

    return read_xodr(path)


def load_spec(path: Path) -> Any:
    from vcosim.scenarios.spec import RunSpec

    return RunSpec.from_toml(path)


def load_world(path: Path) -> Any:
    from vcosim.world.spec import WorldFile

    return WorldFile.load(path)


def load_sweep(path: Path) -> Any:
    from vcosim.sweep.config.load import load_sweep as load

    return load(path)


SPEC = {
    "duration": 1.0,
    "pacing": {"mode": "fast", "frame_rate": 50.0, "time_dilation": 1.0},
    "start": {"speed": 5.0, "pose": [0.0, 0.0, 0.0]},
    "faces": [
        {"kind": "coupling", "listen_port": 0, "ext_time": 0.01},
        {"kind": "bus", "host": "127.0.0.1", "port": 4001},
        {"kind": "user", "name": "s", "entry_point": "vcosim.openscenario.storyboard:Storyboard"},
    ],
    "sumo": {"config": "x.sumocfg", "options": ["--thread-rngs", "8"]},
}
KINDS: dict[str, tuple[Callable[[Path], Any], str, Callable[[random.Random], str], list[str]]] = {
    "xosc": (load_xosc, ".xosc",
             lambda rng: mutate_xml((SCENARIOS / "cut_in.xosc").read_text(), rng),
             ["sim", "--scenario", "{}", "--duration", "0.01"]),
    "xodr": (load_xodr, ".xodr",
             lambda rng: mutate_xml((SCENARIOS / "straight.xodr").read_text(), rng),
             ["sim", "--terrain", "{}", "--duration", "0.01"]),
    "spec": (load_spec, ".toml",
             lambda rng: _toml(mutate_toml(tomllib.loads(tomli_w.dumps(SPEC)), rng)),
             ["sim", "--spec", "{}"]),
    "world": (load_world, ".toml",
              lambda rng: _toml(mutate_toml(tomllib.loads(
                  (ROOT / "examples" / "worlds" / "follow.toml").read_text()), rng)),
              ["sim", "--world", "{}", "--duration", "0.01"]),
    "sweep": (load_sweep, ".toml",
              lambda rng: _toml(mutate_toml(tomllib.loads(
                  (ROOT / "examples" / "sweeps" / "cruise-gains.toml").read_text()), rng)),
              ["sweep", "{}", "--check"]),
}  # fmt: skip
COUNTS = {"xosc": 120, "xodr": 80, "spec": 120, "world": 100, "sweep": 25}


@pytest.mark.parametrize("kind", list(KINDS))
def test_generated_bad_files_are_refused_cleanly(kind: str, tmp_path: Path) -> None:
    load, suffix, make, command = KINDS[kind]
    for name in ("straight.xodr", "cut_in.xosc"):  # what the scenarios refer to
        (tmp_path / name).write_bytes((SCENARIOS / name).read_bytes())
    rng = random.Random(f"{SEED}-{kind}")
    refused: list[Path] = []
    crashed: list[str] = []
    for n in range(COUNTS[kind]):
        path = tmp_path / f"case{n}{suffix}"
        path.write_text(make(rng), encoding="utf-8", errors="surrogatepass")
        try:
            load(path)
        except ConfigError as error:
            assert error.problems and all(len(p) < 20_000 for p in error.problems), path
            refused.append(path)
        except Exception as error:  # noqa: BLE001 (what the test looks for)
            crashed.append(f"case {n}: {type(error).__name__}: {str(error)[:200]}")
    assert not crashed, "\n".join(crashed)
    assert len(refused) >= COUNTS[kind] // 4  # the generator spoils most files
    for path in refused[:: max(1, len(refused) // 4)][:4]:  # a few through the command
        result = CliRunner().invoke(app, [w.replace("{}", str(path)) for w in command])
        assert result.exit_code == 2, (path.name, result.output[-500:])
        assert isinstance(result.exception, SystemExit), (path.name, result.exception)
        assert "Traceback" not in result.output


def test_a_1x1_height_map_is_refused(tmp_path: Path) -> None:
    from PIL import Image

    Image.new("L", (1, 1), 128).save(tmp_path / "one.png")
    result = CliRunner().invoke(app, ["sim", "--terrain", str(tmp_path / "one.png")])
    assert result.exit_code == 2, result.output
    assert "height_map: a picture of 1 x 1 pixels; a map needs at least 2" in " ".join(
        result.output.split()
    )
