"""The NightRider message bus: catalogue, codec, router, client, and the vehicle as a module.

The vehicle module (``vcosim.bus.vehicle_module``) imports the vehicle model; import it only
where a simulation runs, so the router and other modules start fast.
"""

from vcosim.bus.catalogue import (
    CATALOGUE,
    FMLM,
    FMVM,
    IMFM,
    IMVM,
    VMFM,
    EngineStatus,
    ForceFeedback,
    IMVMCamera,
    Message,
    ModuleId,
    Shutdown,
    SoundCont,
    SoundOnce,
    SoundStop,
    WorldPose,
    WorldVehicle,
)
from vcosim.bus.client import DEFAULT_PORT, BusClient, Copy
from vcosim.bus.codec import Codec
from vcosim.bus.router import Router

__all__ = [
    "CATALOGUE",
    "DEFAULT_PORT",
    "FMLM",
    "FMVM",
    "IMFM",
    "IMVM",
    "VMFM",
    "BusClient",
    "Codec",
    "Copy",
    "EngineStatus",
    "ForceFeedback",
    "IMVMCamera",
    "Message",
    "ModuleId",
    "Router",
    "Shutdown",
    "SoundCont",
    "SoundOnce",
    "SoundStop",
    "WorldPose",
    "WorldVehicle",
]
