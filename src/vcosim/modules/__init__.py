"""The driving simulator's modules on the NightRider bus, each a :class:`~.base.BusModule`.

- :mod:`~vcosim.modules.base`: the lifecycle they share, and the one place that meets the bus.
- :mod:`~vcosim.modules.input`: wheel, pedals, gamepad or keyboard to the bus; force feedback.
- :mod:`~vcosim.modules.sound`: synthesised engine, skid and event sounds.
- :mod:`~vcosim.modules.viewer`: the 3-D web view and dashboard.
- :mod:`~vcosim.modules.logger`: recording to MCAP and replaying (the format in ``recording``).
"""
