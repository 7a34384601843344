"""The command line's grammar: every command refuses bad input in one line, exit code 2."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vcosim.app import app
from vcosim.app.cli import modernise

COMMANDS = [
    ["demo"],
    ["sim"],
    ["controller", "cruise"],
    ["connect", "x.json"],
    ["analyze", "."],
    ["cases"],
    ["sweep", "x.toml"],
    ["bus"],
    ["log", "x.mcap"],
    ["replay", "x.mcap"],
    ["drive"],
    ["sound"],
    ["input"],
    ["view"],
    ["bench", "physics"],
]


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def one_line_error(output: str) -> str:
    """The error line; fails if the output holds a traceback or more than one error line."""
    assert "Traceback" not in output, output
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, output
    return errors[0]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c))
def test_a_misspelt_option_is_one_line_and_exit_2(command: list[str]) -> None:
    code, output = run(*command, "--durration", "5")
    assert code == 2
    assert "No such option: --durration" in one_line_error(output)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["connect", "{tmp}/missing.json"], "missing.json"),
        (["analyze", "{tmp}/no-run"], "no-run"),
        (["sweep", "{tmp}/missing.toml"], "missing.toml"),
        (["replay", "{tmp}/missing.mcap"], "missing.mcap"),
        (["sim", "--vehicle", "{tmp}/car.toml", "--no-coupling"], "car.toml"),
        (["sim", "--interface", "{tmp}/i.csv"], "i.csv"),
        (["controller", "--fmu", "{tmp}/c.fmu"], "c.fmu"),
        (["controller", "--function", "{tmp}/mine.py:step"], "mine.py"),
        (["input", "--mapping", "{tmp}/map.toml", "--keyboard"], "map.toml"),
    ],
    ids=lambda v: v[0] if isinstance(v, list) else None,
)
def test_a_missing_file_is_one_line_and_exit_2(tmp_path: Path, args: list[str], says: str) -> None:
    code, output = run(*(a.replace("{tmp}", str(tmp_path)) for a in args))
    assert code == 2, output
    assert says in one_line_error(output)


@pytest.mark.parametrize(
    "args",
    [
        ["sim", "--duration", "-5"],
        ["sim", "--ext-time", "0"],
        ["sim", "--frame-rate", "0"],
        ["sim", "--start-pose", "1e300,0,0"],
        ["sim", "--start-pose", "nan,0"],
        ["sim", "--controller", "host:port"],
        ["sim", "--bus", "localhost:99999"],
        ["controller", "cruise", "--ext-time", "0"],
        ["controller", "cruise", "--sim", "a b:1"],
        ["sim", "--allow", "127.0.0.1:99999"],
        ["controller", "cruise", "--allow", "no.such.invalid"],
        ["controller", "cruise", "--sim", "127.0.0.1:0", "--exact-peer"],
        ["connect", "x.json", "--step", "0"],
        ["bus", "--listen", "127.0.0.1:-1"],
        ["log", "x.mcap", "--wall-time", "0"],
        ["replay", "x.mcap", "--pace", "-1"],
        ["drive", "--wall-time", "-1"],
        ["view", "--rate", "0"],
        ["sound", "--bus", ":70000"],
    ],
    ids=lambda a: " ".join(a),
)
def test_a_bad_value_is_one_line_and_exit_2(args: list[str]) -> None:
    code, output = run(*args)
    assert code == 2, output
    one_line_error(output)


@pytest.fixture
def udp_port_in_use() -> Iterator[int]:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


@pytest.fixture
def tcp_port_in_use() -> Iterator[int]:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


@pytest.mark.parametrize(
    "args",
    [
        ["sim", "--duration", "0.01", "--listen", "127.0.0.1:{port}"],
        ["sim", "--no-coupling", "--contracts", "--contracts-listen", "127.0.0.1:{port}"],
        ["controller", "cruise", "--listen", "127.0.0.1:{port}"],
        ["bus", "--listen", "127.0.0.1:{port}"],
    ],
    ids=lambda a: " ".join(a[:2]),
)
def test_a_udp_port_in_use_is_one_line_and_exit_2(udp_port_in_use: int, args: list[str]) -> None:
    code, output = run(*(a.replace("{port}", str(udp_port_in_use)) for a in args))
    assert code == 2, output
    line = one_line_error(output)
    assert "in use" in line and str(udp_port_in_use) in line


def test_the_viewer_page_port_in_use_is_one_line_and_exit_2(tcp_port_in_use: int) -> None:
    pytest.importorskip("starlette")
    code, output = run("view", "--listen", f"127.0.0.1:{tcp_port_in_use}")
    assert code == 2, output
    assert "in use" in one_line_error(output)


def test_old_spellings_become_the_new_options() -> None:
    assert modernise(
        ["controller", "--sim-host", "10.0.0.2", "--sim-port", "5", "--step", "0.01"]
    ) == [
        "controller",
        "--ext-time",
        "0.01",
        "--sim",
        "10.0.0.2:5",
    ]
    assert modernise(["--quiet", "view", "--port=0", "--bus-port", "7"]) == [
        "--quiet",
        "view",
        "--listen",
        ":0",
        "--bus",
        ":7",
    ]
    assert modernise(["log", "f.mcap", "--duration", "3"]) == ["log", "f.mcap", "--wall-time", "3"]
    assert modernise(["sim", "--duration", "3"]) == ["sim", "--duration", "3"]


def test_version() -> None:
    code, output = run("--version")
    assert code == 0 and output.startswith("vcosim ")
