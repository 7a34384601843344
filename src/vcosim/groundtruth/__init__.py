"""Standard ground truth out of a run: ASAM OSI (UDP, traces) and Foxglove (live, recorded).

Each output is a face of the simulation host (``sim.attach(name, face)``): it samples every
vehicle at its own rate of simulated time (``sampling.Sampler``), reads them into arrays
(``objects.Objects``) and encodes them in its format. The formats' packages are optional
extras (``osi``, ``foxglove``), imported only by the modules that need them.
"""
