"""The option vocabularies of the notions (tie-breaks, EF and GGI kinds), importable without loading
numerical code, so that CLI help and config validation read them instead of retyping them."""

TIE_BREAKS = ("utilitarian", "central")
"""For ``pf`` and ``ef``: the optimal policy with the largest total utility, or the optimal face's centre."""
EF_KINDS = ("squared", "absolute")
"""Pairwise differences of utilities in the equality notion: squared, or absolute (Gini mean difference)."""
GGI_KINDS = ("owa", "gini")
"""``ggi``: generalized Gini welfare (an OWA), or minimising the Gini coefficient of utilities."""

BUILTIN_NOTIONS: dict[str, dict[str, str]] = {
    # name -> what a listing shows (title, source, summary; label: short column title), in registration
    # order. The notion modules register from these entries, so `fairarena notions` can list the
    # built-in notions without importing their numerical code (a test checks they equal NOTIONS).
    "pf": dict(title="Procedural fairness",
               source="Procedural fairness in multi-agent multi-armed bandits (the procedural-fairness paper); "
                      "Nash tie-breaking as in Bogomolnaia, Moulin & Stong (2005)",
               summary="Every agent controls an equal 1/N share of the decision, spent on its favourite arms.",
               label="PF"),
    "ef": dict(title="Equality fairness",
               source="Procedural-fairness paper (equality notion); absolute variant: Gini mean difference",
               summary="Utilities as equal as possible: minimise 2/(N(N-1)) sum_{i<j} (U_i - U_j)^2.",
               label="EF"),
    "uf": dict(title="Utilitarian fairness", source="Procedural-fairness paper (utilitarian notion)",
               summary="Maximise total utility: all mass on argmax_k sum_i mu[i,k] (lowest index on ties).",
               label="UF"),
    "nsw": dict(title="Nash social welfare",
                source="Kaneko & Nakamura (1979); offline target of NashUCB (Hossain, Micha & Shah, NeurIPS 2021)",
                summary="Maximise sum_i log U_i(p) (agents with an all-zero reward row are left out).",
                label="NSW"),
    "ggi": dict(title="Generalized Gini welfare",
                source="Weymark (1981); GGI bandits: Busa-Fekete, Szorenyi, Weng & Mannor (ICML 2017)",
                summary="Maximise sum_m w_m U_(m), utilities ascending, w_m = 2^-(m-1) by default "
                        "(ggi_kind='gini': minimise the Gini coefficient of utilities).",
                label="GGI"),
    "maximin": dict(title="Maximin (Rawlsian) welfare", source="Rawls (1971), A Theory of Justice",
                    summary="Maximise the utility of the worst-off agent, min_i U_i(p).", label="Maximin"),
}
"""The built-in notions' descriptions (every built-in's raw value is higher-is-better)."""
