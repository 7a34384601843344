"""vcosim inside any FMI master: the vehicle as an FMU, and the controller side as one.

- :func:`~vcosim.fmi.build.build_vehicle_fmu`: a co-simulation FMU of the vehicle itself, no
  sockets (:mod:`vcosim.fmi.vehicle`).
- :func:`~vcosim.fmi.build.build_coupling_fmu`: the controller side of the tight coupling, so
  an FMI master drives a running ``vcosim sim`` or BeamNG.tech (:mod:`vcosim.fmi.coupling`).

The vehicle FMU is native (:mod:`vcosim.fmi.native`): the kernel compiled ahead of time
behind a C layer for the FMI C API, needing no Python in the importing host. The coupling
FMU is built with pythonfmu (FMI 2) or pythonfmu3 (FMI 3): it embeds the importing host's
Python, which must have vcosim installed (docs/fmi.md). Nothing here imports pythonfmu
until such an FMU is built or instantiated.
"""
