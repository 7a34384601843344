"""A System Structure Package (SSP 1.0) of co-simulation FMUs and their connections.

``write_ssp("loop.ssp", {"vehicle": "vehicle.fmu", "pi": "pi.fmu"}, [("vehicle.groundspeed",
"pi.groundspeed"), ("pi.throttle", "vehicle.throttle")])`` packs the FMUs into ``resources/``
and describes the system in ``SystemStructure.ssd``; FMPy runs it
(``fmpy.ssp.simulation.simulate_ssp``). Each connector's kind and type come from its FMU's
model description, so a misspelt variable is refused before anything is written.
"""

from __future__ import annotations

import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from xml.etree.ElementTree import Element, SubElement, register_namespace, tostring

from vcosim.errors import ConfigError

SSD = "http://ssp-standard.org/SSP1/SystemStructureDescription"
SSC = "http://ssp-standard.org/SSP1/SystemStructureCommon"
# FMI variable type -> SSP connector type.
_TYPES = {"Real": "Real", "Float64": "Real", "Integer": "Integer", "Int32": "Integer"} | {
    "Boolean": "Boolean"
}


def write_ssp(
    out: str | Path,
    components: Mapping[str, str | Path],
    connections: Sequence[tuple[str, str]],
    *,
    name: str = "system",
    stop_time: float | None = None,
) -> Path:
    """Write ``out``: ``components`` (name -> FMU) joined by ``connections`` ("a.x" -> "b.y")."""
    from fmpy import read_model_description

    variables = {
        component: {v.name: v for v in read_model_description(str(path)).modelVariables}
        for component, path in components.items()
    }
    problems: list[str] = []
    used: dict[str, dict[str, tuple[str, str]]] = {c: {} for c in components}
    for start, end in connections:
        for end_name, expected in ((start, "output"), (end, "input")):
            component, _, variable = end_name.partition(".")
            found = variables.get(component, {}).get(variable)
            if found is None:
                problems.append(f"{end_name}: no such component variable")
            elif found.causality != expected:
                problems.append(f"{end_name}: is an {found.causality}, not an {expected}")
            elif found.type not in _TYPES:
                problems.append(f"{end_name}: type {found.type} cannot be connected")
            else:
                used[component][variable] = (expected, _TYPES[found.type])
    if problems:
        raise ConfigError(problems, "SSP connections")

    register_namespace("ssd", SSD)
    register_namespace("ssc", SSC)
    root = Element(f"{{{SSD}}}SystemStructureDescription", version="1.0", name=name)
    system = SubElement(root, f"{{{SSD}}}System", name=name)
    elements = SubElement(system, f"{{{SSD}}}Elements")
    for component in components:
        element = SubElement(
            elements,
            f"{{{SSD}}}Component",
            name=component,
            source=f"resources/{component}.fmu",
            type="application/x-fmu-sharedlibrary",
        )
        connectors = SubElement(element, f"{{{SSD}}}Connectors")
        for variable, (kind, type_name) in used[component].items():
            connector = SubElement(connectors, f"{{{SSD}}}Connector", name=variable, kind=kind)
            SubElement(connector, f"{{{SSC}}}{type_name}")
    links = SubElement(system, f"{{{SSD}}}Connections")
    for start, end in connections:
        (a, _, x), (b, _, y) = start.partition("."), end.partition(".")
        SubElement(
            links,
            f"{{{SSD}}}Connection",
            startElement=a,
            startConnector=x,
            endElement=b,
            endConnector=y,
        )
    if stop_time is not None:
        SubElement(root, f"{{{SSD}}}DefaultExperiment", startTime="0", stopTime=f"{stop_time:g}")

    out = Path(out)
    with zipfile.ZipFile(out, "w") as package:
        package.writestr(
            "SystemStructure.ssd", tostring(root, encoding="UTF-8", xml_declaration=True)
        )
        for component, path in components.items():
            package.write(path, f"resources/{component}.fmu")
    return out
