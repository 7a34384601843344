"""The C compiler and linker of the ``ziglang`` package: shared libraries for every target.

Zig's ``cc`` is clang with the C libraries of its targets, so this Linux machine links the
Linux ``.so`` and the Windows ``.dll`` alike, with no compiler of the user's system. The
Linux library is linked against glibc 2.17's symbols, so it loads on any distribution of the
last ten years.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from vcosim.errors import VcosimError

ZIG_TARGETS = {"x86_64-linux": "x86_64-linux-gnu.2.17", "x86_64-windows": "x86_64-windows-gnu"}
"""FMI 3 platform tuple -> zig's target (glibc version included for Linux)."""
SUFFIX = {"x86_64-linux": ".so", "x86_64-windows": ".dll"}
FLAGS = (
    "-std=c11",
    "-O2",
    "-g0",  # no debug information: it names the scratch folder, and the bytes would vary
    "-s",
    "-fPIC",
    "-fvisibility=hidden",  # only the FMI functions leave the library
    "-fno-fast-math",
    "-ffp-contract=off",  # no fused multiply-adds: the kernel's rounding, step for step
    "-Wall",
    "-Werror",
)


class ToolchainError(VcosimError):
    """The C layer did not compile or link; the compiler's own words follow."""


def zig_command() -> list[str]:
    """How to run zig: the ``ziglang`` package's module, with this interpreter."""
    try:
        import ziglang  # noqa: F401  (only to know it is there)
    except ImportError:
        raise ToolchainError(
            'building native FMUs needs the ziglang package: pip install -e ".[fmi]"'
        ) from None
    return [sys.executable, "-m", "ziglang"]


def zig_cc(platform: str, arguments: list[str], *, cwd: Path | None = None) -> None:
    """Run ``zig cc`` for ``platform`` with ``arguments``; ToolchainError with its output."""
    env = dict(os.environ)
    env.setdefault("ZIG_GLOBAL_CACHE_DIR", str(Path.home() / ".cache" / "vcosim" / "zig"))
    command = [*zig_command(), "cc", "-target", ZIG_TARGETS[platform], *arguments]
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ToolchainError(
            f"zig cc for {platform} failed ({done.returncode}):\n{done.stderr[-4000:]}"
        )


def link_library(
    platform: str,
    out: Path,
    sources: list[Path],
    objects: list[Path],
    include: list[Path],
    *,
    extra: tuple[str, ...] = (),
) -> Path:
    """Compile ``sources`` and link them with ``objects`` into the shared library ``out``."""
    arguments = ["-shared", *FLAGS, *extra, "-o", str(out)]
    arguments += [f"-I{folder}" for folder in include]
    arguments += [str(p) for p in (*sources, *objects)]
    if platform == "x86_64-linux":
        arguments += ["-lm", "-Wl,--build-id=none"]  # the same bytes from the same inputs
    zig_cc(platform, arguments)
    return out
