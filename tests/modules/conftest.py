from __future__ import annotations

from collections.abc import Iterator

import pytest

from vcosim.bus.router import Router


@pytest.fixture
def router() -> Iterator[Router]:
    """A router on an ephemeral loopback port, serving in a thread."""
    r = Router("127.0.0.1", 0).start()
    yield r
    r.stop()
