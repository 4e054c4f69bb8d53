"""Numbers as users read them: solver noise snapped away, raw values left to the API.

The barrier solver is exact to about 1e-9, so an optimal policy may come back as
``[0.4999999997, 0.4999999993, 1e-09]``. Everything a person reads (CLI tables and ``--json`` of
``policy``, ``score`` and ``check``, demo printouts) goes through :func:`clean_policy` /
:func:`clean_numbers`, which round to :data:`DECIMALS` decimals (below the solver's accuracy, far above
its noise), map ``-0.0`` to ``0.0`` and, for a policy, put the rounding residual on its largest entry
so that it sums to 1. The library functions (``Notion.policy``, ``score_all``, ...) return the raw
values.
"""

from __future__ import annotations

from typing import Any

import numpy as np

DECIMALS = 8


def clean_policy(p: Any, decimals: int = DECIMALS) -> list[float]:
    """A probability vector snapped to ``decimals`` decimals, non-negative, summing to 1."""
    q = np.round(np.clip(np.asarray(p, dtype=float), 0.0, None), decimals)
    if q.sum() <= 0:
        return [float(x) for x in np.asarray(p, dtype=float)]
    q = np.round(q / q.sum(), decimals)
    j = int(np.argmax(q))
    q[j] = round(1.0 - (q.sum() - q[j]), decimals)
    return [float(x) + 0.0 for x in q]  # + 0.0 turns -0.0 into 0.0


def clean_number(x: float, decimals: int = DECIMALS) -> float:
    return float(round(float(x), decimals)) + 0.0


def clean_numbers(obj: Any, decimals: int = DECIMALS, policy_keys: tuple[str, ...] = ("policy",)) -> Any:
    """``obj`` (dicts, lists, numbers) with every float snapped; lists under ``policy_keys`` are
    cleaned as probability vectors."""
    if isinstance(obj, dict):
        return {k: (clean_policy(v, decimals) if k in policy_keys and _is_vector(v)
                    else clean_numbers(v, decimals, policy_keys)) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [clean_numbers(v, decimals, policy_keys) for v in obj]
    if isinstance(obj, (bool, np.bool_)) or obj is None or isinstance(obj, (int, np.integer, str)):
        return obj.item() if isinstance(obj, (np.integer, np.bool_)) else obj
    if isinstance(obj, (float, np.floating)):
        return clean_number(obj, decimals) if np.isfinite(obj) else float(obj)
    if isinstance(obj, np.ndarray):
        return clean_numbers(obj.tolist(), decimals, policy_keys)
    return obj


def _is_vector(v: Any) -> bool:
    arr = np.asarray(v) if isinstance(v, (list, tuple, np.ndarray)) else None
    return arr is not None and arr.ndim == 1 and arr.size > 0 and np.issubdtype(arr.dtype, np.number)
