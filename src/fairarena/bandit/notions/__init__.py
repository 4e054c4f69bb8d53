"""The registry of fairness notions for collective decisions.

Each notion has an optimal policy, a raw value (higher is better) and a score in [0, 1] that is 1
exactly for the notion's optimal policies. Everything is batched: ``policy_batch`` takes a stack of
reward matrices ``(B, N, K)`` and returns ``(B, K)``; ``score_batch`` returns ``(B,)``.

Definitions follow the procedural-fairness paper on multi-agent bandits (see ``docs/notions/``):

- ``pf``  procedural fairness: every agent controls a 1/N share of the decision, spent on its
  favourite arms; ties among such policies broken by decision-share Nash welfare.
- ``ef``  equality: minimise the pairwise inequality of utilities.
- ``uf``  utilitarian: maximise the sum of utilities.
- ``nsw`` Nash social welfare: maximise ``sum_i log U_i``.
- ``ggi`` generalized Gini: maximise ``sum_m w_m U_(m)`` (utilities ascending, ``w_m = 2^-(m-1)``);
  ``ggi_kind='gini'``: minimise the Gini coefficient of utilities.
- ``maximin`` Rawlsian: maximise ``min_i U_i``.

Where a notion's optimum is not unique, the policy returned is chosen by a documented tie-break
(``tie_break='utilitarian'``, the default for ``pf`` and ``ef``: the optimal policy with the largest
total utility; ``'central'``: the centre of the optimal face, where interior-point methods land).

Layout: :mod:`.registry` (``NOTIONS``, ``Notion``, ``Options``, ``register``), one module per notion
(:mod:`.pf`, :mod:`.ef`, :mod:`.uf`, :mod:`.nsw`, :mod:`.ggi`, :mod:`.maximin`; :mod:`.owa` is the
OWA family they share), :mod:`.batching` (padded stacks, tie-break) and :mod:`.evaluation`
(``optimal_policies`` with the fallback chain, ``evaluate_batch``, ``score_all``).
"""

from __future__ import annotations

# registration order = the order of every listing (CLI, result columns)
from fairarena.bandit.notions.registry import (  # noqa: I001
    EF_KINDS,
    GGI_KINDS,
    NOTIONS,
    TIE_BREAKS,
    Notion,
    Options,
    get_notion,
    make_options,
    ratio_score,
    register,
)
from fairarena.bandit.notions.batching import pad_stack, split_live
from fairarena.bandit.notions.pf import pf_policy_from_favourites, pf_score_batch, pf_score_lp
from fairarena.bandit.notions.ef import ef_policy
from fairarena.bandit.notions.uf import uf_policy
from fairarena.bandit.notions.nsw import nsw_policy
from fairarena.bandit.notions.ggi import gini_coefficient, ggi_policy, min_gini_policy
from fairarena.bandit.notions.maximin import leximin_policy, maximin_policy
from fairarena.bandit.notions.owa import owa_lp, owa_policy, owa_value
from fairarena.bandit.notions.evaluation import (
    SCORE_KEYS,
    evaluate_batch,
    evaluate_many,
    optimal_policies,
    optimal_policies_many,
    score_all,
    score_keys,
)

__all__ = [
    "EF_KINDS", "GGI_KINDS", "NOTIONS", "TIE_BREAKS", "Notion", "Options", "get_notion", "make_options",
    "ratio_score", "register", "pad_stack", "split_live", "pf_policy_from_favourites", "pf_score_batch",
    "pf_score_lp", "ef_policy", "uf_policy", "nsw_policy", "gini_coefficient", "ggi_policy", "min_gini_policy",
    "leximin_policy", "maximin_policy", "owa_lp", "owa_policy", "owa_value", "SCORE_KEYS", "evaluate_batch",
    "evaluate_many", "optimal_policies", "optimal_policies_many", "score_all", "score_keys",
]
