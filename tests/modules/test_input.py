from __future__ import annotations

import logging
import threading
from pathlib import Path

import pytest

from vcosim.bus.catalogue import (
    IMFM,
    IMVM,
    ForceFeedback,
    IMVMCamera,
    ModuleId,
    Shutdown,
    SoundOnce,
)
from vcosim.bus.client import BusClient, Copy
from vcosim.bus.router import Router
from vcosim.bus.vehicle_module import steering_from_wheel
from vcosim.errors import ConfigError
from vcosim.modules.input import (
    AxisMap,
    ButtonMap,
    ForceFeedbackOutput,
    IdleModule,
    InputModule,
    InputReport,
    Mapping,
    ScriptedBackend,
    Step,
    calibration_wizard,
    load_mapping,
    save_mapping,
)

B = [False] * 6


def press(i: int) -> list[bool]:
    return [j == i for j in range(6)]


def drain(monitor: BusClient, until: type, timeout: float = 5.0) -> list[Copy]:
    """Every copy up to and including the first message of type ``until``."""
    copies: list[Copy] = []
    while (copy := monitor.next_copy(timeout)) is not None:
        copies.append(copy)
        if isinstance(copy.message, until):
            break
    return copies


def run_module(
    router: Router,
    backend: ScriptedBackend,
    mapping: Mapping | None = None,
) -> tuple[InputReport, list[Copy]]:
    port = router.address[1]
    with BusClient(ModuleId.LOGGING, port=port, monitor=True) as monitor:
        module = InputModule(backend, mapping, port=port, pace="fast")
        report = module.run()
        # the module's last message: a quit's Shutdown, else the final IMVM
        copies = drain(monitor, Shutdown if report.quit else type(None), timeout=0.5)
    return report, copies


def test_scripted_sequence_gives_expected_imfm_at_25_hz(router: Router) -> None:
    script = ScriptedBackend(
        [
            Step(0.0, [0.0, 0.0, 0.0], B),
            Step(0.2, [-1.0, 0.5, 0.0], B),  # wheel full left, half throttle
            Step(0.4, [1.0, 1.0, 0.0], press(0)),  # full right, full throttle, shift up
            Step(0.6, [0.0, 0.0, 1.0], B),  # centred, full brake
        ],
        end=0.99,
    )
    report, copies = run_module(router, script)
    imfm = [c.message for c in copies if isinstance(c.message, IMFM)]
    imvm = [c.message for c in copies if isinstance(c.message, IMVM)]
    assert report.polls == 100 and len(imfm) == 25 and len(imvm) == 25  # 100 Hz, 25 Hz
    assert all(c.sender == ModuleId.INPUT for c in copies)
    values = [(m.throttle, m.brake, m.steering, m.shift) for m in imfm]
    assert values[:5] == [(0, 0, 128, 0)] * 5  # 0.00-0.16 s
    assert values[5:10] == [(128, 0, 0, 0)] * 5  # 0.20-0.36 s
    assert values[10] == (255, 0, 255, 1) and imfm[10].enqueue  # shift rides, queued
    assert values[11:15] == [(255, 0, 255, 0)] * 4
    assert values[15:] == [(0, 255, 128, 0)] * 10
    assert steering_from_wheel(imfm[5].steering) == 1.0  # the vehicle reads full left
    assert imvm[5].angle == pytest.approx(900 / 2 * 3.14159265 / 180)  # + left, rad
    assert imvm[10].angle == pytest.approx(-imvm[5].angle)
    assert all(m.to == ModuleId.VEHICLE for m in imfm)
    assert list(report.to_dict()) == [  # the keys of the JSON summary, in order
        "module_id",
        "device",
        "polls",
        "sent",
        "received",
        "force_feedback",
        "quit",
        "shutdown_received",
        "malformed",
    ]
    assert report.sent == {"IMFM": 25, "IMVM": 25} and report.device == "scripted"


def test_buttons_horn_camera_and_quit(router: Router) -> None:
    script = ScriptedBackend(
        [
            Step(0.0, [0, 0, 0], B),
            Step(0.05, [0, 0, 0], press(2)),
            Step(0.10, [0, 0, 0], press(2)),  # held: one horn only
            Step(0.15, [0, 0, 0], press(3)),
            Step(0.2, [0, 0, 0], B),
            Step(0.3, [0, 0, 0], press(5)),
        ],
        end=5.0,
    )
    report, copies = run_module(router, script)
    assert report.quit is True and report.polls == 31  # ticks 0..30: quit at 0.30 s
    kinds = [type(c.message) for c in copies]
    assert kinds.count(SoundOnce) == 1 and kinds.count(IMVMCamera) == 1
    horn = next(c.message for c in copies if isinstance(c.message, SoundOnce))
    assert (horn.file, horn.volume, horn.to) == ("horn.wav", 255, ModuleId.SOUND)
    assert kinds[-1] is Shutdown and copies[-1].message.to == 0  # to all, through the router
    assert router.wait_until(lambda: router.stopped.is_set(), 2.0)


