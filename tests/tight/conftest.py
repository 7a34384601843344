from __future__ import annotations

import pytest

from helpers.peers import RawPeer


@pytest.fixture
def peers():
    started: list[RawPeer] = []

    def make(*args, **kwargs) -> RawPeer:
        peer = RawPeer(*args, **kwargs)
        started.append(peer)
        return peer

    yield make
    for peer in started:
        peer.stop()
