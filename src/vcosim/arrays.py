"""Array types the typed layers share: a leaf module (numpy only).

``FloatArray`` is what the vehicle's signals, recorded rows and metrics are: float64 arrays.
Written so instead of a bare ``np.ndarray``, whose element type would be ``Any``.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
