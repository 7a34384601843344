"""The Foxglove layout for a vcosim run (``examples/foxglove/vcosim.json``).

Made with foxglove-sdk's layout types, so that the shipped file is what this makes (a test
keeps them the same) and follows the topics ``foxglove`` publishes.
"""

from __future__ import annotations

import json

from vcosim.groundtruth.foxglove import SCENE_TOPIC, SIGNALS_TOPIC, WORLD_FRAME


def layout_topics() -> list[str]:
    """The topics the shipped layout names (its 3-D panel takes ``/tf`` by itself)."""
    return [SCENE_TOPIC, SIGNALS_TOPIC]


PLOTS = (
    ("speed (m/s)", ("speed", "groundspeed")),
    ("engine (rpm)", ("rpm",)),
    ("driver", ("throttle", "brake", "steering")),
    ("acceleration (m/s2)", ("accX", "accY")),
)
"""The layout's plots: a title and the signals it plots (of ``SIGNALS_TOPIC``)."""


def layout(follow: str = "ego") -> str:
    """The Foxglove layout for a vcosim run, as JSON (``examples/foxglove/vcosim.json``).

    A 3-D panel following ``follow``'s frame beside plots of the ego's main signals and its
    raw signals message; the same for a live run and a recording (the same topics).
    """
    import foxglove.layouts as fl

    plots = [
        fl.SplitItem(
            content=fl.PlotPanel(
                title=title,
                config=fl.PlotConfig(
                    paths=[
                        fl.PlotSeries(value=f"{SIGNALS_TOPIC}.{name}", label=name) for name in names
                    ],
                    show_legend=True,
                ),
            )
        )
        for title, names in PLOTS
    ]
    scene = fl.ThreeDeePanel(
        title="vehicles",
        config=fl.ThreeDeeConfig(
            follow_tf=follow,
            fixed_frame=WORLD_FRAME,
            topics={SCENE_TOPIC: fl.BaseRendererSceneUpdateTopicSettings(visible=True)},
        ),
    )
    raw = fl.RawMessagesPanel(config=fl.RawMessagesConfig(topic_path=SIGNALS_TOPIC))
    content = fl.SplitContainer(
        direction="row",
        items=[
            fl.SplitItem(proportion=3, content=scene),
            fl.SplitItem(
                proportion=2,
                content=fl.SplitContainer(
                    direction="column", items=[*plots, fl.SplitItem(content=raw)]
                ),
            ),
        ],
    )
    return json.dumps(json.loads(fl.Layout(content=content).to_json()), indent=2) + "\n"
