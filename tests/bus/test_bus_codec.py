from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from vcosim.bus import catalogue as C
from vcosim.bus.catalogue import (
    CATALOGUE,
    FMLM,
    FMVM,
    IMFM,
    VMFM,
    EngineStatus,
    ForceFeedback,
    Message,
    Shutdown,
    SoundCont,
    SoundOnce,
    SoundStop,
    WorldPose,
    WorldVehicle,
    lookup,
    message_type,
    param,
)
from vcosim.bus.codec import (
    Codec,
    Malformed,
    parse_answer,
    parse_bye,
    parse_copy,
    parse_hello,
    plain_pattern,
)
from vcosim.errors import ConfigError, ProtocolError, UnknownNameError

codec = Codec()
finite = st.floats(allow_nan=False, allow_infinity=False)


def latin1(text: str) -> bytes:
    return text.encode("latin-1")


def test_the_specs_example_is_an_imfm_to_the_vehicle():
    message = codec.decode(latin1("§4§16§0+100§150§156§0¶"))
    assert message == IMFM(100, 150, 156, 0, to=16, enqueue=False)
    assert codec.encode(message) == latin1("§4§16§0+100§150§156§0¶")


def test_the_catalogue_has_the_twelve_types_of_the_spec_and_the_worlds_two():
    names = {t: cls.__name__ for t, cls in CATALOGUE.items()}
    assert names == {
        1: "Shutdown",
        2: "ForceFeedback",
        3: "IMVM",
        4: "IMFM",
        5: "IMVMCamera",
        6: "FMVM",
        7: "VMFM",
        8: "SoundOnce",
        9: "SoundCont",
        10: "SoundStop",
        11: "FMLM",
        12: "EngineStatus",
        14: "WorldVehicle",
        15: "WorldPose",
        16: "WorldSignal",
        20: "RoadPosition",
    }
    assert [p.name for p in FMLM.params] == [
        "engine_volume",
        "engine_frequency",
        "skid_volume",
        "skid_frequency",
    ]
    assert len(VMFM.params) == 8 and len(EngineStatus.params) == 5
    assert lookup("IMFM") is IMFM and lookup(4) is IMFM and lookup("4") is IMFM
    with pytest.raises(UnknownNameError, match="did you mean 'IMFM'"):
        lookup("IMFN")


def test_each_type_has_its_receiving_default():
    assert Shutdown().enqueue and SoundOnce("horn.wav", 200).enqueue
    assert SoundCont("engine.wav", 22050, 100).enqueue and SoundStop("engine.wav").enqueue
    assert not IMFM(0, 0, 128, 0).enqueue and not FMVM(0, 0, 0, 0, 0, 0, 0).enqueue
    assert IMFM(0, 0, 128, 0, enqueue=True).enqueue
    # one vehicle's pose must never replace another's in a receiver's queue
    assert WorldVehicle(0, "ego", 4.5, 1.8, 1, 0.1).enqueue and WorldPose(3, *[0.0] * 8, 1).enqueue


SAMPLES = [
    Shutdown(to=0),
    ForceFeedback(-0.25, 0.03, to=17),
    C.IMVM(1.5, -2.0, 0.3, to=18),
    IMFM(255, 0, 0, -1, to=16),
    C.IMVMCamera(to=18),
    FMVM(1e-300, -3.5e20, 0.1, 0, 0, 3.14, 9, to=18),
    VMFM(0.1, 0.2, 0.3, 0.4, 0.9, 0.8, 0.7, 0.6, to=16),
    SoundOnce("horn.wav", 255, to=19),
    SoundCont("engine.wav", 705600, 0, to=19),
    SoundStop("a+b c.wav", to=19),
    FMLM(90, 17640, 0, 100, to=19),
    EngineStatus(1, 2, 3, 4, 5, to=20),
    WorldVehicle(65535, "car017", 4.6, 1.8, 0, -0.125, to=18),
    C.WorldSignal(3, "C.3", -1.6, 7.2, 3.5, -1.5707963267948966, -1, to=18),
    WorldPose(
        0,
        -1.2345678901234567e-05,
        -1234.5678901234567,
        0.5,
        -3.14,
        3.14,
        -2.5e-300,
        42.0,
        5234.5,
        -1,
    ),
]


@pytest.mark.parametrize("message", SAMPLES)
def test_every_type_survives_the_wire_exactly(message: Message):
    assert codec.decode(codec.encode(message)) == message


@given(st.tuples(*[finite] * 7), st.integers(0, 1000), st.booleans())
def test_floats_survive_the_wire_bit_for_bit(values, to, enqueue):
    message = FMVM(*values, to=to, enqueue=enqueue)
    assert codec.decode(codec.encode(message)) == message


