"""Regenerate ``docs/reproduction.md`` from real full sweeps of the ``paper`` grid.

    .venv/bin/python scripts/make_reproduction.py [--out out/reproduction] [--workers 2] [--reuse]

Runs five full sweeps into ``--out`` (``--reuse`` reads sweeps already there): default options (with
the maximin policy added), EF with absolute differences, the 'central' tie-break, GGI read as
minimising the Gini coefficient (``ggi_kind='gini'``), and the alternative agent counts N = 3..20.
Then it writes the page: our Table 1 beside the paper's numbers and every gap, with the numbers
computed here, never typed in.
"""

from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path

import numpy as np
import pandas as pd

from fairarena.fsutil import atomic_write_text
from fairarena.provenance import run_record
from fairarena.report.sweep_figures import POLICY_TITLES
from fairarena.sweep.config import preset
from fairarena.sweep.run import run_sweep
from fairarena.sweep.store import write_sweep

ROOT = Path(__file__).resolve().parent.parent
POLICIES = ("pf", "ef", "uf", "nsw", "ggi")
NOTIONS = ("pf", "ef", "uf")
# The paper's Table 1 (mean, std) as quoted in issue 3. Only the PF row is from the paper itself;
# the other rows come from an unverified secondary summary.
PAPER = {
    "pf": {"pf": (1.00, 0.00), "ef": (0.98, 0.02), "uf": (0.97, 0.05)},
    "ef": {"pf": (0.66, 0.31), "ef": (1.00, 0.00), "uf": (0.84, 0.13)},
    "uf": {"pf": (0.78, 0.27), "ef": (0.96, 0.05), "uf": (1.00, 0.00)},
    "nsw": {"pf": (0.82, 0.23), "ef": (0.97, 0.03), "uf": (1.00, 0.01)},
    "ggi": {"pf": (0.70, 0.28), "ef": (1.00, 0.00), "uf": (0.87, 0.11)},
}
VARIANTS = {
    "default": dict(policies=[*POLICIES, "maximin"]),  # maximin changes no other policy's numbers
    "absolute": dict(ef_kind="absolute"),
    "central": dict(tie_break="central"),
    "gini": dict(ggi_kind="gini"),
    "n3to20": dict(N=list(range(3, 21))),
}


def run_variants(out: Path, workers: int | None, reuse: bool,
                 base: str = "paper") -> dict[str, tuple[pd.DataFrame, dict]]:
    res = {}
    for name, over in VARIANTS.items():
        d = out / name
        if not (reuse and (d / "summary.json").is_file()):
            cfg = preset(base, **over)
            r = run_sweep(cfg, workers=workers)
            rec = run_record(cfg.model_dump(), cfg.seed, command="make_reproduction", variant=name)
            write_sweep(d, r.frame, {**r.summary, "versions": rec["versions"], "revision": rec["revision"]}, rec)
            print(f"{name}: {r.summary['n_settings']} settings in {r.summary['seconds']:.1f} s", flush=True)
        res[name] = (pd.read_parquet(d / "settings.parquet"), json.loads((d / "summary.json").read_text()))
    return res


def table(df: pd.DataFrame, col: dict[str, str] | None = None,
          policies: tuple[str, ...] = POLICIES) -> dict[str, dict[str, tuple[float, float]]]:
    col = col or {}
    out = {}
    for p in policies:
        sub = df[df.policy == p]
        out[p] = {n: (float(sub[col.get(n, n)].mean()), float(sub[col.get(n, n)].std(ddof=1))) for n in NOTIONS}
    return out


