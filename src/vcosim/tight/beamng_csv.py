"""BeamNG.tech's interface CSV: which signals each direction of the coupling carries.

(Just past 400 lines: the CSV's reader, its checks and BeamNG's published signal names are one
format, kept with its documentation.)

Current BeamNG.tech (its 2024 Simulink S-function, its ``tech/cosimulationCoupling``
controller) describes an interface in a CSV file with the columns Section, Subsection,
Parameter Name, Parameter Value, Type, Description, Units, Notes. ``signalTo`` rows are the
values BeamNG sends to the controller, in message order after the id; ``signalFrom`` rows
are the controller's reply, in order, each one a channel (value, multiply, add or freeze) of
a driver control or wheel torque; ``connection`` rows give the controller's computation time,
the ping time and both UDP endpoints (``otherUDP``: the controller, ``beamngUDP``: the
simulator); ``vehicle`` rows name a BeamNG vehicle and are not used here.

This module reads such a file and maps BeamNG's signal names to vcosim's quantities. A name
vcosim cannot serve is reported with its line, all problems at once, before anything starts.
"""

from __future__ import annotations

import csv
import ipaddress
import re
from dataclasses import dataclass, field
from pathlib import Path

from vcosim.config import LARGEST_NUMBER, SMALLEST_NUMBER, read_config_text
from vcosim.errors import ConfigError
from vcosim.vehicle import layout as L
from vcosim.vehicle.inputs import KIND_CODES, element

MAX_FIELD_CHARS = 1000
"""The longest field read: names, numbers and descriptions are tens of characters."""

# -- simulator -> controller: BeamNG name -> vcosim source name (see interface.SOURCE_NAMES) ----
KINEMATICS = {
    **{f"vehiclePosition{a}": f"pos{a}" for a in "XYZ"},
    **{f"vehicleVelocity{a}": f"vel{a}" for a in "XYZ"},
    **{f"vehicleAcceleration{a}": f"acc{a}" for a in "XYZ"},
    "vehicleRoll": "roll",
    "vehiclePitch": "pitch",
    "vehicleYaw": "yaw",
    "vehicleRollRate": "roll_rate",
    "vehiclePitchRate": "pitch_rate",
    "vehicleYawRate": "yaw_rate",
    "vehicleGroundSpeed": "groundspeed",
    "vehicleAltitude": "altitude",
    **{f"vehicle{d}{a}": f"{d.lower()}{a}" for d in ("Forward", "Up", "Right") for a in "XYZ"},
}
KINEMATICS_UNSERVED = (
    "vehicleInitialLength",
    "vehicleInitialWidth",
    "vehicleInitialHeight",
    "vehicleCOGWithGravity",
    "vehicleCOGWithoutGravity",
    *(
        f"vehicle{p}{a}"
        for p in ("MidFrontBumper", "MidRearBumper", "FrontAxleMidpoint", "RearAxleMidpoint")
        for a in "XYZ"
    ),
)
DRIVER_TO = {
    "throttle": "throttle",
    "throttleInput": "throttle_input",
    "brake": "brake",
    "brakeInput": "brake_input",
    "clutch": "clutch",
    "clutchInput": "clutch_input",
    "parkingBrake": "parkingbrake",
    "parkingBrakeInput": "parkingbrake_input",
    "steeringWheelPosition": "steering",
    "steeringWheelPositionInput": "steering_input",
}
WHEEL_TO = {
    "wheelSpeed": "wheelSpeed",
    "angularVelocity": "angularVelocity",
    "downforce": "downForce",
    "brakingTorque": "brakingTorque",
    "propulsionTorque": "propulsionTorque",
    "frictionTorque": "frictionTorque",
    "wheelAngle": "wheelAngle",
}
ELECTRICS = {
    "wheelspeed": "wheelspeed",
    "engineLoad": "engineLoad",
    "maxrpm": "maxrpm",
    "ignitionLevel": "ignitionLevel",
    "gearIndex": "gear",
    "rpm": "rpm",
    "fuel": "fuel",
    "reverse": "reverse",
    "signal_L": "signal_L",
    "signal_R": "signal_R",
    "highbeam": "highbeam",
    "lowbeam": "lowbeam",
    "engineRunning": "engine_running",
    "isShifting": "shift_in_progress",
    **{
        n: n
        for n in (
            "throttle",
            "throttle_input",
            "brake",
            "brake_input",
            "clutch",
            "clutch_input",
            "parkingbrake",
            "parkingbrake_input",
            "steering",
            "steering_input",
        )
    },
}
SENSOR_GROUPS = ("IMU", "GPS", "Ideal RADAR", "Roads")

# -- controller -> simulator: BeamNG name -> the vehicle input (catalogue name) it sets ---------
DRIVER_INPUTS = {
    "throttle": "throttle",
    "brake": "brake",
    "clutch": "clutch",
    "parkingBrake": "parkingbrake",
    "steeringWheelPosition": "steering",
}
WHEEL_INPUTS = {
    f"{quantity}Torque{w}": f"{quantity}_torque_{w}"
    for quantity in ("braking", "propulsion")
    for w in L.WHEELS
}


