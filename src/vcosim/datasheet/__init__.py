"""The handling datasheet: standard manoeuvres on a vcosim vehicle beside CommonRoad's model."""

from vcosim.datasheet.manoeuvres import Plan
from vcosim.datasheet.sheet import Datasheet, build_datasheet

__all__ = ["Datasheet", "Plan", "build_datasheet"]
