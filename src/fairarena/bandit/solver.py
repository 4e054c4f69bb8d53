"""A batched log-barrier interior-point solver for the small convex programs behind the notions.

Every optimal policy in :mod:`fairarena.bandit.notions` is the solution of

    minimise  f(y)  subject to  p in the simplex (and, for tie-breaks, E y = E y0),   y = (p, r),

for a convex ``f`` over ``p`` (K arms) and a few free auxiliary variables ``r``. A batch of instances
is handed to one compiled loop (:mod:`fairarena.bandit._kernels`, numba) that solves each instance
to its own tolerance: no Python runs per Newton step, so a batch of 10 instances costs 10 instances,
not 10 Python-level solver runs, and no instance waits for the slowest one.

Piecewise-linear objectives (generalized Gini, maximin, the absolute-difference inequality) enter as
hinge terms ``c * max(0, v)``. The slack of each hinge is minimised out of the barrier problem in
closed form (:func:`smoothed_hinge`), so the Newton system stays ``(K + M)``-dimensional instead of
growing with the number of hinges.

The method is the textbook barrier method (Boyd & Vandenberghe, *Convex Optimization*, ch. 11):
centring by damped Newton with backtracking, then ``t <- mu * t`` until the duality-gap bound
``m / t`` is below ``gap``. After each centring a predictor step follows the tangent of the central
path to its expected point at the next ``t`` (extrapolated in ``1/t``), which leaves the Newton
steps only a small correction. When the optimum is not unique the iterates converge to the centre
of the optimal face; notions that need a specific optimum add a tie-break stage (see ``notions``).
"""

from __future__ import annotations

import functools
import importlib.util
import types
from dataclasses import dataclass
from typing import Any, Callable, ContextManager

import numpy as np

from fairarena.errors import SolverError

# Kernel constants (mirrors of fairarena.bandit._kernels, which is only imported when compiled code
# is needed; a test checks that they agree).
LINEAR, QUADRATIC, NEGLOGSUM, OWA = 0, 1, 2, 3
OK, FELL_BACK, FAILED, BAD_START = 0, 1, 2, 3

SMALL_WORK = 100
"""Problems with ``batch size x N x K`` up to this run the kernels' Python source directly instead
of the numba-compiled kernels: the same algorithm, same steps, without compiling (or loading the
compiled cache), so a single small instance answers in milliseconds on a fresh install. Larger
batches use the compiled kernels (a test checks both engines agree)."""

compile_notice: Callable[[], ContextManager[Any]] | None = None
"""Set by a front end (the CLI) to a context manager factory shown while the compiled kernels are
built for the first time (~1 min after installing; cached on disk afterwards)."""


def _njit_off(*args: Any, **kwargs: Any) -> Any:
    if args and callable(args[0]):
        return args[0]
    return lambda f: f


@functools.cache
def interpreted_kernels() -> types.ModuleType:
    """The kernels module executed as plain Python (its ``njit`` decorators made no-ops). Where the
    source is not available (an install without ``.py`` files) the compiled kernels are used instead."""
    name = "fairarena.bandit._kernels"
    spec = importlib.util.find_spec(name)
    src = spec.loader.get_source(name) if spec is not None and spec.loader is not None else None  # type: ignore[union-attr]
    if src is None:  # pragma: no cover - byte-code-only installs
        return compiled_kernels()
    marker = "from numba import njit\n"
    if marker not in src:  # pragma: no cover - guards against a silent change of the kernels module
        raise RuntimeError("the kernels module no longer imports njit the expected way")
    mod = types.ModuleType(name + "_interpreted")
    mod.__dict__.update(__file__=spec.origin, njit=_njit_off)  # type: ignore[union-attr]
    exec(compile(src.replace(marker, ""), spec.origin, "exec"), mod.__dict__)  # type: ignore[arg-type]
    return mod


_notice_checked = False


