"""The vehicle kernel as object code: numba's LLVM IR behind C entry points, per target.

numba compiles ``advance`` for the host CPU of the process that calls it; an FMU must run on
any x86-64. So the IR is made in child processes whose numba targets a named level of the
x86-64 (``NUMBA_CPU_NAME``): the generic one (SSE2, every x86-64) and x86-64-v3 (AVX2, since
2013-2015), whose vector code runs the step about 1.5x as fast. llvmlite emits each for every
target triple; the C layer picks the best the CPU it runs on supports. The two give the same
results to the last bit (no fused multiply-adds: numba does not allow them here). numba's IR names
runtime and error-reporting symbols of the Python C API on paths no call of these entry
points reaches (the kernel divides as IEEE 754 does and allocates nothing):
``c/stubs.c`` defines them, so the library needs only libc and libm.

Entry points (C declarations in ``c/vcosim_kernel.h``):

- ``vcosim_advance_x86_64``, ``vcosim_advance_x86_64_v3``: ``model.advance`` over raw
  arrays, the terrain's grid included, for each level.
- ``vcosim_body_properties``, ``vcosim_brake_torques``: ``params.body_properties`` and
  ``params.brake_torques``, for the masses and brake torques a master sets.
- ``vcosim_sample_terrain``: ``terrain.sample_terrain``, the ground the kernel drives on,
  for placing the settled vehicle at the origin as ``Vehicle`` does.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from vcosim.errors import VcosimError

ADVANCE = "vcosim_advance"
BODY = "vcosim_body_properties"
BRAKES = "vcosim_brake_torques"
TERRAIN = "vcosim_sample_terrain"
TARGETS = {
    "x86_64-linux": "x86_64-unknown-linux-gnu",
    "x86_64-windows": "x86_64-pc-windows-gnu",
}
"""FMI platform tuple (FMI 3's names; FMI 2's linux64, win64) -> LLVM target triple."""
LEVELS = {"x86-64": "generic", "x86-64-v3": "x86-64-v3"}
"""x86-64 level (LLVM's CPU name, for the object code) -> numba's CPU name (for the IR). The
generic level runs on every x86-64 a master runs on; v3 where the CPU has AVX2."""


def advance_name(level: str) -> str:
    """The entry point of ``advance`` compiled for ``level``: vcosim_advance_x86_64_v3."""
    return f"{ADVANCE}_{level.replace('-', '_')}"


class KernelBuildError(VcosimError):
    """The kernel could not be compiled to object code (a numba or llvmlite failure)."""


def _kernel_ir(level: str) -> str:
    """The LLVM IR of the entry points, linked into one module (numba imported here).

    The generic level's also exports the parameter helpers; each level its own ``advance``.
    """
    import llvmlite.binding as llvm
    from numba import carray, cfunc, from_dtype, njit, types

    from vcosim.vehicle import layout as L
    from vcosim.vehicle.model import N_SCRATCH, advance
    from vcosim.vehicle.params import PARAM_DTYPE, body_properties, brake_torques
    from vcosim.vehicle.terrain import sample_terrain

    n_states, n_inputs, n_outputs = L.N_STATES, L.N_INPUTS, L.N_OUTPUTS
    f8, i8 = types.float64, types.int64
    f8p = types.CPointer(f8)
    record = types.CPointer(from_dtype(PARAM_DTYPE))

    # carray makes arrays over the caller's memory; numba's reference counting of them (on
    # no allocation: their meminfo is NULL) stays in, so these wrappers keep numba's runtime.
    @cfunc(types.void(f8p, f8p, record, f8p, f8p, f8p, f8p, i8, i8, f8p, i8), error_model="numpy")
    def advance_c(x, u, p, y, s, height, friction, rows, cols, grid, n):
        advance(
            carray(x, (n_states,)),
            carray(u, (n_inputs,)),
            carray(p, (1,)),
            carray(y, (n_outputs,)),
            carray(s, (N_SCRATCH,)),
            carray(height, (rows, cols)),
            carray(friction, (rows, cols)),
            carray(grid, (3,)),
            n,
        )

    body_kernel = njit(error_model="numpy")(body_properties)
    brakes_kernel = njit(error_model="numpy")(brake_torques)

    @cfunc(types.void(f8, f8, f8, f8, f8, f8, f8, f8, f8p), error_model="numpy")
    def body_c(m_c, m_m, wheelbase, track, height, roll, pitch, yaw, out):
        values = body_kernel(m_c, m_m, wheelbase, track, height, roll, pitch, yaw)
        for k in range(6):
            out[k] = values[k]

    @cfunc(types.void(f8, f8, f8, f8p), error_model="numpy")
    def brakes_c(front, rear, share, out):
        out[0], out[1] = brakes_kernel(front, rear, share)

    @cfunc(types.void(f8p, f8p, i8, i8, f8p, f8, f8, f8p), error_model="numpy")
    def terrain_c(height, friction, rows, cols, grid, x, y, out):
        h, dhdx, dhdy, mu = sample_terrain(
            carray(height, (rows, cols)), carray(friction, (rows, cols)), carray(grid, (3,)), x, y
        )
        out[0], out[1], out[2], out[3] = h, dhdx, dhdy, mu

    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    linked = None
    wrappers: tuple[tuple[Any, str], ...] = (
        (advance_c, advance_name(level)),
        (body_c, BODY),
        (brakes_c, BRAKES),
        (terrain_c, TERRAIN),
    )
    exported = {advance_name(level)} | ({BODY, BRAKES, TERRAIN} if level == "x86-64" else set())
    for wrapper, name in wrappers:
        module = llvm.parse_assembly(wrapper._library.get_llvm_str())
        module.get_function(wrapper.native_name).name = name
        if linked is None:
            linked = module
        else:
            linked.link_in(module)
    assert linked is not None
    # Only the entry points leave the object file. The others are renamed in order: numba's
    # names count the functions the process compiled, so a kernel compiled afresh and one
    # loaded from numba's cache would otherwise differ in their (local) symbols.
    # What no entry point uses is dropped first (a cached kernel and one compiled afresh
    # carry different unused environment pointers).
    tag = level.replace("-", "_")
    for function in linked.functions:
        if not function.is_declaration and function.name not in exported:
            function.linkage = "internal"
    for variable in linked.global_variables:
        if not variable.is_declaration:
            variable.linkage = "internal"
    _drop_unused(linked)
    internal = [f for f in linked.functions if not f.is_declaration and f.name not in exported]
    for i, function in enumerate(internal):
        function.name = f"vcosim_{tag}_f{i}"
    variables = [v for v in linked.global_variables if not v.is_declaration]
    for i, variable in enumerate(variables):  # numba's environment pointers (unused here)
        variable.name = f"vcosim_{tag}_g{i}"
    linked.verify()
    return str(linked)


def _drop_unused(module: Any) -> None:
    """Remove the internal functions and globals nothing uses (LLVM's global DCE)."""
    import llvmlite.binding as llvm

    machine = llvm.Target.from_default_triple().create_target_machine()
    builder = llvm.create_pass_builder(machine, llvm.create_pipeline_tuning_options())
    manager = llvm.ModulePassManager()
    manager.add_global_dead_code_eliminate_pass()
    manager.run(module, builder)


def _emit(ir: str, triple: str, level: str) -> bytes:
    """Object code of ``ir`` for ``triple`` and the x86-64 ``level`` (position independent)."""
    import llvmlite.binding as llvm

    module = llvm.parse_assembly(ir)
    module.triple = triple
    machine = llvm.Target.from_triple(triple).create_target_machine(
        cpu=level, features="", opt=3, reloc="pic", codemodel="default"
    )
    module.data_layout = str(machine.target_data)
    return bytes(machine.emit_object(module))


_COMPILED: dict[tuple[str, str], bytes] = {}
"""Object code per (level, platform) compiled by this process: the kernel's sources do not
change while it runs, and a process building several FMUs (the tests) compiles them once."""
CACHE_VARIABLE = "VCOSIM_FMU_CACHE"
"""Environment variable: the folder of the kernel's object cache ("off": none)."""


def object_cache() -> Path | None:
    """The folder of compiled kernel objects kept between builds, or None (switched off).

    Named after everything that makes the objects: the physics sources and numba's version
    (the name of numba's own cache folder for them), this file, llvmlite's and Python's
    versions. A build finds its objects there instead of compiling the kernel again (most of
    a build's time); as a compile gives the same bytes every time, so does the cache.
    """
    chosen = os.environ.get(CACHE_VARIABLE)
    if chosen == "off":
        return None
    import llvmlite

    from vcosim.vehicle._jit_cache import cache_dir

    physics = cache_dir()
    digest = hashlib.sha256(physics.name.encode())
    digest.update(Path(__file__).read_bytes())
    digest.update(f"{llvmlite.__version__} {sys.version}".encode())
    base = Path(chosen) if chosen else physics.parent.parent / "fmu-kernels"
    return base / digest.hexdigest()[:16]


def _cached(cache: Path | None, level: str, platform: str) -> bytes | None:
    path = None if cache is None else cache / f"kernel-{level}-{platform}.o"
    return path.read_bytes() if path is not None and path.is_file() else None


def _keep(cache: Path | None, level: str, platform: str, code: bytes) -> None:
    """Store an object in the cache (written aside and renamed: a reader never sees half)."""
    if cache is None:
        return
    try:
        cache.mkdir(parents=True, exist_ok=True)
        part = cache / f"kernel-{level}-{platform}.o.{os.getpid()}.part"
        part.write_bytes(code)
        part.replace(cache / f"kernel-{level}-{platform}.o")
    except OSError:
        pass  # a read-only home: the next build compiles again, nothing worse


class KernelObjects:
    """The kernel's object files per platform (one per level), on their way into a folder.

    Taken from this process's memory or the object cache (``object_cache``) where they are;
    else compiled in child processes, one per level, side by side (their numba targets that
    level whatever this process's numba does), and kept in both. The children start at once,
    so the caller can work meanwhile (a build settles the vehicle) before ``wait``.
    """

    def __init__(self, folder: Path, platforms: tuple[str, ...]) -> None:
        unknown = [p for p in platforms if p not in TARGETS]
        if unknown:
            raise KernelBuildError(
                f"no kernel for platform {', '.join(unknown)}: {sorted(TARGETS)}"
            )
        self.folder, self.platforms = folder, platforms
        self.cache = object_cache()
        self.children: dict[str, subprocess.Popen[str]] = {}
        for level in LEVELS:
            for platform in platforms:
                code = _COMPILED.get((level, platform)) or _cached(self.cache, level, platform)
                if code is not None:
                    _COMPILED[level, platform] = code
            missing = [p for p in platforms if (level, p) not in _COMPILED]
            if missing:
                self.children[level] = _start(folder, level, missing)

    def wait(self) -> dict[str, list[Path]]:
        """The object files per platform, once the children (if any) are done."""
        for level, child in self.children.items():
            out, err = child.communicate()
            if child.returncode != 0:
                raise KernelBuildError(
                    f"compiling the vehicle kernel ({level}) failed:\n{err[-3000:]}"
                )
            for platform, path in json.loads(out.strip().splitlines()[-1]).items():
                _COMPILED[level, platform] = Path(path).read_bytes()
                _keep(self.cache, level, platform, _COMPILED[level, platform])
        self.children = {}
        written: dict[str, list[Path]] = {}
        for platform in self.platforms:
            written[platform] = []
            for level in LEVELS:
                path = self.folder / f"kernel-{level}-{platform}.o"
                path.write_bytes(_COMPILED[level, platform])
                written[platform].append(path)
        return written

    def cancel(self) -> None:
        """Stop the children (the build was refused meanwhile); safe twice."""
        for child in self.children.values():
            if child.poll() is None:
                child.kill()
            child.communicate()
        self.children = {}


def build_objects(folder: Path, platforms: tuple[str, ...]) -> dict[str, list[Path]]:
    """The kernel's object files per platform (one per level) in ``folder`` (KernelObjects)."""
    return KernelObjects(folder, platforms).wait()


def _start(folder: Path, level: str, platforms: list[str]) -> subprocess.Popen[str]:
    """Start the child that compiles the kernel at ``level`` for ``platforms``."""
    env = dict(os.environ, NUMBA_CPU_NAME=LEVELS[level], NUMBA_CPU_FEATURES="")
    command = [sys.executable, "-m", "vcosim.fmi.native.kernel", str(folder), level, *platforms]
    return subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def main(argv: list[str] | None = None) -> None:
    """The child process: write ``FOLDER/kernel-<level>-<platform>.o``, print them as JSON."""
    parser = argparse.ArgumentParser(prog="python -m vcosim.fmi.native.kernel")
    parser.add_argument("folder", type=Path)
    parser.add_argument("level", choices=sorted(LEVELS))
    parser.add_argument("platforms", nargs="+", choices=sorted(TARGETS))
    args = parser.parse_args(argv)
    ir = _kernel_ir(args.level)
    written = {}
    for platform in args.platforms:
        path = args.folder / f"kernel-{args.level}-{platform}.compiled.o"
        path.write_bytes(_emit(ir, TARGETS[platform], args.level))
        written[platform] = str(path)
    print(json.dumps(written))


if __name__ == "__main__":
    main()
