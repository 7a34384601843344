"""``vcosim world``: a world file written out as standard files others read."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from vcosim.app.console import results, setup_logging
from vcosim.app.options import positive

world_app = typer.Typer(
    help="Worlds as standard files: export a world (docs/worlds.md) as OpenSCENARIO on an "
    "OpenDRIVE road (docs/scenarios.md).",
    no_args_is_help=True,
)


@world_app.command("export")
def export(
    world: Annotated[
        Path,
        typer.Argument(metavar="WORLD.toml", dir_okay=False, help="The world file to export."),
    ],
    out: Annotated[
        Path,
        typer.Argument(
            metavar="OUT.xosc",
            dir_okay=False,
            help="The scenario to write; its road goes beside it as OUT.xodr.",
        ),
    ],
    duration: Annotated[
        float,
        typer.Option(
            callback=positive,
            help="Simulated seconds: the scenario's stop trigger ends the run then.",
        ),
    ] = 60.0,
) -> None:
    """Write a world as OUT.xosc and OUT.xodr: `vcosim sim --scenario OUT.xosc` runs it again.

    Its vehicles start where they start, external ones with the external controller, and
    each profile driver's speeds and lane change become storyboard events; its polyline paths
    become roads (or its OpenDRIVE road is copied; without paths, a straight road under its
    vehicles); the stop trigger ends the run after --duration. What a scenario cannot say (IDM
    drivers, loops, SUMO, pictures of the ground) is refused, each named, exit 2.
    """
    from vcosim.openscenario.export import export_world
    from vcosim.world import WorldFile

    setup_logging()
    if out.suffix.lower() != ".xosc":
        raise typer.BadParameter(f"a .xosc file, not {out.name!r}", param_hint="OUT.xosc")
    road = export_world(WorldFile.load(world), out, f"world {world}", duration)
    results.print(f"wrote {out} and its road {road}", highlight=False, soft_wrap=True)