def compiled_kernels() -> types.ModuleType:
    """The numba-compiled kernels. The first time in a process, when the on-disk cache holds no
    compiled code for this source, they are built under :data:`compile_notice` (if set)."""
    global _notice_checked
    from fairarena.bandit import _kernels

    if not _notice_checked:
        _notice_checked = True
        if compile_notice is not None and not _cached(_kernels):
            with compile_notice():
                warm_up()
    return _kernels


def _cached(kernels: types.ModuleType) -> bool:
    try:
        return bool(kernels.solve_batch._cache._cache_file._load_index())
    except Exception:  # noqa: BLE001 - numba internals; assume cached rather than show a wrong notice
        return True


def engine_for(batch: int, n_agents: int, n_arms: int) -> str:
    """``'interpreted'`` for a problem of ``batch x N x K`` up to :data:`SMALL_WORK`, else ``'compiled'``."""
    return "interpreted" if batch * n_agents * n_arms <= SMALL_WORK else "compiled"


def kernels_for(engine: str) -> types.ModuleType:
    return interpreted_kernels() if engine == "interpreted" else compiled_kernels()


def smoothed_hinge(v: float, tau: float) -> tuple[float, float, float]:
    """See :func:`fairarena.bandit._kernels.smoothed_hinge`."""
    return interpreted_kernels().smoothed_hinge(v, tau)

_NO_1 = np.zeros((1, 1))
_NO_2 = np.zeros((1, 1, 1))


@dataclass
class BarrierResult:
    y: np.ndarray          # (B, n) solution
    iterations: int        # Newton steps taken (max over the batch)
    gap_bound: float       # m / t at exit (over the instances that did not fail)
    failed: np.ndarray | None = None  # (B,) bool, only with on_fail='mask'
    steps: np.ndarray | None = None   # (B,) Newton steps per instance


class Objective:
    """A batched objective: a kernel ``kind`` and its per-instance arrays (leading batch axis).

    Calling it evaluates the ``t``-scaled objective with its gradient and Hessian for each row of
    ``y`` (``value (B,), grad (B, n), hess (B, n, n)``); the solver itself runs compiled.
    """

    kind: int
    n_barrier: int = 0

    def kernel_args(self) -> tuple:
        """``(C, A, W, Q, wl, msz, w_last)`` as the kernels take them."""
        raise NotImplementedError

    def __call__(self, y: np.ndarray, t: float, derivs: bool = True, engine: str = "auto"):
        y = np.ascontiguousarray(y, dtype=float)
        kern = kernels_for(engine_for(y.shape[0], y.shape[1], 1) if engine == "auto" else engine)
        val, grad, hess = kern.evaluate(self.kind, self.k, y, float(t), *self.kernel_args())
        return (val, grad, hess) if derivs else (val, None, None)


