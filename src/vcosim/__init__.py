"""vcosim: close the loop between a simulated vehicle and the software that controls it."""

__version__ = "0.1.0"
