"""ASAM's quality checkers for OpenSCENARIO and OpenDRIVE files, in a venv of their own.

``asam-qc-openscenarioxml`` and ``asam-qc-opendrive`` pin numpy<2 and lxml<6, which vcosim's
own environment need not hold: they are installed (by uv, from the registry) into a venv of
their own, and run as their command lines are, on a configuration file naming the input.
"""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from uv import find_uv_bin

PACKAGES = ("asam-qc-openscenarioxml", "asam-qc-opendrive")
CHECKERS = {".xosc": ("qc_openscenario", "xoscBundle"), ".xodr": ("qc_opendrive", "xodrBundle")}
ERROR = "1"
"""An issue's level in the checkers' results: 1 error, 2 warning, 3 information."""
UNREACHABLE = ("Failed to fetch", "error sending request", "dns error")
"""What uv says when the registry cannot be reached (the only reason to skip)."""


def install(folder: Path) -> Path:
    """A venv in ``folder`` with both checkers; its ``bin`` folder.

    Skips the test (saying why) when the registry cannot be reached; fails on any other
    problem.
    """
    uv = find_uv_bin()
    venv = folder / "venv"
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True)
    python = venv / ("Scripts" if sys.platform == "win32" else "bin") / "python"
    done = subprocess.run(
        [uv, "pip", "install", "-q", "--python", str(python), *PACKAGES],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    if done.returncode and any(sign in done.stderr for sign in UNREACHABLE):
        pytest.skip(f"ASAM's checkers cannot be installed, the registry is unreachable: "
                    f"{done.stderr.strip().splitlines()[-1]}")  # fmt: skip
    assert done.returncode == 0, done.stderr
    return python.parent


def errors(bin_folder: Path, file: Path, work: Path) -> list[str]:
    """Every error the checker of ``file``'s kind (``.xosc``, ``.xodr``) finds in it, and
    every check that broke down (an internal error of the checker).

    The configuration and the results go into ``work``, not beside the file.
    """
    command, bundle = CHECKERS[file.suffix]
    out = work / f"{file.name}.xqar"
    config = ET.Element("Config")
    ET.SubElement(config, "Param", name="InputFile", value=str(file.resolve()))
    checker = ET.SubElement(config, "CheckerBundle", application=bundle)
    ET.SubElement(checker, "Param", name="resultFile", value=str(out.resolve()))
    config_file = work / f"{file.name}.qc.xml"
    ET.ElementTree(config).write(config_file, encoding="utf-8", xml_declaration=True)
    done = subprocess.run(
        [str(bin_folder / command), "-c", str(config_file)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0 and out.exists(), done.stderr
    results = ET.parse(out).getroot()
    found = [
        f"{issue.get('ruleUID')}: {where.get('description') or issue.get('description')}"
        for issue in results.iter("Issue")
        if issue.get("level") == ERROR
        for where in (issue.findall("Locations") or [issue])
    ]
    found += [
        f"{check.get('checkerId')} broke down: {check.get('summary')}"
        for check in results.iter("Checker")
        if check.get("status") == "error"
    ]
    return found
