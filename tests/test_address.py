"""One reader of HOST:PORT for every command, file and state row (vcosim.address)."""

from __future__ import annotations

import pytest

from vcosim.address import AddressError, HostPort, parse_address
from vcosim.constants import LOOPBACK


@pytest.mark.parametrize(
    ("text", "kwargs", "read"),
    [
        ("10.0.0.2:4000", {}, HostPort("10.0.0.2", 4000)),
        (" host.example:1 ", {}, HostPort("host.example", 1)),
        (":4000", {}, HostPort(LOOPBACK, 4000)),
        ("somewhere", {"default_port": 99}, HostPort("somewhere", 99)),
        ("4000", {"default_port": 99, "bare_port": True}, HostPort(LOOPBACK, 4000)),
        ("4000", {"default_port": 99}, HostPort("4000", 99)),  # without bare_port: a host
        ("[::1]:5", {}, HostPort("[::1]", 5)),  # split at the last colon
        ("h:0", {"lowest_port": 0}, HostPort("h", 0)),
    ],
)
def test_what_an_address_may_leave_out_is_the_readers_to_say(
    text: str, kwargs: dict[str, object], read: HostPort
) -> None:
    assert parse_address(text, **kwargs) == read  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "kwargs"),
    [
        ("h:", {}),  # no port, and no default for it
        ("h", {}),
        (":5", {"default_host": None}),  # no host, and none may stand in
        ("h:0", {}),  # 0 only where the reader takes it (a free port)
        ("h:65536", {}),
        ("h:-1", {}),
        ("h:+5", {}),
        ("h:x", {}),
        ("a b:5", {"check_host": False}),  # whitespace is never a host
    ],
)
def test_anything_else_is_an_address_error(text: str, kwargs: dict[str, object]) -> None:
    with pytest.raises(AddressError) as caught:
        parse_address(text, **kwargs)  # type: ignore[arg-type]
    assert caught.value.host_problem is None


def test_a_bad_host_says_what_is_wrong_with_it() -> None:
    with pytest.raises(AddressError) as caught:
        parse_address("x" * 254 + ":5")
    assert caught.value.host_problem == "a host of 254 characters (at most 253)"
    assert str(HostPort("h", 5)) == "h:5"
