"""Candidate-set rules as pure, batched functions on utility profiles.

A profile is a utility array ``U`` of shape ``(B, N, K)``: ``B`` profiles, ``N`` agents, ``K``
candidates. Every rule returns a lottery ``(B, K)`` over the candidates: a deterministic rule puts
equal probability on its tied winners (so no agent and no candidate is favoured by a tie-break:
anonymity and neutrality are kept), the procedural-fairness rule returns its own lottery.

Preferences for the ranking rules are read from utilities: agent ``i`` strictly prefers ``a`` to ``b``
when ``U[i, a] > U[i, b] + TOL``; closer values are a tie (weak orders).

Definitions (citations in docs/aggregation.md and the registry entries):

* utilitarian: maximise ``sum_i U[i, k]``;
* maximin: maximise ``min_i U[i, k]``;
* leximin: maximise the ascending-sorted utility vector lexicographically;
* nash: maximise the number of agents with positive utility, then ``sum_i log U[i, k]`` over them;
* ks (Kalai-Smorodinsky): rescale each agent to [0, 1] between its worst and best candidate, then maximin;
* plurality: each agent gives 1 split equally over its favourite candidates;
* borda: score ``#{b : a > b} - #{b : b > a}`` summed over agents (for strict orders an affine
  transform of the classical ``K - rank`` score: same winners);
* copeland: ``#{b : a beats b} - #{b : b beats a}`` by pairwise majority margin;
* schulze: strongest paths over positive majority margins (winning-margin strength); ``a`` wins when
  ``p[a, b] >= p[b, a]`` for all ``b`` (Schulze 2011; pref_voting's ``beat_path``);
* fixed-weight / variance-weighted scalarisation: maximise ``sum_i w_i U[i, k]`` with fixed weights, or
  with ``w_i`` proportional to the variance of agent ``i``'s utilities across the candidates.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "TOL",
    "winners_lottery",
    "utilitarian",
    "maximin",
    "leximin",
    "nash",
    "kalai_smorodinsky",
    "plurality",
    "borda",
    "borda_scores",
    "copeland",
    "schulze",
    "strongest_paths",
    "weighted",
    "variance_weights",
    "margins",
    "pf_lottery",
    "per_agent_range",
    "unit",
]

TOL = 1e-9


def winners_lottery(score: np.ndarray, alive: np.ndarray | None = None) -> np.ndarray:
    """Uniform lottery over the maximisers of ``score (B, K)`` (within ``TOL`` relative to 1)."""
    score = np.asarray(score, dtype=float)
    if alive is not None:
        score = np.where(alive, score, -np.inf)
    best = score.max(axis=-1, keepdims=True)
    win = score >= best - TOL * np.maximum(1.0, np.abs(best))
    return win / win.sum(axis=-1, keepdims=True)


def _b(U: np.ndarray) -> np.ndarray:
    U = np.asarray(U, dtype=float)
    return U[None] if U.ndim == 2 else U


def _out(P: np.ndarray, U: np.ndarray) -> np.ndarray:
    return P[0] if np.ndim(U) == 2 else P


def utilitarian(U: np.ndarray) -> np.ndarray:
    V = _b(U)
    return _out(winners_lottery(V.sum(axis=1)), U)


def maximin(U: np.ndarray) -> np.ndarray:
    V = _b(U)
    return _out(winners_lottery(V.min(axis=1)), U)


def _lexi(S: np.ndarray) -> np.ndarray:
    """Lexicographic maximisers of score vectors ``S (B, K, M)`` (column 0 first)."""
    alive = np.ones(S.shape[:2], dtype=bool)
    for j in range(S.shape[2]):
        col = np.where(alive, S[:, :, j], -np.inf)
        best = col.max(axis=1, keepdims=True)
        alive &= col >= best - TOL * np.maximum(1.0, np.abs(best))
    return alive / alive.sum(axis=1, keepdims=True)


def leximin(U: np.ndarray) -> np.ndarray:
    V = _b(U)
    return _out(_lexi(np.sort(V, axis=1).transpose(0, 2, 1)), U)


def nash(U: np.ndarray) -> np.ndarray:
    V = _b(U)
    pos = V > TOL
    count = pos.sum(axis=1).astype(float)
    logs = np.where(pos, np.log(np.where(pos, V, 1.0)), 0.0).sum(axis=1)
    return _out(_lexi(np.stack([count, logs], axis=2)), U)


def kalai_smorodinsky(U: np.ndarray) -> np.ndarray:
    return _out(winners_lottery(unit(U).min(axis=1)), U)


def favourites(V: np.ndarray) -> np.ndarray:
    """Favourite candidates ``(B, N, K)`` of every agent (ties within ``TOL``)."""
    return V >= V.max(axis=2, keepdims=True) - TOL


def plurality(U: np.ndarray) -> np.ndarray:
    V = _b(U)
    fav = favourites(V)
    score = (fav / fav.sum(axis=2, keepdims=True)).sum(axis=1)
    return _out(winners_lottery(score), U)


def prefers(V: np.ndarray) -> np.ndarray:
    """``(B, N, K, K)`` booleans: agent ``i`` strictly prefers ``a`` to ``b``."""
    return V[:, :, :, None] > V[:, :, None, :] + TOL


def borda_scores(U: np.ndarray) -> np.ndarray:
    """Borda scores ``(B, K)`` (``(K,)`` for one profile): ``#{b : a > b} - #{b : b > a}`` summed over
    agents (for strict orders ``2 (K - 1 - rank) - (K - 1)`` per agent: the classical points, doubled and
    shifted)."""
    pr = prefers(_b(U))
    return _out(pr.sum(axis=(1, 3)).astype(float) - pr.sum(axis=(1, 2)).astype(float), U)


def borda(U: np.ndarray) -> np.ndarray:
    return _out(winners_lottery(borda_scores(_b(U))), U)


def margins(V: np.ndarray) -> np.ndarray:
    """Majority margins ``(B, K, K)``: ``#{i : a > b} - #{i : b > a}``."""
    pr = prefers(_b(V)).sum(axis=1).astype(float)
    return pr - pr.transpose(0, 2, 1)


