"""The 3-D web viewer and live dashboard (NightRider's visualisation module, VM).

``vcosim view`` joins the bus as module 18 and serves a page (three.js, shipped with the
package, no network needed) that draws the car on its terrain, shows a HUD and a dashboard, and
lets a person drive with the keyboard or a gamepad. See :mod:`vcosim.modules.viewer.server`.
"""

from vcosim.modules.viewer.server import VehicleState, Viewer, terrain_json

__all__ = ["Viewer", "VehicleState", "terrain_json", "run_view"]


def run_view(viewer: Viewer) -> dict:
    """Serve until Shutdown, Ctrl-C or SIGTERM; the viewer's counts at the end."""
    from vcosim.interrupts import sigterm_as_interrupt

    print(f"vcosim viewer: open {viewer.url} in a browser", flush=True)
    with sigterm_as_interrupt():
        try:
            viewer.serve()
        except KeyboardInterrupt:
            pass
        finally:
            viewer.stop()
    return viewer.report()