def barrier_solve(
    objective: Objective,
    y0: np.ndarray,
    k: int,
    *,
    E: np.ndarray | None = None,
    live: np.ndarray | None = None,
    n_barrier: int | None = None,
    gap: float = 1e-10,
    t0: float = 100.0,
    mu: float = 50.0,
    max_newton: int = 80,
    newton_tol: float = 1e-9,
    fallback_gap: float = 1e-7,
    on_fail: str = "raise",
    predictor: bool = True,
    engine: str = "auto",
) -> BarrierResult:
    """Minimise ``objective`` over ``y = (p, r)`` with ``p`` (the first ``k`` entries) in the simplex.

    ``y0`` (B, n) must be strictly feasible: ``p > 0``, ``sum p = 1``. ``E`` (B, R, n), when given,
    replaces ``sum p = 1`` by ``E y = E y0`` (include the simplex row yourself); steps then move in
    the null space of ``E`` (computed by SVD, so redundant rows are harmless). ``live`` (B, k) bool,
    when given, fixes the arms where it is False at exactly 0 (they are not variables at all).
    ``n_barrier`` counts the objective's own log-barrier terms (two per hinge; taken from the
    objective when not given). If centring fails at some ``t`` the last centred iterate is used when
    its duality-gap bound is below ``fallback_gap``; otherwise :class:`SolverError` is raised, or with
    ``on_fail='mask'`` the instance is flagged in ``failed`` for the caller to solve another way.
    ``engine``: ``'compiled'``, ``'interpreted'`` (both run the same algorithm; see :data:`SMALL_WORK`)
    or ``'auto'`` (by :func:`engine_for` of the batch size and ``n``; callers that solve several
    stages of one problem pass the engine of the problem instead, so every stage runs the same way).
    """
    if engine not in ("auto", "compiled", "interpreted"):
        raise ValueError(f"engine must be 'auto', 'compiled' or 'interpreted', not {engine!r}")
    if on_fail not in ("raise", "mask"):
        raise ValueError(f"on_fail must be 'raise' or 'mask', not {on_fail!r}")
    y = np.array(y0, dtype=float, copy=True, order="C")
    bsz, n = y.shape
    live = np.ones((bsz, k), dtype=bool) if live is None else np.ascontiguousarray(live, dtype=bool)
    Ek = np.zeros((1, 0, n)) if E is None else np.ascontiguousarray(E, dtype=float)
    nb = objective.n_barrier if n_barrier is None else n_barrier
    if engine == "auto":
        engine = engine_for(bsz, n, k)
    kern = interpreted_kernels() if engine == "interpreted" else compiled_kernels()
    status, steps, achieved = kern.solve_batch(
        objective.kind, k, y, live, Ek, *objective.kernel_args(), int(nb), float(gap), float(t0),
        float(mu), int(max_newton), float(newton_tol), float(fallback_gap), bool(predictor))
    if (status == BAD_START).any():
        raise SolverError("barrier start is not strictly inside the simplex")
    failed = status == FAILED
    if failed.any() and on_fail == "raise":
        raise SolverError(f"Newton centring did not converge for {int(failed.sum())} instance(s)")
    ok = ~failed
    return BarrierResult(y=y, iterations=int(steps.max(initial=0)),
                         gap_bound=float(achieved[ok].max()) if ok.any() else np.inf,
                         failed=failed if on_fail == "mask" else None, steps=steps)


# --------------------------------------------------------------------------------------------
# Objectives (all batched; y = (p, r) with p the first K entries)
# --------------------------------------------------------------------------------------------

class LinearObjective(Objective):
    """``t * c . y``."""

    kind = LINEAR

    def __init__(self, c: np.ndarray) -> None:
        self.c = np.ascontiguousarray(c, dtype=float)  # (B, n)
        self.k = self.c.shape[1]

    def kernel_args(self) -> tuple:
        return (self.c, _NO_2, _NO_1, _NO_2, np.zeros(0), np.zeros(0), 0.0)


class QuadraticObjective(Objective):
    """``t * (p^T Q p + c . p)``."""

    kind = QUADRATIC

    def __init__(self, Q: np.ndarray, c: np.ndarray | None = None) -> None:
        self.Q = np.ascontiguousarray(Q, dtype=float)  # (B, K, K), symmetric PSD
        self.k = self.Q.shape[1]
        self.c = np.zeros(self.Q.shape[:2]) if c is None else np.ascontiguousarray(c, dtype=float)

    def kernel_args(self) -> tuple:
        return (self.c, _NO_2, _NO_1, self.Q, np.zeros(0), np.zeros(0), 0.0)


class NegLogSumObjective(Objective):
    """``-t * sum_i w_i log(A_i . p)`` (Nash welfare of linear utilities; ``w_i`` = 0 drops a row)."""

    kind = NEGLOGSUM

    def __init__(self, A: np.ndarray, w: np.ndarray | None = None) -> None:
        self.A = np.ascontiguousarray(A, dtype=float)  # (B, N, K)
        self.k = self.A.shape[2]
        self.w = np.ones(self.A.shape[:2]) if w is None else np.ascontiguousarray(w, dtype=float)

    def kernel_args(self) -> tuple:
        return (_NO_1, self.A, self.w, _NO_2, np.zeros(0), np.zeros(0), 0.0)


