"""Native FMUs: the vehicle kernel compiled ahead of time, a C layer for the FMI C API.

- :mod:`~vcosim.fmi.native.kernel`: numba's LLVM IR of ``advance`` (and of the parameter
  helpers a master's parameters go through) behind C entry points, emitted by llvmlite as an
  object file per target (x86_64 Linux and Windows).
- :mod:`~vcosim.fmi.native.toolchain`: the ``ziglang`` package's C compiler and linker, which
  builds the shared libraries for both targets on this machine.
- :mod:`~vcosim.fmi.native.vehicle`: the generated model header, the model description and
  the FMU archive.

The FMU then needs nothing but the C library and libm: no Python in the importing host.
"""
