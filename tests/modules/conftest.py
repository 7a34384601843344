from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from vcosim.bus.client import BusClient
from vcosim.bus.router import Router

if TYPE_CHECKING:
    from vcosim.modules.viewer import Viewer


@pytest.fixture
def router() -> Iterator[Router]:
    """A router on an ephemeral loopback port, serving in a thread."""
    r = Router("127.0.0.1", 0).start()
    yield r
    r.stop()


@pytest.fixture
def viewer_factory(router: Router) -> Iterator[Callable[..., Viewer]]:
    """Viewers on ephemeral ports joined to ``router``, stopped after the test."""
    from vcosim.modules.viewer import Viewer  # the viewer extra: only its tests ask for it

    viewers: list[Viewer] = []

    def make(**options: Any) -> Viewer:
        viewers.append(Viewer("127.0.0.1", router.address[1], port=0, **options).start())
        return viewers[-1]

    yield make
    for v in viewers:
        v.stop()


@pytest.fixture
def viewer(viewer_factory: Callable[..., Viewer]) -> Viewer:
    return viewer_factory()


@pytest.fixture
def client(router: Router) -> Iterator[Callable[..., BusClient]]:
    """Bus clients joined to ``router``, closed after the test."""
    clients: list[BusClient] = []

    def make(module_id: int, **options: Any) -> BusClient:
        clients.append(BusClient(module_id, port=router.address[1], **options).connect(2.0))
        return clients[-1]

    yield make
    for c in clients:
        c.close()
