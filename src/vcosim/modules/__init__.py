"""Modules of the driving simulator that join the NightRider bus: logger (input, sound, viewer)."""