@given(st.integers(0, 65535), st.tuples(*[finite] * 8), st.integers(-1, 9), st.integers(0, 65535))
def test_any_world_pose_fits_a_datagram_and_survives_the_wire(row, values, gear, to):
    message = WorldPose(row, *values, gear, to=to)
    data = codec.encode(message)  # raises if over the 256 bytes: a pose never is
    assert len(data) <= 240 and codec.decode(data) == message


names = st.text(
    st.characters(min_codepoint=32, max_codepoint=255, exclude_characters="§¶"),
    min_size=1,
    max_size=60,
)


@given(st.integers(0, 65535), names, st.floats(0, 100), st.floats(0, 10), st.integers(0, 1), finite)
def test_any_world_vehicle_with_a_latin1_name_survives_the_wire(
    row, name, length, width, ego, offset
):
    message = WorldVehicle(row, name, length, width, ego, offset, to=18)
    assert codec.decode(codec.encode(message)) == message


def test_symbols_are_configurable_and_both_ends_must_agree():
    custom = Codec.from_symbols("#|:;")
    data = custom.encode(IMFM(1, 2, 3, 0, to=16))
    assert data == b"#4|16|0:1|2|3|0;"
    assert custom.decode(data) == IMFM(1, 2, 3, 0, to=16)
    with pytest.raises(ProtocolError, match="does not begin with '§'"):
        codec.decode(data)


def test_a_bad_codec_lists_every_problem():
    with pytest.raises(ConfigError) as info:
        Codec.from_symbols("a§§+", 8)
    assert info.value.problems == [
        "start: 'a' may not be a letter, digit, space, '-' or '.'",
        "separator, common_end and end must be three different symbols",
        "separator and end may not be '+', which numbers like 1e+20 contain",
        "max_length: 8 is not in 16..65000 bytes",
    ]


def test_a_message_exactly_at_the_maximum_length_and_one_over():
    head = len(codec.encode(SoundOnce("x", 255, to=19))) - 1
    exact = SoundOnce("x" * (256 - head), 255, to=19)
    data = codec.encode(exact)
    assert len(data) == 256 and codec.decode(data) == exact
    with pytest.raises(
        ProtocolError,
        match=r"^SoundOnce to 19 is 257 bytes, more than the "
        r"maximum 256$",
    ):
        codec.encode(SoundOnce("x" * (257 - head), 255, to=19))
    with pytest.raises(
        ProtocolError,
        match=r"^message of 257 bytes is longer than the maximum "
        r"256$",
    ):
        codec.decode(data[:-1] + b"x" + data[-1:])
    short = Codec(max_length=32)
    assert len(short.encode(SoundOnce("x" * (32 - head), 255, to=19))) == 32
    with pytest.raises(ProtocolError, match="more than the maximum 32"):
        short.encode(SoundOnce("x" * (33 - head), 255, to=19))


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("4§16§0+1§2§3§0¶", "message does not begin with '§': '4§16§0+1§2§3§0¶'"),
        ("§4§16§0+1§2§3§0", "message does not end with '¶': '§4§16§0+1§2§3§0'"),
        ("§4§16§0§1§2§3§0¶", "no '+' closes the common part: '§4§16§0§1§2§3§0¶'"),
        ("§4§16+1§2§3§0¶", "the common part must be <type>§<to>§<0|1>, got '4§16'"),
        ("§4§16§2+1§2§3§0¶", "the common part must be <type>§<to>§<0|1>, got '4§16§2'"),
        ("§4§x§0+1§2§3§0¶", "the common part must be <type>§<to>§<0|1>, got '4§x§0'"),
        (
            "§99§16§0+¶",
            "unknown message type 99 (known: 1 Shutdown, 2 ForceFeedback, 3 IMVM, "
            "4 IMFM, 5 IMVMCamera, 6 FMVM, 7 VMFM, 8 SoundOnce, 9 SoundCont, "
            "10 SoundStop, 11 FMLM, 12 EngineStatus, 14 WorldVehicle, 15 WorldPose, "
            "16 WorldSignal, 20 RoadPosition)",
        ),
        (
            "§4§16§0+1§2§3¶",
            "IMFM needs 4 parameter(s) (throttle, brake, steering, shift), got 3: '§4§16§0+1§2§3¶'",
        ),
        ("§1§0§1+0¶", "Shutdown needs 0 parameter(s) (none), got 1: '§1§0§1+0¶'"),
        ("§4§16§0+1§2§3.0§0¶", "IMFM.steering: '3.0' is not an integer"),
        ("§4§16§0+1§2§ 3§0¶", "IMFM.steering: ' 3' is not an integer"),
        ("§4§16§0+1§2§300§0¶", "IMFM.steering: 300 is out of range 0..255"),
        ("§6§18§0+1§2§3§4§5§6§nan¶", "FMVM.speed: 'nan' is not a number"),
        ("§6§18§0+1§2§3§4§5§6§1_0¶", "FMVM.speed: '1_0' is not a number"),
        ("§6§18§0+1§2§3§4§5§6§1e999¶", "FMVM.speed: inf is not a finite number"),
        ("§10§19§1+¶", "SoundStop needs 1 parameter(s) (file), got 0: '§10§19§1+¶'"),
    ],
)
def test_malformed_text_gets_a_clear_error(text: str, error: str):
    with pytest.raises(ProtocolError) as info:
        codec.decode(latin1(text))
    assert str(info.value) == error