class OWAObjective(Objective):
    """Minus an ordered weighted average of utilities: ``-sum_m w_m U_(m)``, ``U`` ascending.

    ``w`` must be non-increasing (then the OWA is concave). With ``w'_m = w_m - w_{m+1}`` and
    ``S_m`` the sum of the ``m`` smallest utilities, ``OWA = sum_{m<N} w'_m S_m + w_N sum(U)`` and
    ``S_m(U) = max_r m r - sum_i max(0, r - U_i)`` (Ogryczak & Sliwinski 2003). One auxiliary ``r_m``
    per level with ``w'_m > 0``; the hinges are smoothed exactly by :func:`smoothed_hinge`.
    ``y = (p, r_1..r_M)``.
    """

    kind = OWA

    def __init__(self, mu: np.ndarray, weights: np.ndarray) -> None:
        self.mu = np.ascontiguousarray(mu, dtype=float)  # (B, N, K)
        n, self.k = self.mu.shape[1:]
        w = np.asarray(weights, dtype=float)
        wd = w[:-1] - w[1:]  # w'_m for m = 1..N-1
        self.levels = np.flatnonzero(wd > 0)  # 0-based m-1
        self.wl = np.ascontiguousarray(wd[self.levels])  # (M,)
        self.msz = (self.levels + 1).astype(float)  # m
        self.w_last = float(w[-1])
        self.M = len(self.levels)
        self.n_barrier = 2 * self.M * n

    def kernel_args(self) -> tuple:
        return (_NO_1, self.mu, _NO_1, _NO_2, self.wl, self.msz, self.w_last)

    def start(self, p0: np.ndarray) -> np.ndarray:
        """A starting y for policy p0: r_m at the m-th smallest utility."""
        u = np.sort(np.einsum("bik,bk->bi", self.mu, p0), axis=1)
        return np.concatenate([p0, u[:, self.levels]], axis=1)


def pf_scores(masks: np.ndarray, ps: np.ndarray) -> np.ndarray:
    """The compiled min-cut enumeration of PF scores (see :func:`fairarena.bandit.notions.pf_score_batch`)."""
    return compiled_kernels().pf_scores(np.ascontiguousarray(masks, dtype=np.int64),
                                        np.ascontiguousarray(ps, dtype=float))


def warm_up() -> None:
    """Compile (first run after installing, ~30-60 s) or load the solver's numba kernels, so that
    later runs and worker processes find them in the on-disk cache (``make`` calls this once).

    Every kernel entry point is called once with the argument types the notions use (one
    compiled specialisation serves every objective kind)."""
    from fairarena.bandit import _kernels

    mu = np.array([[[0.9, 0.9, 0.2], [0.1, 0.5, 0.8], [0.4, 0.4, 0.4]]])
    p0 = np.full((1, 3), 1.0 / 3.0)
    owa = OWAObjective(mu, np.array([1.0, 0.5, 0.25]))
    barrier_solve(owa, owa.start(p0), 3, engine="compiled")
    barrier_solve(NegLogSumObjective(mu), p0, 3, engine="compiled")
    E = np.concatenate([mu, np.ones((1, 1, 3))], axis=1)
    barrier_solve(LinearObjective(-mu.sum(axis=1)), p0, 3, E=E, live=np.ones((1, 3), bool), on_fail="mask",
                  engine="compiled")
    _kernels.evaluate(owa.kind, 3, np.ascontiguousarray(owa.start(p0)), 10.0, *owa.kernel_args())
    pf_scores(np.array([[1, 2, 4]]), p0)
