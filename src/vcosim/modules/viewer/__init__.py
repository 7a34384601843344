"""The 3-D web viewer and live dashboard (NightRider's visualisation module, VM).

``vcosim view`` joins the bus as module 18 and serves a page (three.js, shipped with the
package, no network needed) that draws the car on its terrain, shows a HUD and a dashboard, and
lets a person drive with the keyboard or a gamepad.

- :mod:`~vcosim.modules.viewer.server`: the module: page, websocket and bus in one loop.
- :mod:`~vcosim.modules.viewer.state`: what the page shows (ground, car, latest state).
- :mod:`~vcosim.modules.viewer.commands`: the page's commands as bus messages, checked.
- :mod:`~vcosim.modules.viewer.gate`: only the viewer's own page, by its own name, drives.
- :mod:`~vcosim.modules.viewer.deadman`: a driving page that falls silent is taken off the
  throttle.
- :mod:`~vcosim.modules.viewer.report`: what the viewer counts.
"""

from vcosim.modules.viewer.commands import page_command
from vcosim.modules.viewer.server import Viewer, ViewerReport, ViewerStats
from vcosim.modules.viewer.state import VehicleState, terrain_json, vehicle_geometry

__all__ = [
    "VehicleState",
    "Viewer",
    "ViewerReport",
    "ViewerStats",
    "page_command",
    "terrain_json",
    "vehicle_geometry",
]