def test_utf8_instead_of_latin1_is_named():
    with pytest.raises(ProtocolError, match=r"\(UTF-8\? the bus speaks Latin-1\)"):
        codec.decode("§4§16§0+1§2§3§0¶".encode())


@pytest.mark.parametrize(
    ("make", "error"),
    [
        (lambda: IMFM(256, 0, 128, 0), "IMFM.throttle: 256 is out of range 0..255"),
        (lambda: IMFM(0, 0, 128, 2), "IMFM.shift: 2 is out of range -1..1"),
        (lambda: IMFM(0.5, 0, 128, 0), "IMFM.throttle: expected an integer, got 0.5"),
        (lambda: ForceFeedback(1.5, 0.1), "ForceFeedback.force: 1.5 is out of range -1..1"),
        (lambda: FMVM(0, 0, float("inf"), 0, 0, 0, 0), "FMVM.z: inf is not a finite number"),
        (lambda: SoundOnce("", 10), "SoundOnce.file: expected a non-empty text, got ''"),
        (lambda: SoundOnce("ljud€.wav", 10), "SoundOnce.file: 'ljud€.wav' is not Latin-1 text"),
        (lambda: SoundCont("a.wav", 99, 10), "SoundCont.frequency: 99 is out of range 100..705600"),
        (lambda: Shutdown(to=-1), "Shutdown.to: expected a module id 0..65535, got -1"),
        (
            lambda: WorldVehicle(-1, "a", 4, 2, 0, 0),
            "WorldVehicle.row: -1 is out of range 0..65535",
        ),
        (
            lambda: WorldVehicle(0, "a", -4, 2, 0, 0),
            "WorldVehicle.length: -4.0 is out of range 0..",
        ),
        (lambda: WorldVehicle(0, "a", 4, 2, 2, 0), "WorldVehicle.ego: 2 is out of range 0..1"),
        (
            lambda: WorldVehicle(0, "", 4, 2, 0, 0),
            "WorldVehicle.name: expected a non-empty text, got ''",
        ),
        (lambda: WorldPose(70000, *[0] * 8, 1), "WorldPose.row: 70000 is out of range 0..65535"),
        (
            lambda: WorldPose(0, 0, float("nan"), *[0] * 6, 1),
            "WorldPose.y: nan is not a finite number",
        ),
    ],
)
def test_a_message_that_exists_is_valid(make, error: str):
    with pytest.raises(ProtocolError) as info:
        make()
    assert str(info.value) == error


def test_text_with_a_separator_cannot_be_sent():
    with pytest.raises(ProtocolError, match=r"SoundOnce.file: 'a§b.wav' contains the symbol '§'"):
        codec.encode(SoundOnce("a§b.wav", 10, to=19))


def test_a_new_message_type_is_one_class_in_one_place():
    try:

        @message_type(99, enqueue=True)
        class Horn(Message):
            pressed: int = param(0, 1)
            note: str = param()

        data = codec.encode(Horn(1, "A4", to=19))
        assert data == latin1("§99§19§1+1§A4¶")
        assert codec.decode(data) == Horn(1, "A4", to=19)
        from vcosim.modules.logger import json_schema

        assert json_schema(Horn)["properties"]["pressed"] == {
            "type": "integer",
            "minimum": 0,
            "maximum": 1,
        }
        with pytest.raises(ConfigError, match="already taken"):
            message_type(99)(type("Other", (Message,), {}))
    finally:
        C.CATALOGUE.pop(99, None)
        C.BY_NAME.pop("Horn", None)


