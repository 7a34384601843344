"""Scenario sweeps: thousands of coupled runs, on this machine or on a Ray cluster.

A sweep file names a scenario and the parameters to vary (``vcosim.sweep.config``); each run
is a deterministic in-process coupled simulation yielding metrics (``vcosim.sweep.runner``);
runs execute on worker processes or Ray (``vcosim.sweep.backends``); results go to Parquet
with a report (``vcosim.sweep.report``). ``vcosim sweep SWEEP.toml`` runs it all
(``vcosim.sweep.driver``). Reference: ``docs/sweeps.md``.
"""
