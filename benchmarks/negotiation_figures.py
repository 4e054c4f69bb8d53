"""What a finished scripted study's debates did: the negotiation figures of docs/arena.md ("What the paper
preset gives"). Prints figures; not a unit test.

    .venv/bin/python benchmarks/negotiation_figures.py DIR [DIR ...]

For each study folder (``fairarena study run ... --out DIR``), from its transcripts: A's final = B's final
(same allocation), the joint = A's / B's final, the joint differs from both finals, the share of debates
whose joint is strictly better than both round-1 proposals / both finals on ESG, RMG, DW-ESG and VWCI,
the baseline's final mean ESG and RMG per framework row, and the adversary's final RMG. Several folders
print side by side (e.g. the previous negotiator's run and this one's, from ``bench_study.py --keep``).
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

METRICS = ("esg", "rmg", "dw_esg", "vwci")


def _alloc(mapping: dict[str, Any] | None) -> tuple | None:
    if not mapping:
        return None
    return tuple(sorted((p, tuple(sorted((r, round(float(v), 6)) for r, v in res.items())))
                        for p, res in mapping.items()))


def debate_view(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The last attempt of A's and B's round-1 and final turns, and the closing (allocations and metrics)."""
    out: dict[str, Any] = {}
    for e in events:
        if e.get("type") == "turn" and e.get("phase") in ("round", "final") and e.get("agent") in ("A", "B"):
            if e["phase"] == "round" and e.get("round") != 1:
                continue
            stage = "r1" if e["phase"] == "round" else "final"
            prop = e.get("proposal") or {}
            out[(e["agent"], stage)] = (_alloc(prop.get("allocation")), e.get("metrics") or {})
        elif e.get("type") == "closing":
            out["joint"] = (_alloc(e.get("allocation")), e.get("metrics") or {})
    return out


def figures(root: Path) -> dict[str, Any]:
    from fairarena.study.mechanisms import allocation_directions
    from fairarena.study.store import load_results, read_transcript

    sign = {k: (1.0 if v == "max" else -1.0) for k, v in allocation_directions().items()}
    n = same = joint_a = joint_b = differs = 0
    beats_r1 = dict.fromkeys(METRICS, 0)
    beats_fin = dict.fromkeys(METRICS, 0)
    base = defaultdict(lambda: defaultdict(list))
    adv_rmg: list[float] = []
    for rec in load_results(root):
        if rec["status"] != "ok":
            continue
        v = debate_view(read_transcript(root, rec))
        (fa, ma), (fb, mb), (j, mj) = v[("A", "final")], v[("B", "final")], v["joint"]
        (_, ra), (_, rb) = v[("A", "r1")], v[("B", "r1")]
        n += 1
        same += fa == fb
        joint_a += j == fa
        joint_b += j == fb
        differs += j != fa and j != fb
        for k in METRICS:
            s = sign[k]
            beats_r1[k] += s * mj[k] > max(s * ra[k], s * rb[k]) + 1e-9
            beats_fin[k] += s * mj[k] > max(s * ma[k], s * mb[k]) + 1e-9
        t = rec["task"]
        if t["agent_b"] == "baseline":
            for k in ("esg", "rmg"):
                base[t["framework"]][k].append(mb[k])
        elif str(t["agent_b"]).startswith("adversarial"):
            adv_rmg.append(mb["rmg"])
    return {"debates": n, "finals identical": same, "joint = A's final": joint_a, "joint = B's final": joint_b,
            "joint differs from both finals": differs,
            "joint beats both round-1 (ESG/RMG/DW-ESG/VWCI)": " / ".join(f"{beats_r1[k] / n:.3f}" for k in METRICS),
            "joint beats both finals (ESG/RMG/DW-ESG/VWCI)": " / ".join(f"{beats_fin[k] / n:.3f}" for k in METRICS),
            "baseline final mean ESG by row": ", ".join(f"{fw} {np.mean(d['esg']):.3f}" for fw, d in sorted(base.items())),
            "baseline final mean RMG by row": ", ".join(f"{fw} {np.mean(d['rmg']):.3f}" for fw, d in sorted(base.items())),
            "adversary final RMG = 0": f"{sum(r == 0 for r in adv_rmg)} / {len(adv_rmg)}",
            "adversary final RMG min / mean / max": (f"{min(adv_rmg):.3f} / {np.mean(adv_rmg):.3f} / {max(adv_rmg):.3f}"
                                                     if adv_rmg else "-")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dirs", nargs="+", type=Path)
    a = ap.parse_args()
    rows = [figures(d) for d in a.dirs]
    for key in rows[0]:
        print(f"{key}: " + " | ".join(str(r[key]) for r in rows))


if __name__ == "__main__":
    main()