def copeland(U: np.ndarray) -> np.ndarray:
    M = margins(U)
    score = (M > 0).sum(axis=2).astype(float) - (M < 0).sum(axis=2)
    return _out(winners_lottery(score), U)


def strongest_paths(M: np.ndarray) -> np.ndarray:
    """Schulze's strongest paths ``(B, K, K)`` over the positive majority margins ``M (B, K, K)``
    (winning-margin strength; widest paths by Floyd-Warshall on the bottleneck semiring, batched; the
    diagonal 0)."""
    K = M.shape[1]
    p = np.where(M > 0, M, 0.0)
    for k in range(K):
        p = np.maximum(p, np.minimum(p[:, :, k:k + 1], p[:, k:k + 1, :]))
    idx = np.arange(K)
    p[:, idx, idx] = 0.0
    return p


def schulze(U: np.ndarray) -> np.ndarray:
    p = strongest_paths(margins(U))
    win = (p >= p.transpose(0, 2, 1)).all(axis=2)
    return _out(win / win.sum(axis=1, keepdims=True), U)


def variance_weights(U: np.ndarray) -> np.ndarray:
    """Weights ``(B, N)`` proportional to each agent's variance of utility across the candidates
    (equal weights where every agent is indifferent)."""
    V = _b(U)
    var = V.var(axis=2)
    tot = var.sum(axis=1, keepdims=True)
    n = V.shape[1]
    return np.where(tot > 0, var / np.where(tot > 0, tot, 1.0), 1.0 / n)


def weighted(U: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Scalarisation ``sum_i w_i U[i, k]`` (``weights (N,)`` or ``(B, N)``; default equal)."""
    V = _b(U)
    w = np.full(V.shape[:2], 1.0 / V.shape[1]) if weights is None else np.broadcast_to(
        np.asarray(weights, dtype=float), V.shape[:2])
    return _out(winners_lottery(np.einsum("bn,bnk->bk", w, V)), U)


def per_agent_range(V: np.ndarray, best: np.ndarray | None = None, tol: float = TOL) -> np.ndarray:
    """The one per-agent normalisation over candidates: values ``V (..., N, K)`` rescaled per agent
    (row) to ``(V - worst) / (best - worst)``, worst = the agent's lowest value, best = its highest
    (or ``best (..., N)``, e.g. the value of its own proposal); an agent whose span is at most ``tol``
    is indifferent (all ones). Not clipped (values above a given ``best`` exceed 1). Used by the
    candidate rules (:func:`unit`, Kalai-Smorodinsky) and the tourism payoff table."""
    V = np.asarray(V, dtype=float)
    lo = V.min(axis=-1, keepdims=True)
    hi = V.max(axis=-1, keepdims=True) if best is None else np.asarray(best, dtype=float)[..., None]
    span = hi - lo
    return np.where(span > tol, (V - lo) / np.where(span > tol, span, 1.0), 1.0)


def unit(U: np.ndarray) -> np.ndarray:
    """Each agent's utilities rescaled to [0, 1] between its worst and best candidate (favourites and
    preferences unchanged; an indifferent agent gets all ones): :func:`per_agent_range`, batched."""
    return per_agent_range(_b(U))


def pf_lottery(U: np.ndarray) -> np.ndarray:
    """The procedural-fairness lottery: the bandit core's ``pf`` notion with the candidates as arms and
    the agents' utilities as rewards (each agent an equal 1/N decision share on its favourite
    candidates; decision-share Nash welfare, then the utilitarian tie-break). Calls the notion."""
    from fairarena.bandit.notions import NOTIONS

    P = NOTIONS.get("pf").policy_batch(unit(U), tol=TOL)
    return _out(P, U)


def pf_score(U: np.ndarray, P: np.ndarray) -> np.ndarray:
    """The PF score (decision share) of lotteries ``P (B, K)`` over the agents' favourites."""
    from fairarena.bandit.notions import NOTIONS

    P2 = np.asarray(P, dtype=float)
    P2 = P2[None] if P2.ndim == 1 else P2
    s = NOTIONS.get("pf").value_batch(unit(U), P2, tol=TOL)
    return s[0] if np.ndim(U) == 2 else s
