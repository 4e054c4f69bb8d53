"""The option vocabularies of the notions (tie-breaks, EF and GGI kinds), importable without loading
numerical code, so that CLI help and config validation read them instead of retyping them."""

TIE_BREAKS = ("utilitarian", "central")
"""For ``pf`` and ``ef``: the optimal policy with the largest total utility, or the optimal face's centre."""
EF_KINDS = ("squared", "absolute")
"""Pairwise differences of utilities in the equality notion: squared, or absolute (Gini mean difference)."""
GGI_KINDS = ("owa", "gini")
"""``ggi``: generalized Gini welfare (an OWA), or minimising the Gini coefficient of utilities."""