def ef_variants(df: pd.DataFrame) -> dict[str, pd.Series]:
    """Post-hoc EF normalisations from the raw inequality values of the default (squared) sweep."""
    i = -df["ef_value"]
    i_star = -df.groupby("setting_id")["ef_value"].transform("max")  # the EF policy's inequality
    i_max = -df["ef_worst_value"]
    rng = (i_max - i_star).where(i_max - i_star > 1e-15)
    return {
        "1 - (I - I*), squared differences (default)": (1 - (i - i_star)).clip(0, 1),
        "1 - (I - I*) / (I_max - I*), squared (range-normalised)": (1 - ((i - i_star) / rng).fillna(0)).clip(0, 1),
        "1 - (sqrt I - sqrt I*), root-mean-square differences": (1 - (np.sqrt(i) - np.sqrt(i_star))).clip(0, 1),
        "I* / I (ratio)": (i_star / i.where(i > 0)).fillna(1.0).clip(0, 1),
    }


def cell(m: tuple[float, float]) -> str:
    return f"{m[0]:.2f} ± {m[1]:.2f}"


def side_by_side(ours: dict, title: str) -> list[str]:
    lines = [f"| policy | PF ours | PF paper | EF ours | EF paper | UF ours | UF paper |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for p in POLICIES:
        row = [POLICY_TITLES[p]]
        for n in NOTIONS:
            row += [cell(ours[p][n]), cell(PAPER[p][n])]
        lines.append("| " + " | ".join(row) + " |")
    return [f"**{title}**", ""] + lines + [""]


def gap(ours: dict, notion: str, policies=POLICIES) -> float:
    return float(np.mean([abs(ours[p][notion][0] - PAPER[p][notion][0]) for p in policies]))


def by_group(df: pd.DataFrame, key: str) -> list[str]:
    rows = []
    labels = df[[key]].drop_duplicates()[key].tolist()
    if key == "culture":
        lab = df.apply(lambda r: r.culture if r.culture != "mallows" else f"mallows phi={r.phi:g}", axis=1)
        df = df.assign(_g=lab)
        labels = list(dict.fromkeys(lab))
    else:
        df = df.assign(_g=df[key])
    rows.append(f"| {key} | " + " | ".join(f"{POLICY_TITLES[p]} policy: PF" for p in POLICIES) + " |")
    rows.append("| --- " * (len(POLICIES) + 1) + "|")
    for g in labels:
        sub = df[df._g == g]
        rows.append(f"| {g} | " + " | ".join(f"{sub[sub.policy == p]['pf'].mean():.2f}" for p in POLICIES) + " |")
    return rows


def fav_mix_table(df: pd.DataFrame) -> list[str]:
    """PF column of Table 1 on favourite-count sub-grids (and equal weighting of the two modes)."""
    mixes: dict[str, pd.DataFrame | tuple[pd.DataFrame, pd.DataFrame]] = {
        "whole grid (45/54 fixed, 9/54 random)": df,
        "fixed only": df[df.fav_mode == "fixed"],
        "random only": df[df.fav_mode == "random"],
        "fixed and random weighted equally": (df[df.fav_mode == "fixed"], df[df.fav_mode == "random"]),
        "fixed f = 1 only (single favourites)": df[(df.fav_mode == "fixed") & (df.f == 1)],
        "fixed f = 1 and random": df[((df.fav_mode == "fixed") & (df.f == 1)) | (df.fav_mode == "random")],
        "fixed f <= 2 and random": df[((df.fav_mode == "fixed") & (df.f <= 2)) | (df.fav_mode == "random")],
        "fixed f >= 3 only": df[(df.fav_mode == "fixed") & (df.f >= 3)],
    }
    rows = ["| favourite mix | settings | " + " | ".join(f"{POLICY_TITLES[p]} policy: PF" for p in POLICIES)
            + " | gap to paper |", "| --- " * (len(POLICIES) + 3) + "|"]
    for name, sub in mixes.items():
        if isinstance(sub, tuple):
            means = {p: 0.5 * (sub[0][sub[0].policy == p]["pf"].mean() + sub[1][sub[1].policy == p]["pf"].mean())
                     for p in POLICIES}
            count = sub[0].setting_id.nunique() + sub[1].setting_id.nunique()
        else:
            means = {p: sub[sub.policy == p]["pf"].mean() for p in POLICIES}
            count = sub.setting_id.nunique()
        g = float(np.mean([abs(means[p] - PAPER[p]["pf"][0]) for p in POLICIES if p != "pf"]))
        rows.append(f"| {name} | {count:,} | " + " | ".join(f"{means[p]:.2f}" for p in POLICIES) + f" | {g:.3f} |")
    rows.append("| paper | 7,776 | " + " | ".join(f"{PAPER[p]['pf'][0]:.2f}" for p in POLICIES) + " | |")
    return rows


def write_page(res: dict, out: Path, page: Path) -> None:
    df, summ = res["default"]
    ours = table(df)
    abs_df, abs_summ = res["absolute"]
    cen_df, cen_summ = res["central"]
    ours_abs, ours_cen = table(abs_df), table(cen_df)
    efv = {name: table(df.assign(_ef=s), {"ef": "_ef"}) for name, s in ef_variants(df).items()}
    efv["absolute differences, ef_kind = \"absolute\" (its own EF policy and optimum)"] = ours_abs
    ef_gaps = {name: gap(t, "ef") for name, t in efv.items()}
    best_ef = min(ef_gaps, key=ef_gaps.get)
    pf_min = float(df[df.policy == "pf"]["pf"].min())
    grp = df.assign(_g=df.culture + df.phi.fillna(-1).astype(str))

    def rng_(policy: str) -> tuple[float, float]:
        m = grp[grp.policy == policy].groupby("_g")["pf"].mean()
        return float(m.min()), float(m.max())

    cfg = summ["config"]
    revision = summ.get("revision") or "not recorded (sweep run outside a git checkout)"
    n = summ["n_settings"]
    t = summ["seconds"]
    L: list[str] = []
    L += ["# Reproducing the procedural-fairness study (Table 1, Figure 1, Figure 2)", "",
          "<!-- generated by scripts/make_reproduction.py from real full sweeps; do not edit by hand -->", "",
          f"Regenerate: `.venv/bin/python scripts/make_reproduction.py --out {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}`"
          " (five full sweeps of the `paper` grid, then this page).", "",
          f"Grid: the `paper` preset ({n:,} settings, seed {cfg['seed']}; see [sweep.md](sweep.md)): "
          f"N in {cfg['N'][0]}..{cfg['N'][-1]}, K in {cfg['K'][0]}..{cfg['K'][-1]}, cultures "
          f"{', '.join(cfg['cultures'])} (Mallows phi in {', '.join(map(str, cfg['phi']))}), favourites "
          f"{' and '.join(cfg['favourites'])} (fixed f in 1..K-1). Rewards Uniform({cfg['reward_low']}, "
          f"{cfg['reward_high']}) by rank. Mean ± sample std (ddof = 1) over settings.",
          f"The default sweep took {t:.1f} s wall on this machine ({summ['timing']['workers'] or 'all'} workers, "
          f"{platform.machine()}, revision `{revision}`).", ""]
    L += ["## Table 1: ours beside the paper's", ""]
    L += side_by_side(ours, "Default options (EF with squared differences, utilitarian tie-break)")
    L += ["The paper's PF row is from the paper; the other four rows come from an unverified secondary "
          "summary quoted in the issue.", ""]
    # gaps
    L += ["## Gaps, one by one", ""]
    pf_row_gap = max(abs(ours["pf"][k][0] - PAPER["pf"][k][0]) for k in NOTIONS)
    L += [f"**PF row.** The PF policy scores {ours['pf']['pf'][0]:.2f} on PF in every setting (minimum "
          f"{pf_min:.9f}; it is PF by construction and the score is an exact max-flow). Its EF and UF means "
          f"are {ours['pf']['ef'][0]:.2f} and {ours['pf']['uf'][0]:.2f} against the paper's 0.98 and 0.97: "
          f"the largest gap in this row is {pf_row_gap:.2f}, within the paper's own standard deviations. "
          "This is the one row we can hold the paper to, and it reproduces.", ""]
    L += ["**EF column and normalisation.** The paper's EF normalisation was lost in our copy. The EF means of "
          "each policy under the variants we can compute (the first four from the default sweep's raw "
          "inequalities; the last is a separate sweep whose EF policy minimises the Gini mean difference):", "",
          "| EF score variant | " + " | ".join(f"{POLICY_TITLES[p]}" for p in POLICIES) + " | mean abs gap to paper |",
          "| --- " * (len(POLICIES) + 2) + "|",
          "| paper | " + " | ".join(f"{PAPER[p]['ef'][0]:.2f}" for p in POLICIES) + " | |"]
    for name, tt in efv.items():
        L.append(f"| {name} | " + " | ".join(f"{tt[p]['ef'][0]:.2f}" for p in POLICIES) + f" | {ef_gaps[name]:.3f} |")
    L += ["", f"Closest to the paper's EF column: **{best_ef}** (mean absolute gap {ef_gaps[best_ef]:.3f}). "
          "The paper's EF column is near 1 for every policy (0.96 to 1.00), which is what an unnormalised "
          "difference of a small quantity produces: with utilities in (0, 1) the squared inequality is small, "
          "so `1 - (I - I*)` stays near 1; the range-normalised and ratio variants spread the scores out and "
          "move away from the paper.", ""]
    # EF row
    L += [f"**EF row.** Our EF policy scores {cell(ours['ef']['pf'])} on PF (paper {cell(PAPER['ef']['pf'])}) and "
          f"{cell(ours['ef']['uf'])} on UF (paper {cell(PAPER['ef']['uf'])}). With absolute differences the "
          f"EF policy changes and scores {cell(ours_abs['ef']['pf'])} on PF and {cell(ours_abs['ef']['uf'])} on UF. "
          f"The EF optimum is often a whole face of the simplex (e.g. any policy equalising utilities); "
          f"our default tie-break picks the most utilitarian point of it, the 'central' tie-break (where "
          f"interior-point solvers land) gives {cell(ours_cen['ef']['pf'])} on PF and {cell(ours_cen['ef']['uf'])} "
          "on UF. Which point the paper's solver returned is unknown, but on our grid the tie-break moves this "
          f"row's PF mean by only {abs(ours['ef']['pf'][0] - ours_cen['ef']['pf'][0]):.3f}; the grid's mix of cultures moves it far more: the EF policy's mean PF score ranges from "
          f"{rng_('ef')[0]:.2f} to {rng_('ef')[1]:.2f} across cultures (table below).", ""]
    L += [f"**UF row.** {cell(ours['uf']['pf'])} / {cell(ours['uf']['ef'])} / {cell(ours['uf']['uf'])} against "
          f"{cell(PAPER['uf']['pf'])} / {cell(PAPER['uf']['ef'])} / 1.00. The UF policy is a vertex "
          "(closed form), so the only sources of gap are the grid and the EF normalisation.", ""]
    L += [f"**NSW row.** {cell(ours['nsw']['pf'])} / {cell(ours['nsw']['ef'])} / {cell(ours['nsw']['uf'])} against "
          f"{cell(PAPER['nsw']['pf'])} / {cell(PAPER['nsw']['ef'])} / {cell(PAPER['nsw']['uf'])}. NSW is strictly "
          "concave in utilities, so its utilities are unique (its policy need not be, which can move the PF score); "
          f"across cultures its mean PF score ranges from {rng_('nsw')[0]:.2f} to {rng_('nsw')[1]:.2f}, so the "
          "unknown mix of the paper's grid can account for it.", ""]
    gini_df, _ = res["gini"]
    ours_gini = table(gini_df)
    mm = table(df, policies=("maximin",))["maximin"]
    ggi_cands = {
        "GGI, w_m = 2^-(m-1) (default)": ours["ggi"],
        "maximin (the OWA extreme: all weight on the worst-off)": mm,
        "minimise the Gini coefficient of utilities (`ggi_kind = \"gini\"`)": ours_gini["ggi"],
        "minimise the Gini mean difference (our EF policy, absolute kind)": ours_abs["ef"],
    }

    def ggi_gap(row: dict) -> float:
        return float(np.mean([abs(row[k][0] - PAPER["ggi"][k][0]) for k in NOTIONS]))

    best_ggi = min(ggi_cands, key=lambda k: ggi_gap(ggi_cands[k]))
    L += [f"**GGI row.** {cell(ours['ggi']['pf'])} / {cell(ours['ggi']['ef'])} / {cell(ours['ggi']['uf'])} against "
          f"{cell(PAPER['ggi']['pf'])} / {cell(PAPER['ggi']['ef'])} / {cell(PAPER['ggi']['uf'])}: the largest gap. "
          "An earlier version of this page explained it by our weights w_m = 2^-(m-1) weighing the best-off "
          "agents too, and suggested that weights concentrated on the worst-off agent would move GGI towards "
          f"the paper's row. Our own maximin row refutes that: maximin is the extreme of those weights and "
          f"scores {cell(mm['pf'])} / {cell(mm['ef'])} / {cell(mm['uf'])}, no closer to the paper's PF "
          f"{PAPER['ggi']['pf'][0]:.2f} than our GGI. That explanation is withdrawn. The readings we can "
          "compute, each on the full grid:", "",
          "| reading of the paper's GGI policy | PF | EF | UF | mean abs gap to paper |",
          "| --- | --- | --- | --- | --- |",
          f"| paper (secondary summary) | {cell(PAPER['ggi']['pf'])} | {cell(PAPER['ggi']['ef'])} | "
          f"{cell(PAPER['ggi']['uf'])} | |"]
    for name, row in ggi_cands.items():
        L.append(f"| {name} | " + " | ".join(cell(row[k]) for k in NOTIONS) + f" | {ggi_gap(row):.3f} |")
    gr = ours_gini["ggi"]
    close = [k for k in NOTIONS if abs(gr[k][0] - PAPER["ggi"][k][0]) <= 0.03]
    far = [k for k in NOTIONS if k not in close]
    gini_better = ggi_gap(gr) < ggi_gap(ours["ggi"])

    def cols(ks: list[str]) -> str:
        return ", ".join(f"{k.upper()} {gr[k][0]:.2f} (paper {PAPER['ggi'][k][0]:.2f})" for k in ks)

    L += ["", f"Closest: **{best_ggi}**. On the full grid the Gini-coefficient reading "
          + (f"matches the paper's row within 0.03 on {cols(close)}" if close else "matches no column within 0.03")
          + (f", but not on {cols(far)}" if far else "")
          + f" (mean gap {ggi_gap(gr):.3f} against {ggi_gap(ours['ggi']):.3f} for our default). "
          + ("It reproduces the equality-like part of the pattern (EF at 1, UF well below the other welfare "
             "rows), so it is offered as an option: `ggi_kind = \"gini\"` in a grid file, `--ggi-kind gini` "
             "for `fairarena policy`, `Options(ggi_kind=\"gini\")` in the library. "
             if gini_better else
             "It does not bring the row closer, so it is not recommended, although it stays available as "
             "`ggi_kind = \"gini\"`. ")
          + "The default stays the generalized Gini welfare of Weymark (1981) with weights 2^-(m-1), the "
          "definition the name refers to; which reading the paper computed cannot be decided from our copy.", "",
          "Alternatives we could not test: the paper's GGI weights (any non-increasing weights lie between "
          "the utilitarian and the maximin rows above, neither of which matches); which point of a non-unique "
          "GGI optimum its solver returned (ours: the centre of the optimal face); and an error in the "
          "unverified secondary summary this row comes from.", ""]
    L += ["**Tie-breaks.** Default vs 'central' tie-break (changes the PF and EF policies only):", ""]
    L += ["| policy | tie-break | PF | EF | UF |", "| --- | --- | --- | --- | --- |"]
    for p in ("pf", "ef"):
        for name, tt in (("utilitarian", ours), ("central", ours_cen)):
            L.append(f"| {POLICY_TITLES[p]} | {name} | " + " | ".join(cell(tt[p][k]) for k in NOTIONS) + " |")
    n3_df, n3_summ = res["n3to20"]
    ours_n3 = table(n3_df)
    L += ["", f"**Grid.** The paper reports 7,776 settings; our `paper` preset has {n:,} = 18 agent counts x 54 "
          "(K, favourite) pairs x 8 culture configurations (until this revision it had 19 agent counts, N = 2..20, "
          "8,208 settings). The product fixes how many agent counts there are, "
          "not which: we use N = 2..19 (what `range(2, 20)` gives). The alternative N = 3..20 "
          f"({n3_summ['n_settings']:,} settings) moves the PF column by at most "
          f"{max(abs(ours[p]['pf'][0] - ours_n3[p]['pf'][0]) for p in POLICIES):.3f}:", "",
          "| N | " + " | ".join(f"{POLICY_TITLES[p]} policy: PF" for p in POLICIES) + " |",
          "| --- " * (len(POLICIES) + 1) + "|",
          "| 2..19 (preset) | " + " | ".join(f"{ours[p]['pf'][0]:.2f}" for p in POLICIES) + " |",
          "| 3..20 | " + " | ".join(f"{ours_n3[p]['pf'][0]:.2f}" for p in POLICIES) + " |", ""]
    L += ["**Favourite-count mix.** The favourite counts drive the PF column: an agent indifferent among many "
          "arms is satisfied by more policies. Our grid crosses `fixed` f = 1..K-1 with every K and adds one "
          "`random` setting per K, so 45 of every 54 settings are `fixed`; the paper's mix is unknown. Mean PF "
          "score of each policy on sub-grids and re-weightings of the same default sweep (mean absolute gap to "
          "the paper's PF column over the EF, UF, NSW and GGI rows):", ""]
    L += fav_mix_table(df) + [""]
    L += ["Mean PF score of each policy by culture and by favourite mode (default options):", ""]
    L += by_group(df, "culture") + [""] + by_group(df, "fav_mode") + [""]
    L += ["## Figure 1", "", "`fairarena sweep --preset paper --out DIR` writes `figure1.png`/`.svg` "
          "(mean score of each policy on PF / EF / UF, PF bars outlined, error bars = std) beside "
          "`table1.md`/`.tex`, `settings.parquet` and `summary.json`.", ""]
    L += ["## Figure 2: PrefLib Mechanical Turk Dots", ""]
    from fairarena.sweep.preflib_example import PACKAGED_DOTS, preflib_example

    dots = preflib_example(PACKAGED_DOTS, voters=50, seed=42)
    L += ["`fairarena preflib --file src/fairarena/data/preflib/00024-00000003.soc --voters 50 --seed 42 --out DIR`"
          " (50 of 800 voters, rewards by rank 0.9 / 0.63 / 0.37 / 0.1):", "",
          "| policy | p | PF | EF | UF |", "| --- | --- | --- | --- | --- |"]
    for name, r in dots["policies"].items():
        L.append(f"| {POLICY_TITLES.get(name, name)} | " + ", ".join(f"{x:.3f}" for x in r["policy"])
                 + f" | {r['pf']:.3f} | {r['ef']:.3f} | {r['uf']:.3f} |")
    L += ["", "Data: PrefLib (Mattei & Walsh, ADT 2013), dataset 00024 (Mao, Procaccia & Chen, AAAI 2013); "
          "see `src/fairarena/data/preflib/NOTICE.md`.", ""]
    atomic_write_text(page, "\n".join(L))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=ROOT / "out" / "reproduction")
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--reuse", action="store_true", help="read sweeps already in --out")
    ap.add_argument("--page", type=Path, default=ROOT / "docs" / "reproduction.md")
    ap.add_argument("--preset", default="paper", help="grid preset (a smaller one only to try the script)")
    args = ap.parse_args()
    res = run_variants(args.out.resolve(), args.workers, args.reuse, args.preset)
    write_page(res, args.out.resolve(), args.page)
    print(f"wrote {args.page}")


if __name__ == "__main__":
    main()
