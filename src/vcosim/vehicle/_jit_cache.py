"""Where the compiled physics kernels are cached.

numba invalidates a cached function only when its own source file changes, not when a
function it calls (and inlines) or a constant it reads changes in another file. The kernels
span several files (the vehicle's, and the world's, which read the vehicle's layout), so their
cache lives in a directory named after a hash of all of them: any edit compiles afresh.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numba

HERE = Path(__file__).parent
WORLD = HERE.parent / "world"
BLAS_CHECK = "scipy.linalg"
"""What numba imports to learn whether BLAS is there, when its array functions first load."""


@functools.cache
def cache_dir() -> Path:
    """The cache directory for the current physics sources."""
    digest = hashlib.sha256()
    for path in sorted([*HERE.glob("*.py"), *WORLD.glob("*.py")]):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "vcosim" / "numba"
    return base / f"{numba.__version__}-{digest.hexdigest()[:16]}"


@contextmanager
def physics_cache() -> Iterator[None]:
    """Decorate kernels imported inside this block with a cache in ``cache_dir()``."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        yield  # the user chose a cache location; respect it
        return
    config: Any = numba.config  # CACHE_DIR is set at runtime; the stubs do not know it
    previous = config.CACHE_DIR
    config.CACHE_DIR = str(cache_dir())
    try:
        yield
    finally:
        config.CACHE_DIR = previous


def njit(**options: Any) -> Callable[[Callable[..., Any]], Any]:
    """``numba.njit(cache=True, **options)``, cached in ``cache_dir()``.

    Every kernel is decorated through this, so its cache is the physics sources' whichever
    module imported it first.
    """

    def decorate(function: Callable[..., Any]) -> Any:  # a dispatcher, called as the function
        _load_numba_without_blas_check()
        with physics_cache():
            return numba.njit(cache=True, **options)(function)

    return decorate


@functools.cache
def _load_numba_without_blas_check() -> None:
    """Load numba's CPU functions without its BLAS check: 0.3 s of CPU off every process.

    When numba first loads its array functions (the first kernel a process compiles or
    takes from the cache), it asks whether BLAS can be had by importing all of
    ``scipy.linalg``, where scipy is installed (the scenarios extra brings it). No kernel here
    calls BLAS, and numba's one use of the answer is an inner product that then loops; a
    kernel with ``np.dot`` would still find BLAS when compiled, as ``scipy.linalg`` is
    importable again afterwards.
    """
    if BLAS_CHECK in sys.modules:
        return
    from numba.core.registry import cpu_target

    sys.modules[BLAS_CHECK] = None  # type: ignore[assignment]  # an import now raises ImportError
    try:
        cpu_target.target_context.refresh()
    finally:
        del sys.modules[BLAS_CHECK]


kernel = njit()  # the plain kind: ``@kernel``


def entry_point(kernel: Any, args: tuple[object, ...]) -> Callable[..., Any]:
    """``kernel``'s machine code for arguments of these types, or the kernel itself.

    numba's compiled entry point skips the dispatcher's type check of every argument, most
    of a small kernel's cost from Python; the callers' arrays keep their types.
    """
    try:
        signature = tuple(kernel.typeof_pyval(a) for a in args)
        if signature not in kernel.overloads:
            kernel.compile(signature)  # (or loads it from the cache)
        return kernel.overloads[signature].entry_point
    except (AttributeError, KeyError, TypeError):
        return kernel