def _targets(names: dict[str, str]) -> dict[str, tuple[int, float, float, int]]:
    """BeamNG name -> (input-array slot, low, high, kind code), from the input catalogue."""
    table = {}
    for beamng, ours in names.items():
        entry, k = element(ours)
        table[beamng] = (entry.index + k, entry.low, entry.high, KIND_CODES[entry.kind])
    return table


DRIVER_FROM = _targets(DRIVER_INPUTS)
WHEEL_FROM = _targets(WHEEL_INPUTS)
CHANNELS = ("value", "multiply", "add", "freeze")

_WHEEL_NAME = re.compile(rf"^({'|'.join(WHEEL_TO)})({'|'.join(L.WHEELS)})$")


@dataclass(frozen=True)
class SignalTo:
    """One value the simulator sends: BeamNG's name, vcosim's source, the CSV line."""

    name: str
    source: str
    line: int
    boolean: bool = False


@dataclass(frozen=True)
class SignalFrom:
    """One channel of the controller's reply."""

    name: str
    target: int  # vehicle input index
    low: float
    high: float
    channel: str  # value, multiply, add, freeze
    line: int
    boolean: bool = False
    kind: int = 0  # the input's kind code (``vcosim.vehicle.inputs``)


@dataclass
class Connection:
    """The connection rows; None where the file does not say."""

    ext_time: float | None = None
    ping_time: float | None = None
    controller_host: str | None = None
    controller_port: int | None = None
    simulator_host: str | None = None
    simulator_port: int | None = None


@dataclass
class InterfaceFile:
    """A parsed BeamNG interface CSV."""

    path: Path
    signals_to: list[SignalTo] = field(default_factory=list)
    signals_from: list[SignalFrom] = field(default_factory=list)
    connection: Connection = field(default_factory=Connection)
    vehicle: dict[str, str] = field(default_factory=dict)


def _source_to(group: str, name: str) -> str | None | tuple[()]:
    """The vcosim source of a signalTo name; None: unknown name; (): known but not served."""
    if group == "Kinematics":
        if name in KINEMATICS:
            return KINEMATICS[name]
        return () if name in KINEMATICS_UNSERVED else None
    if group == "Driver":
        return DRIVER_TO.get(name)
    if group == "Wheels":
        match = _WHEEL_NAME.match(name)
        if match is None:
            return None
        quantity, wheel = match.groups()
        if WHEEL_TO[quantity] == "wheelAngle":
            return "road_wheel_angle" if wheel.startswith("F") else "zero"
        return f"wheel{wheel}_{WHEEL_TO[quantity]}"
    if group == "Electrics":
        return ELECTRICS.get(name, ())
    return None


