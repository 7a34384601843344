"""The native FMU's C layer under AddressSanitizer, UndefinedBehaviorSanitizer and
LeakSanitizer: every FMI 2 and FMI 3 call sequence of ``native/sequences2.c`` and
``native/sequences3.c``, error paths included.

The C layer is compiled with the sanitizers and linked into the sequence program with the
kernel's object file (itself not instrumented: numba's code, checked bit for bit elsewhere).
zig ships no sanitizer runtime, so this build uses the system's gcc and its libasan; without
them the test is skipped, saying so.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from vcosim.fmi.native.coupling import coupling_header
from vcosim.fmi.native.kernel import build_objects
from vcosim.fmi.native.vehicle import FMI_SOURCES, c_folder, fmi_headers, model_header
from vcosim.vehicle.params import VehicleParams

HERE = Path(__file__).parent
SANITIZERS = "-fsanitize=address,undefined"


def sanitizing_compiler(folder: Path) -> str:
    """The system's gcc if it links a sanitized program here, else skip the test."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("no gcc: zig has no sanitizer runtime, so the ASan run needs gcc's")
    probe = folder / "probe.c"
    probe.write_text("int main(void) { return 0; }\n")
    done = subprocess.run(
        [gcc, SANITIZERS, str(probe), "-o", str(folder / "probe")], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"gcc cannot link {SANITIZERS}: {done.stderr.decode()[-300:]}")
    return gcc


@pytest.mark.parametrize("version", [2, 3], ids=["fmi2", "fmi3"])
def test_every_call_sequence_runs_clean_under_the_sanitizers(version, tmp_path):
    gcc = sanitizing_compiler(tmp_path)
    (tmp_path / "vcosim_model.h").write_text(
        model_header(VehicleParams.preset("nightrider"), True, "{sanitized}")
    )
    kernels = build_objects(tmp_path, ("x86_64-linux",))["x86_64-linux"]
    c = c_folder()
    program = tmp_path / f"sequences{version}"
    command = [gcc, "-std=c11", "-O1", "-g", SANITIZERS, "-fno-sanitize-recover=all"]
    command += ["-fno-omit-frame-pointer", "-Wall", "-Werror"]
    command += [f"-I{tmp_path}", f"-I{c}", f"-I{fmi_headers()}", "-o", str(program)]
    command += [str(HERE / "native" / f"sequences{version}.c")]
    command += [str(c / name) for name in ("vehicle.c", "stubs.c", *FMI_SOURCES[version])]
    command += [*map(str, kernels), "-lm"]
    built = subprocess.run(command, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    options = "detect_leaks=1:halt_on_error=1:abort_on_error=0"
    done = subprocess.run(
        [str(program)],
        env={"ASAN_OPTIONS": options, "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert "Sanitizer" not in done.stderr and "runtime error" not in done.stderr, done.stderr
    assert done.stdout.startswith("all sequences passed")


def test_the_coupling_call_sequences_run_clean_under_the_sanitizers(tmp_path):
    """The native coupling's C layer, this program the simulator on loopback."""
    gcc = sanitizing_compiler(tmp_path)
    (tmp_path / "vcosim_coupling.h").write_text(coupling_header(0.005, "{sanitized}"))
    c = c_folder()
    program = tmp_path / "coupling_sequences2"
    command = [gcc, "-std=c11", "-O1", "-g", SANITIZERS, "-fno-sanitize-recover=all"]
    command += ["-fno-omit-frame-pointer", "-Wall", "-Werror"]
    command += [f"-I{tmp_path}", f"-I{c}", f"-I{fmi_headers()}", "-o", str(program)]
    command += [str(HERE / "native" / "coupling_sequences2.c")]
    command += [*(str(c / name) for name in ("coupling.c", "coupling_fmi2.c")), "-lm"]
    built = subprocess.run(command, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    done = subprocess.run(
        [str(program)],
        env={"ASAN_OPTIONS": "detect_leaks=1:halt_on_error=1", "UBSAN_OPTIONS": "halt_on_error=1"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert "Sanitizer" not in done.stderr and "runtime error" not in done.stderr, done.stderr
    assert done.stdout.startswith("all sequences passed")