def test_control_frames():
    assert parse_hello(b"ID 17,END") == (17, False)
    assert parse_hello(b"ID 20,MONITOR,END\0") == (20, True)
    assert parse_hello(b"ID x,END") is None and parse_hello(latin1("§1§0§1+¶")) is None
    assert parse_answer(b"ID 0,END") == 0
    assert parse_answer(b"REFUSED 16,id 16 is taken,END") == "id 16 is taken"
    assert parse_copy(b"COPY 17," + latin1("§1§0§1+¶")) == (17, latin1("§1§0§1+¶"))


# -- no bytes make a decoder raise anything but Malformed ---------------------------------------
def decode_or_malformed(data: bytes, with_codec: Codec = codec) -> Message | None:
    """A message, or None for a Malformed; any other exception fails the test."""
    try:
        return with_codec.decode(data)
    except Malformed as exc:
        assert exc.reason in REASONS, exc.reason
        return None


REASONS = {"length", "start", "end", "common", "type", "parameters", "number", "decoder"}
valid = st.sampled_from([codec.encode(m) for m in SAMPLES])


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    """A valid message with bytes replaced, inserted (long digit runs too) or cut away."""
    data = bytearray(draw(valid))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data)))
        action = draw(st.sampled_from(["replace", "insert", "digits", "cut"]))
        if action == "replace" and at < len(data):
            data[at] = draw(st.integers(0, 255))
        elif action == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif action == "digits":
            data[at:at] = b"9" * draw(st.integers(1, 6000))
        else:
            del data[at : at + draw(st.integers(1, 8))]
    return bytes(data)


@given(st.binary(max_size=400))
def test_random_bytes_never_raise_past_the_decoder(data: bytes):
    decode_or_malformed(data)
    decode_or_malformed(data, Codec(max_length=65000))
    for parse in (parse_hello, parse_answer, parse_bye, parse_copy):
        parse(data)  # None or a frame, never an exception


@given(mutated())
@example(data=b"\xa78\xa719\xa71+\xb6horn.wav\xa7255\xb6")  # a text holding the end symbol
def test_mutated_messages_never_raise_past_the_decoder(data: bytes):
    long = Codec(max_length=65000)
    message = decode_or_malformed(data, long)
    if message is not None:  # whatever passes is a valid message that survives the wire
        assert long.decode(long.encode(message)) == message


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("§4§16§0+" + "1" * 5000 + "§2§3§0¶", "number"),
        ("§4§" + "1" * 5000 + "§0+1§2§3§0¶", "common"),
        ("§" + "4" * 5000 + "§16§0+1§2§3§0¶", "common"),
        ("§6§18§0+1§2§3§4§5§6§" + "1" * 5000 + "¶", "parameters"),  # inf: out of range
        ("§4§65536§0+1§2§3§0¶", "parameters"),  # a module id over MAX_MODULE_ID
    ],
)
def test_long_numbers_are_malformed_not_a_crash(text: str, reason: str):
    with pytest.raises(Malformed) as info:
        Codec(max_length=65000).decode(latin1(text))
    assert info.value.reason == reason


def test_long_or_large_ids_are_not_frames():
    digits = b"9" * 5000
    assert parse_hello(b"ID " + digits + b",END") is None
    assert parse_bye(b"BYE " + digits + b",END") is None
    assert parse_answer(b"ID " + digits + b",END") is None
    assert parse_copy(b"COPY " + digits + b",x") is None
    assert parse_hello(b"ID 65536,END") is None and parse_hello(b"ID 65535,END") == (65535, False)


def test_an_exception_inside_the_decoder_is_malformed():
    class Exploding(bytes):
        def decode(self, *args: object) -> str:
            raise UnicodeDecodeError("latin-1", b"", 0, 1, "boom")

    with pytest.raises(Malformed) as info:
        codec.decode(Exploding(b"\xa74\xa716\xa70+1\xa72\xa73\xa70\xb6"))
    assert info.value.reason == "decoder" and "UnicodeDecodeError" in str(info.value)


# -- plain messages: what the router passes on without building them -----------------------------
def destination(data: bytes, with_codec: Codec = codec) -> bytes | None:
    """The destination a plain message names (as its text spells it); None if not plain."""
    match = plain_pattern(with_codec).fullmatch(data)
    return None if match is None else match[match.lastindex or 0]


ORDINARY = [
    *(m for m in SAMPLES if not isinstance(m, (FMVM, WorldPose))),  # (theirs have 1e-300)
    FMVM(1.5, -2.25e-05, 0.1, 0, 0, 3.14, 9, to=18),
    WorldPose(7, 1e16, -1234.5678901234567, 0.5, -3.14, 3.14, 0.0, 42.0, 2500.0, 3, to=18),
]


