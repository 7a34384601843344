"""vcosim inside any FMI master: the vehicle as an FMU, and the controller side as one.

- :func:`~vcosim.fmi.build.build_vehicle_fmu`: a co-simulation FMU of the vehicle itself, no
  sockets (:mod:`vcosim.fmi.vehicle`).
- :func:`~vcosim.fmi.build.build_coupling_fmu`: the controller side of the tight coupling, so
  an FMI master drives a running ``vcosim sim`` or BeamNG.tech (:mod:`vcosim.fmi.coupling`).

Both are native (:mod:`vcosim.fmi.native`): the vehicle FMU is the kernel compiled ahead of
time behind a C layer for the FMI C API, the coupling FMU a C layer that speaks the wire
(the fixed layout or an interface CSV's). Neither needs Python in the importing host.
"""