def test_force_feedback_rumbles_or_says_once(
    router: Router, caplog: pytest.LogCaptureFixture
) -> None:
    port = router.address[1]
    script = ScriptedBackend([Step(0.0, [0, 0, 0], B)], end=1.0)
    module = InputModule(script, port=port, pace="realtime")
    module.connect(timeout=2.0)
    thread = threading.Thread(target=module.run)
    thread.start()
    with BusClient(ModuleId.VEHICLE, port=port) as vehicle:
        vehicle.send(ForceFeedback(-0.5, 0.03, to=ModuleId.INPUT, enqueue=True))
        vehicle.send(Shutdown(to=ModuleId.INPUT))
        thread.join(timeout=5)
    assert not thread.is_alive() and module.shutdown
    assert list(script.rumbles) == [(0.5, 0.03)]

    class NoRumble(ScriptedBackend):
        def rumble(self, strength: float, duration: float) -> bool:
            return False

    ffb = ForceFeedbackOutput(NoRumble([], name="plain pad"))
    with caplog.at_level(logging.WARNING):
        for _ in range(3):
            ffb.apply(ForceFeedback(0.2, 0.03))
    assert ffb.kind == "none" and ffb.applied == 0
    assert caplog.text.count("'plain pad' has neither a constant-force effect nor rumble") == 1


def test_axis_mapping_invert_dead_zone_range() -> None:
    pedal = AxisMap(axis=1, invert=True, dead_zone=0.1, low=-1.0, high=1.0)  # rests at +1
    assert pedal.pedal(1.0) == 0.0 and pedal.pedal(0.85) == 0.0  # in the dead zone
    assert pedal.pedal(-1.0) == 1.0 and pedal.pedal(0.0) == pytest.approx(0.4 / 0.9)
    wheel = AxisMap(axis=0, dead_zone=0.05, low=-0.5, high=0.5)
    assert wheel.centred(0.02) == 0.0 and wheel.centred(0.7) == 1.0
    assert wheel.centred(-0.5) == -1.0


def test_mapping_round_trips(tmp_path: Path) -> None:
    mapping = Mapping(
        device='Logitech "G29"',
        steering_lock_deg=540,
        axes={
            "steering": {"axis": 0, "dead_zone": 0.03},
            "throttle": {"axis": 2, "invert": True, "low": -1.0, "high": 1.0},
            "brake": {"axis": 3, "invert": True, "dead_zone": 0.05},
        },
        buttons={
            "shift_up": 4,
            "shift_down": 5,
            "horn": 23,
            "camera": 7,
            "engine_start": None,
            "quit": 9,
        },
    )
    path = tmp_path / "wheel.toml"
    save_mapping(mapping, path)
    assert load_mapping(path) == mapping
    save_mapping(Mapping(), path)
    assert load_mapping(path) == Mapping()


