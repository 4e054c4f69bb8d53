"""The PF learner's hot paths: its policy on an estimated favourite mask, and a block runner.

Both are exact: :func:`pf_policy_decomposed` solves the same program as
:func:`fairarena.bandit.notions.pf_policy_from_favourites` (decision-share Nash welfare, the
centre of the optimal face), and :func:`pf_run_seed` reproduces the round-by-round harness bit
for bit (``tests/learners`` checks both).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from fairarena.errors import SolverError

# ------------------------------------------------------------------------------------------------
# The PF policy of an estimated mask
# ------------------------------------------------------------------------------------------------


def nash_shares_policy(A: np.ndarray, w: np.ndarray, tol: float = 1e-14, sigma: float = 0.1,
                       max_iter: int = 200) -> np.ndarray:
    """maximise ``sum_g w_g log(A_g . p)`` over the simplex, for one small instance ``A (D, K)``.

    A primal-dual path-following interior-point method (Nocedal & Wright, ch. 19) on the KKT
    system ``grad f(p) - s + nu 1 = 0``, ``sum p = 1``, ``p_k s_k = sigma mu``, with step to 99% of
    the boundary; typically 15-20 Newton steps. It follows the same central path as the barrier
    method of :mod:`fairarena.bandit.solver`, so it ends at the same point (the analytic centre of
    the optimal face) up to the flatness of the optimum: decision shares agree to ~1e-6 when the
    Nash values agree to ~1e-12. Raises :class:`SolverError` if it does not converge.
    """
    d, k = A.shape
    if k == 1:
        return np.ones(1)
    w = np.asarray(w, dtype=float) / float(np.sum(w))
    p = np.full(k, 1.0 / k)
    grad = -(A.T @ (w / (A @ p)))
    nu = 1.0 - grad.min()
    s = grad + nu
    ones = np.ones(k)
    diag = np.diag_indices(k)
    for _ in range(max_iter):
        u = A @ p
        gw = w / u
        grad = -(A.T @ gw)
        rd = grad - s + nu
        rp = p.sum() - 1.0
        mu = float(p @ s) / k
        if mu < tol and np.abs(rd).max() < 1e-11 and abs(rp) < 1e-13:
            break
        M = (A.T * (gw / u)) @ A
        M[diag] += s / p
        X = np.linalg.solve(M, np.column_stack([-rd + sigma * mu / p - s, ones]))
        x, y = X[:, 0], X[:, 1]
        dnu = (x.sum() + rp) / y.sum()
        dp = x - dnu * y
        ds = (sigma * mu - p * s - s * dp) / p
        step = 1.0
        neg = dp < 0
        if neg.any():
            step = min(step, 0.99 * float(np.min(-p[neg] / dp[neg])))
        neg = ds < 0
        if neg.any():
            step = min(step, 0.99 * float(np.min(-s[neg] / ds[neg])))
        if not np.isfinite(step):
            raise SolverError("PF policy: interior-point step is not finite")
        p = p + step * dp
        s = s + step * ds
        nu = nu + step * dnu
    else:
        raise SolverError(f"PF policy: interior-point method did not converge (mu = {mu:.3g})")
    p = np.where(p < 1e-9, 0.0, p)
    return p / p.sum()


def pf_policy_decomposed(fav: np.ndarray, cache: dict | None = None) -> np.ndarray:
    """The PF policy of one favourite mask ``(N, K)`` (decision-share Nash welfare, centre of the
    optimal face), by decomposition.

    Agents and arms form a bipartite graph (agent i -- arm k when k is in F_i); the Nash program
    separates over its connected components. A component whose agents number ``N_c`` gets mass
    ``N_c / N`` (Nash welfare is scale invariant), spread evenly over the arms all its agents
    like when there are such arms (every agent of it then has share 1, the best possible), and
    otherwise solved by :func:`nash_shares_policy` on the component alone (agents with the same
    set merged into one weighted row; cached by the component's mask).
    """
    n, k = fav.shape
    p = np.zeros(k)
    # distinct favourite sets as integer codes (arm j -> bit j) with their multiplicities
    codes = fav.astype(np.int64) @ (np.int64(1) << np.arange(k, dtype=np.int64)) if k < 63 else None
    if codes is None:
        rows, counts = np.unique(fav, axis=0, return_counts=True)
        sets = [frozenset(np.flatnonzero(r).tolist()) for r in rows]
    else:
        uniq, counts = np.unique(codes, return_counts=True)
        sets = [frozenset(j for j in range(k) if (c >> j) & 1) for c in uniq.tolist()]
    # connected components of the sets (sets sharing an arm are connected)
    comps: list[tuple[set, list[int]]] = []
    for g, st in enumerate(sets):
        merged_arms, merged_groups = set(st), [g]
        keep = []
        for arms_c, groups_c in comps:
            if arms_c & merged_arms:
                merged_arms |= arms_c
                merged_groups += groups_c
            else:
                keep.append((arms_c, groups_c))
        comps = keep + [(merged_arms, merged_groups)]
    for arms_c, groups_c in comps:
        mass = float(counts[groups_c].sum()) / n
        common = frozenset.intersection(*[sets[g] for g in groups_c])
        if common:
            idx = sorted(common)
            p[idx] = mass / len(idx)
            continue
        arms = sorted(arms_c)
        groups_c = sorted(groups_c)
        A = np.array([[j in sets[g] for j in arms] for g in groups_c], dtype=float)
        w = counts[groups_c].astype(float)
        key = ("component", A.shape, A.tobytes(), w.tobytes())
        q = cache.get(key) if cache is not None else None
        if q is None:
            q = nash_shares_policy(A, w)
            if cache is not None:
                cache[key] = q
        p[arms] = mass * q
    return p / p.sum()


def pf_estimated_favourites(mean: np.ndarray, rad: np.ndarray) -> np.ndarray:
    """Estimated favourite sets ``(..., N, K)`` from means ``(..., N, K)`` and radii ``(..., K)``:
    every arm whose UCB reaches the LCB of the agent's empirically best arm."""
    best = mean.argmax(axis=-1)[..., None]
    lcb_best = (np.take_along_axis(mean, best, axis=-1)
                - np.take_along_axis(np.broadcast_to(rad[..., None, :], mean.shape), best, axis=-1))
    return (mean + rad[..., None, :]) >= lcb_best


# ------------------------------------------------------------------------------------------------
# Block runner
# ------------------------------------------------------------------------------------------------

def _stable_block(a: np.ndarray, r: np.ndarray, n: np.ndarray, sums: np.ndarray, mean: np.ndarray,
                  rad: np.ndarray, fav: np.ndarray, scale: float):
    """Whether no favourite set can change during a block of pulls ``a`` with rewards ``r``.

    Per arm, the running means after each of its pulls are computed exactly as the round-by-round
    update does (sequential sums divided by counts), and their range over the block bounds every
    mean the block visits; radii only shrink. If every membership comparison holds for the whole
    box of possible values -- arms in the set keep ``UCB >= LCB`` of every arm that could be the
    empirical best, arms out of it keep ``UCB <`` all of those -- no set changes. Rounding is
    monotone, so the bounds computed in floating point still bound the computed values.
    Returns ``(stable, n_end, sums_end)``.
    """
    K = n.shape[0]
    counts = np.bincount(a, minlength=K)
    lo, hi = mean.copy(), mean.copy()
    sums_end = sums.copy()
    n_end = n + counts
    for k in np.flatnonzero(counts):
        cs = np.cumsum(np.concatenate([sums[None, :, k], r[a == k]]), axis=0)[1:]
        mk = cs / (n[k] + np.arange(1, counts[k] + 1, dtype=float))[:, None]
        np.minimum(lo[:, k], mk.min(axis=0), out=lo[:, k])
        np.maximum(hi[:, k], mk.max(axis=0), out=hi[:, k])
        sums_end[:, k] = cs[-1]
    rlo = scale / np.sqrt(n_end)
    rhi = rad
    cand = hi >= lo.max(axis=1, keepdims=True)  # arms that may be the empirical best
    lcb_hi = np.where(cand, hi - rlo, -np.inf).max(axis=1, keepdims=True)
    lcb_lo = np.where(cand, lo - rhi, np.inf).min(axis=1, keepdims=True)
    stay_in = fav & ((lo + rlo) >= lcb_hi)
    stay_out = ~fav & ((hi + rhi) < lcb_lo)
    return bool((stay_in | stay_out).all()), n_end, sums_end


def pf_run_seed(spec: Any, env: Any, T: int, seed: int, record: Callable, arms_out: np.ndarray,
                true_fav: np.ndarray, progress: Callable[[int], None] | None = None,
                cache: dict | None = None) -> dict[str, int]:
    """The PF learner on one seed, in speculative blocks; the same trajectory as the round-by-round
    harness, bit for bit.

    Between two changes of the estimated favourite sets the policy of round t is the fixed
    ``(1 - eps_t) pi + eps_t / K``, so a block of rounds can be sampled at once. A cheap sufficient
    test (:func:`_stable_block`) accepts blocks in which no set can change; otherwise the sets after
    every round of a (small) block are computed exactly, the block is cut after the first round
    whose update changes a set, and the unused reward draws go back to the stacks.
    ``record(t0, P (m, K), miss (m,))`` receives every committed stretch of rounds.
    """
    from fairarena.learners.env import SAMPLER_STREAM, ArmStacks, RoundUniforms, seed_stream

    N, K = env.n_agents, env.n_arms
    state = spec.build(N, K, T, 1, cache=cache)
    scale = state.radius_scale
    stacks = ArmStacks(env, seed)
    uni = RoundUniforms(seed_stream(seed, SAMPLER_STREAM))
    eps = state.eps
    n = np.zeros(K)
    sums = np.zeros((N, K))
    mean = np.zeros((N, K))
    rad = np.full(K, np.inf)
    fav = np.ones((N, K), dtype=bool)
    pi = np.full(K, 1.0 / K)
    # rounds 1..K: every arm once, in order
    first = np.arange(K)
    r0 = stacks.peek(first)
    stacks.commit(first)
    for a in range(K):
        sums[:, a] += r0[a]
        n[a] += 1.0
        mean[:, a] = sums[:, a] / n[a]
        rad[a] = scale / np.sqrt(n[a])
    record(1, np.eye(K), np.full(K, bool((fav != true_fav).any())))
    arms_out[:K] = first
    new = pf_estimated_favourites(mean, rad)
    if (new != fav).any():
        fav = new
        pi = state.pf_policy(fav)
    if progress:
        progress(K)
    t, b = K + 1, 64
    small = 64
    while t <= T:
        b = min(b, T - t + 1)
        e = eps[t:t + b, None]
        P = (1.0 - e) * pi + e / K
        u = uni.get(t, b)
        a = (np.cumsum(P, axis=1) < u[:, None]).sum(axis=1)
        np.minimum(a, K - 1, out=a)
        r = stacks.peek(a)
        j = -1
        if b > small:
            ok, n_end, s_end = _stable_block(a, r, n, sums, mean, rad, fav, scale)
            if not ok:
                b = max(small, b // 4)
                continue
            m = b
            n, sums = n_end, s_end
        else:
            rows = np.arange(b)
            oh = np.zeros((b + 1, K))
            oh[0] = n
            oh[rows + 1, a] = 1.0
            n_t = np.cumsum(oh, axis=0)[1:]
            R = np.zeros((b + 1, N, K))
            R[0] = sums
            R[rows + 1, :, a] = r
            S_t = np.cumsum(R, axis=0)[1:]
            fav_t = pf_estimated_favourites(S_t / n_t[:, None, :], scale / np.sqrt(n_t))
            ch = (fav_t != fav).any(axis=(1, 2))
            j = int(ch.argmax()) if ch.any() else -1
            m = j + 1 if j >= 0 else b
            n, sums = n_t[m - 1].copy(), S_t[m - 1].copy()
        stacks.commit(a[:m])
        arms_out[t - 1:t - 1 + m] = a[:m]
        record(t, P[:m], np.full(m, bool((fav != true_fav).any())))
        mean = sums / n
        rad = scale / np.sqrt(n)
        if j >= 0:
            fav = fav_t[j]
            pi = state.pf_policy(fav)
            b = small
        else:
            b = min(2 * b, 8192)
        t += m
        if progress:
            progress(m)
    return {"recomputes": state.recomputes}
