"""The search methods, on optuna: TPE, CMA-ES, and uniform random sampling as the baseline.

Runs are asked of the method a batch at a time and its scores told back in run order once the
whole batch has finished, and each batch's sampler is seeded from (seed, batch number). So the
parameters of every run depend only on the seed and the scores before its batch: not on the
backend, the number of workers, the order runs finish in, or an interruption (a resumed search
asks its batches again and gets the same runs). TPE and CMA-ES start from a Latin hypercube
over the ranges (``[search] startup`` runs); the baseline samples every run uniformly.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from vcosim.extras import require
from vcosim.search.config import Range, Search
from vcosim.sweep.config import Scalar


def latin_hypercube(ranges: dict[str, Range], n: int, seed: int) -> list[dict[str, Scalar]]:
    """``n`` points, each range cut in ``n`` strata and every stratum used once per parameter."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0x1A7]))
    points: list[dict[str, Scalar]] = [{} for _ in range(n)]
    for name, r in ranges.items():
        u = (rng.permutation(n) + rng.random(n)) / n
        for point, x in zip(points, u, strict=True):
            point[name] = _at(r, float(x))
    return points


def _at(r: Range, u: float) -> Scalar:
    """The value a fraction ``u`` in [0, 1) of the way through ``r`` (log: in log space)."""
    if r.integer:
        return int(min(r.high, math.floor(r.low + u * (r.high - r.low + 1))))
    if r.log:
        return float(math.exp(math.log(r.low) + u * (math.log(r.high) - math.log(r.low))))
    return float(r.low + u * (r.high - r.low))


class Method:
    """One search's optuna study: asks batches of runs' parameters, is told their scores."""

    def __init__(self, search: Search) -> None:
        require("search", "vcosim search")
        import optuna
        from optuna.distributions import FloatDistribution, IntDistribution

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        self.search = search
        self.distributions: dict[str, Any] = {
            name: IntDistribution(int(r.low), int(r.high), log=r.log)
            if r.integer
            else FloatDistribution(r.low, r.high, log=r.log)
            for name, r in search.ranges.items()
        }
        self.study = optuna.create_study(direction="minimize")
        self.startup = latin_hypercube(search.ranges, search.startup, search.section.seed)
        self._asked: list[Any] = []

    def _sampler(self, batch: int) -> Any:
        import optuna

        section = self.search.section
        seed = int(np.random.SeedSequence([section.seed, batch]).generate_state(1)[0])
        if section.method == "random":
            return optuna.samplers.RandomSampler(seed=seed)
        if section.method == "cmaes":  # one generation a batch, from the best run so far
            with warnings.catch_warnings():
                # x0 is deprecated from optuna 4.9 (removed in 6: the extra pins below it); its
                # successor, a warm start from source_trials, needs 10 runs or more to start
                warnings.simplefilter("ignore", FutureWarning)
                return optuna.samplers.CmaEsSampler(
                    x0=self._best(),
                    seed=seed,
                    n_startup_trials=0,
                    popsize=max(section.batch, 2),
                    warn_independent_sampling=False,
                )
        return optuna.samplers.TPESampler(seed=seed, n_startup_trials=0, multivariate=True)

    def _best(self) -> dict[str, Any] | None:
        """The parameters of the best finished run (None before any)."""
        import optuna

        done = [
            (t.value, t.number, t.params)
            for t in self.study.trials
            if t.state == optuna.trial.TrialState.COMPLETE and t.value is not None
        ]
        return dict(min(done)[2]) if done else None

    def ask(self, first: int, n: int, batch: int) -> list[dict[str, Scalar]]:
        """The parameters of runs ``first`` .. ``first + n - 1`` (batch number ``batch``)."""
        self.study.sampler = self._sampler(batch)
        for index in range(first, first + n):
            if index < len(self.startup):
                self.study.enqueue_trial(dict(self.startup[index]), skip_if_exists=False)
        self._asked = [self.study.ask(self.distributions) for _ in range(n)]
        return [
            {name: _scalar(trial.params[name]) for name in self.distributions}
            for trial in self._asked
        ]

    def tell(self, scores: list[float | None]) -> None:
        """The scores of the batch just asked, in run order (None: the run failed)."""
        import optuna

        for trial, score in zip(self._asked, scores, strict=True):
            if score is None:
                self.study.tell(trial, state=optuna.trial.TrialState.FAIL)
            else:
                self.study.tell(trial, score)
        self._asked = []


def _scalar(value: Any) -> Scalar:
    return int(value) if isinstance(value, int | np.integer) else float(value)