def test_bad_mapping_file_lists_every_problem_with_its_key(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(
        "steering_lock = 900\n[axes.steering]\naxis = -1\ndead_zone = 0.7\n"
        '[buttons]\nhorn = "two"\nquit = 0\n'
    )
    with pytest.raises(ConfigError) as err:
        load_mapping(path)
    text = str(err.value)
    for key in (
        "steering_lock: unknown key",
        "axes.steering.axis:",
        "axes.steering.dead_zone:",
        "buttons.horn:",
    ):
        assert key in text, text
    path.write_text("[buttons]\nhorn = 1\nquit = 3\n")  # shift_down 1, camera 3 by default
    with pytest.raises(ConfigError) as err:
        load_mapping(path)
    assert err.value.problems == [
        "buttons: shift_down and horn are both button 1; camera and quit are both button 3"
    ]
    path.write_text("axes = [")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_mapping(path)


def test_mapping_naming_a_missing_axis_is_reported(router: Router) -> None:
    mapping = Mapping(axes={"throttle": {"axis": 5}}, buttons={"quit": 11})
    pad = ScriptedBackend([], name="Gamepad X", axes=4, buttons=10)
    with pytest.raises(ConfigError) as err:
        InputModule(pad, mapping, port=router.address[1])
    assert err.value.problems == [
        "axes.throttle.axis: axis 5 does not exist on 'Gamepad X' (it has 4 axes: 0..3)",
        "buttons.quit: button 11 does not exist on 'Gamepad X' (it has 10 buttons: 0..9)",
    ]


def test_script_file(tmp_path: Path) -> None:
    path = tmp_path / "drive.toml"
    path.write_text(
        "end = 2.0\n[[step]]\nt = 0.0\naxes = [0.0, 1.0, 0.0]\n"
        "[[step]]\nt = 1.0\naxes = [0.5, 0.0, 1.0]\nbuttons = [0, 1]\n"
    )
    backend = ScriptedBackend.from_toml(path)
    assert backend.read(0.5) == ([0.0, 1.0, 0.0], B)
    assert backend.read(1.5) == ([0.5, 0.0, 1.0], press(1))
    assert not backend.finished(2.0) and backend.finished(2.01)
    path.write_text("[[step]]\naxes = [1]\n")
    with pytest.raises(ConfigError, match="input script"):
        ScriptedBackend.from_toml(path)


def test_pygame_with_dummy_drivers() -> None:
    pytest.importorskip("pygame", reason="pygame-ce (the input extra) is not installed")
    from vcosim.modules.input import PygameBackend, find_devices

    assert find_devices() == []  # SDL's dummy joystick driver: no devices, no crash
    with pytest.raises(ConfigError, match="no joystick matches None"):
        PygameBackend()


def test_calibration_wizard_finds_axes_ranges_and_buttons() -> None:
    """A wheel whose steering is axis 2 (reversed), throttle axis 0 resting at +1, brake 3."""
    clock = [0.0]
    rest = [1.0, 0.0, 0.0, -1.0]
    steps = [
        Step(0.0, rest, [False] * 8),
        Step(1.0, [1.0, 0.0, 0.9, -1.0]),  # wheel left
        Step(2.0, [1.0, 0.0, -0.9, -1.0]),  # wheel right
        Step(3.0, [-1.0, 0.1, 0.0, -1.0]),  # throttle pressed
        Step(4.0, [1.0, 0.0, 0.0, 1.0]),
    ]  # brake pressed
    # then each button in turn: shift up 6, shift down 7, horn 0, camera 1, start none, quit 3
    for i, button in enumerate([6, 7, 0, 1, None, 3]):
        t = 5.0 + 20.0 * i
        steps.append(Step(t, rest, [False] * 8))
        if button is not None:
            steps.append(Step(t + 0.5, rest, [b == button for b in range(8)]))
    wheel = ScriptedBackend(steps, end=1e9, name="Wheel", axes=4, buttons=8)
    prompts: list[str] = []
    moments = iter([0.5, 1.5, 2.5, 3.5, 4.5] + [5.0 + 20.0 * i for i in range(6)])

    def ask(prompt: str) -> None:
        prompts.append(prompt)
        clock[0] = next(moments)

    def sleep(dt: float) -> None:
        clock[0] += dt

    mapping = calibration_wizard(wheel, ask, clock=lambda: clock[0], sleep=sleep)
    assert "fully LEFT" in prompts[1] and len(prompts) == 11
    assert mapping.device == "Wheel"
    steering, throttle, brake = mapping.axes.steering, mapping.axes.throttle, mapping.axes.brake
    assert (steering.axis, steering.low, steering.high) == (2, 0.9, -0.9)
    assert (throttle.axis, throttle.low, throttle.high) == (0, 1.0, -1.0)
    assert (brake.axis, brake.low, brake.high) == (3, -1.0, 1.0)
    assert steering.centred(0.9) == -1.0 and throttle.pedal(-1.0) == 1.0
    assert mapping.buttons == ButtonMap(
        shift_up=6, shift_down=7, horn=0, camera=1, engine_start=None, quit=3
    )


def test_without_a_device_the_input_idles_until_shutdown(router: Router) -> None:
    port = router.address[1]
    module = IdleModule(ModuleId.INPUT, "127.0.0.1", port)
    reports = []
    thread = threading.Thread(target=lambda: reports.append(module.run()))
    thread.start()
    assert router.wait_until(lambda: ModuleId.INPUT in router.modules, 5.0)
    with BusClient(ModuleId.VEHICLE, port=port) as vehicle:
        vehicle.send(Shutdown(to=ModuleId.INPUT))
        thread.join(5.0)
    assert not thread.is_alive()
    assert reports[0].to_dict() == {"device": None, "shutdown_received": True}
    quiet = IdleModule(ModuleId.INPUT, "127.0.0.1", port).run(duration=0.05)
    assert quiet.to_dict() == {"device": None, "shutdown_received": False}