def _suggest(name: str, known: list[str]) -> str:
    import difflib

    close = difflib.get_close_matches(name, known, n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def _signal_to(group: str, name: str, kind: str, line: int, problems: list[str]) -> SignalTo | None:
    where = f"line {line}: signalTo {group} {name!r}"
    if group == "Powertrain":
        problems.append(
            f"{where}: vcosim's engine and driveline have no BeamNG powertrain "
            "devices; use Electrics rpm, engineLoad, gearIndex or the Wheels group"
        )
        return None
    if any(group.startswith(s) for s in SENSOR_GROUPS):
        problems.append(
            f"{where}: BeamNG sensors (IMU, GPS, ideal RADAR, roads) are not simulated by vcosim"
        )
        return None
    if group not in ("Kinematics", "Driver", "Wheels", "Electrics"):
        problems.append(f"{where}: unknown group (Kinematics, Driver, Wheels, Electrics)")
        return None
    source = _source_to(group, name)
    if source == ():
        reason = (
            "vcosim's vehicle has no body geometry beyond wheelbase and track"
            if group == "Kinematics"
            else "not an electrics value vcosim computes"
        )
        problems.append(f"{where}: {reason}")
        return None
    if source is None:
        known = {
            "Kinematics": list(KINEMATICS),
            "Driver": list(DRIVER_TO),
            "Wheels": [f"{q}{w}" for q in WHEEL_TO for w in L.WHEELS],
        }[group]
        problems.append(f"{where}: unknown name{_suggest(name, known)}")
        return None
    return SignalTo(name, str(source), line, kind == "boolean")


def _signal_from(
    group: str, name: str, channel: str, kind: str, line: int, problems: list[str]
) -> SignalFrom | None:
    where = f"line {line}: signalFrom {group} {name!r}"
    table = {"Driver": DRIVER_FROM, "Wheels": WHEEL_FROM}.get(group)
    if table is None:
        problems.append(f"{where}: the controller can send only Driver and Wheels signals")
        return None
    if name not in table:
        if name.startswith("frictionTorque"):
            problems.append(
                f"{where}: vcosim's wheels take no friction-torque input (bearing "
                "and rolling friction are part of the model); leave it out"
            )
        else:
            problems.append(f"{where}: unknown name{_suggest(name, list(table))}")
        return None
    mode = channel.strip().lower() or "value"
    if mode not in CHANNELS:
        problems.append(f"{where}: channel {channel!r} is not one of {', '.join(CHANNELS)}")
        return None
    target, low, high, code = table[name]
    return SignalFrom(name, target, low, high, mode, line, kind == "boolean", code)


def _number(text: str, where: str, problems: list[str], *, positive: bool = False) -> float | None:
    try:
        value = float(text)
    except ValueError:
        problems.append(f"{where}: {text!r} is not a number")
        return None
    if value != value or (positive and value <= 0.0):
        problems.append(f"{where}: {text!r} must be a positive number")
        return None
    if not SMALLEST_NUMBER <= abs(value) <= LARGEST_NUMBER and value != 0.0:
        problems.append(f"{where}: {text!r} is out of range (|x| in 1e-12..1e12)")
        return None
    return value


def _port(text: str, where: str, problems: list[str]) -> int | None:
    value = _number(text, where, problems)
    if value is None:
        return None
    if value != int(value) or not 0 <= value <= 65535:
        problems.append(f"{where}: {text!r} is not a UDP port (0-65535)")
        return None
    return int(value)


def _host(text: str, where: str, problems: list[str]) -> str | None:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        problems.append(f"{where}: {text!r} is not an IP address")
        return None
    return text


def _connection_row(
    sub: str, name: str, value: str, line: int, conn: Connection, problems: list[str]
) -> None:
    where = f"line {line}: connection {sub + ' ' if sub else ''}{name!r}"
    key = name.strip().lower()
    if not sub and key == "3rd party computation time":
        conn.ext_time = _number(value, where, problems, positive=True)
    elif not sub and key == "ping time":
        conn.ping_time = _number(value, where, problems, positive=True)
    elif sub in ("otherUDP", "beamngUDP") and key in ("ip", "port"):
        side = "controller" if sub == "otherUDP" else "simulator"
        if key == "ip":
            setattr(conn, f"{side}_host", _host(value, where, problems))
        else:
            setattr(conn, f"{side}_port", _port(value, where, problems))
    else:
        problems.append(f"{where}: unknown connection parameter")


def _rows(text: str, problems: list[str]) -> list[list[str]]:
    """The CSV's rows, a field over ``MAX_FIELD_CHARS`` cut off with a problem naming it."""
    rows: list[list[str]] = []
    reader = csv.reader(text.splitlines())
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return rows
        except csv.Error as error:  # a field beyond the csv module's own limit
            problems.append(
                f"line {reader.line_num}: a field of more than {MAX_FIELD_CHARS} characters "
                f"({error})"
            )
            continue
        for i, value in enumerate(row):
            if len(value) > MAX_FIELD_CHARS:
                problems.append(
                    f"line {reader.line_num}: field {i + 1} has {len(value)} characters "
                    f"(at most {MAX_FIELD_CHARS})"
                )
                row[i] = ""
        rows.append(row)


def read_interface_csv(path: str | Path) -> InterfaceFile:
    """Read and check a BeamNG interface CSV; raise ``ConfigError`` listing every problem."""
    path = Path(path)
    text = read_config_text(path, f"interface CSV {path}", encoding="utf-8-sig")
    parsed = InterfaceFile(path)
    problems: list[str] = []
    for line, row in enumerate(_rows(text, problems), start=1):
        fields = [f.strip() for f in row] + [""] * 5
        section, sub, name, value, kind = fields[:5]
        if not any(fields) or (line == 1 and section.lower() == "section"):
            continue
        kind = kind.lower() or "number"
        if section in ("signalTo", "signalFrom") and kind not in ("number", "boolean"):
            problems.append(f"line {line}: type {fields[4]!r} is not number or boolean")
            continue
        if section == "signalTo":
            signal = _signal_to(sub, name, kind, line, problems)
            if signal is not None:
                parsed.signals_to.append(signal)
        elif section == "signalFrom":
            incoming = _signal_from(sub, name, value, kind, line, problems)
            if incoming is not None:
                parsed.signals_from.append(incoming)
        elif section == "connection":
            _connection_row(sub, name, value, line, parsed.connection, problems)
        elif section == "vehicle":
            parsed.vehicle[name] = value
        else:
            problems.append(
                f"line {line}: unknown section {section!r} (signalTo, signalFrom, "
                "connection, vehicle)"
            )
    first: dict[str, int] = {}
    for signal in parsed.signals_to:
        if signal.name in first:
            problems.append(
                f"line {signal.line}: signalTo {signal.name!r} already given on line "
                f"{first[signal.name]}"
            )
        first.setdefault(signal.name, signal.line)
    seen: dict[tuple[str, str], int] = {}
    for channel in parsed.signals_from:
        key = (channel.name, channel.channel)
        if key in seen:
            problems.append(
                f"line {channel.line}: signalFrom {channel.name!r} {channel.channel} "
                f"channel already given on line {seen[key]}"
            )
        seen.setdefault(key, channel.line)
    if not parsed.signals_to and not parsed.signals_from and not problems:
        problems.append("no signalTo or signalFrom rows: not a BeamNG interface CSV")
    if problems:
        raise ConfigError([f"{path.name} {p}" for p in problems], f"interface CSV {path}")
    return parsed
