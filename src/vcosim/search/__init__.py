"""Criticality search: the parameters where a controller fails, in as few runs as possible.

A search file is a sweep file with ``[search]`` (``config``); the method (TPE, CMA-ES or
uniform random, on optuna: ``methods``) asks runs in batches, which run as a sweep's runs on
its backends (``driver``); the objective is a run metric or a requirement's robustness
(``objective``, ``stl``); the output folder holds the log, the table, the plots and each
falsifying run's files (``output``, ``plots``). The reference is ``docs/search.md``.
"""