@pytest.mark.parametrize("message", ORDINARY)
def test_what_the_encoder_writes_for_ordinary_values_is_plain(message: Message):
    assert destination(codec.encode(message)) == b"%d" % message.to


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("§1§0§1+¶", True),
        ("§4§16§0+255§0§128§1¶", True),
        ("§4§16§0+256§0§128§1¶", False),  # out of range
        ("§4§16§0+0§0§128§-1¶", True),
        ("§4§16§0+0§0§128§-2¶", False),
        ("§4§65535§0+0§0§128§0¶", True),
        ("§4§65536§0+0§0§128§0¶", False),  # no such module id
        ("§4§016§0+1§0§128§0¶", False),  # valid, but not as ``encode`` writes it
        ("§4§16§0+-0§0§128§0¶", False),
        ("§04§16§0+1§0§128§0¶", False),
        ("§9§19§1+a.wav§100§0¶", True),
        ("§9§19§1+a.wav§99§0¶", False),
        ("§9§19§1+a.wav§705600§255¶", True),
        ("§9§19§1+a.wav§705601§255¶", False),
        ("§8§19§1+§255¶", False),  # an empty text
        ("§2§17§0+1.0§1e+99¶", True),
        ("§2§17§0+-.5§0¶", True),
        ("§2§17§0+1.0001§0¶", False),  # force over 1
        ("§2§17§0+1e-05§0¶", False),  # in range, but the unit pattern has no exponent
        ("§2§17§0+0.5§-1¶", False),  # a negative duration
        ("§6§18§0+1e99§2§3§4§5§6§7¶", True),
        ("§6§18§0+1e308§2§3§4§5§6§7¶", False),  # three exponent digits: the decoder decides
        ("§6§18§0+1§2§3§4§5§6¶", False),  # one value short
        ("§6§18§2+1§2§3§4§5§6§7¶", False),  # enqueue 2
    ],
)
def test_plain_spellings_and_their_edges(text: str, plain: bool):
    data = latin1(text)
    assert (destination(data) is not None) == plain
    if plain:
        codec.decode(data)


def test_a_plain_message_is_no_longer_than_the_codec_allows():
    head = len(codec.encode(SoundOnce("x", 255, to=19))) - 1
    assert destination(codec.encode(SoundOnce("x" * (256 - head), 255, to=19))) == b"19"
    too_long = Codec(max_length=300).encode(SoundOnce("x" * (257 - head), 255, to=19))
    assert destination(too_long) is None
    assert destination(too_long, Codec(max_length=300)) == b"19"


def test_a_type_with_checks_of_its_own_is_never_plain():
    try:

        @message_type(98)
        class Odd(Message):
            n: int = param(0, 9)

            def __post_init__(self) -> None:
                super().__post_init__()
                if self.n % 2 == 0:
                    raise ProtocolError("Odd.n: even")

        with pytest.raises(Malformed):
            codec.decode(latin1("§98§19§0+2¶"))
        assert destination(latin1("§98§19§0+3¶")) is None
    finally:
        C.CATALOGUE.pop(98, None)
        C.BY_NAME.pop("Odd", None)


number = st.one_of(
    st.integers(-(10**19), 10**19).map(str),
    st.integers(-300, 800_000).map(str),
    finite.map(repr),
    st.from_regex(r"\A-?0*[0-9]{0,3}(\.[0-9]{0,3})?([eE][-+]?[0-9]{1,3})?\Z"),
)
LONG = Codec.from_symbols("#|:;", max_length=65000)


@st.composite
def spelled(draw: st.DrawFn, with_codec: Codec) -> bytes:
    """A message of any type with every value spelt by a draw: in range or out, plain or not."""
    cls = draw(st.sampled_from(list(CATALOGUE.values())))
    values = [
        draw(st.text(st.characters(min_codepoint=32, max_codepoint=255), max_size=6))
        if p.kind is str
        else draw(number)
        for p in cls.params
    ]
    to = draw(st.integers(-1, 70000).map(str) | st.from_regex(r"\A0[0-9]{1,3}\Z"))
    c = with_codec
    head = c.separator.join([str(cls.type_id), to, draw(st.sampled_from("012"))])
    return latin1(f"{c.start}{head}{c.common_end}{c.separator.join(values)}{c.end}")


@given(st.one_of(spelled(codec), mutated()), spelled(LONG))
def test_a_plain_message_is_one_the_decoder_accepts_for_the_same_module(a: bytes, b: bytes):
    for data, with_codec in ((a, codec), (b, LONG)):
        to = destination(data, with_codec)
        if to is not None:  # (a Malformed here fails the test)
            assert b"%d" % with_codec.decode(data).to == to
