"""The scripted tourism debate (through the arena, joint-draft) against the nash rule on seeded destinations.

Usage: python benchmarks/tourism_debate_vs_nash.py FIRST_SEED LAST_SEED_EXCLUSIVE POIS  (docs/tourism.md: 0 50 40)
Prints one JSON line per destination: both choices, the utility differences debate - rule per stakeholder."""
import sys, time, json
import numpy as np
from fairarena.tourism.destination import generate
from fairarena.tourism.stakeholders import parse_stakeholders
from fairarena.tourism import decisions as D
from fairarena.tourism import run as R
NAMES = ["tourists:family", "residents", "local-business", "destination"]
ss = parse_stakeholders(NAMES)
lo, hi, pois = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
for seed in range(lo, hi):
    t = time.time()
    d = generate(seed, pois)
    c = D.candidates(d, ss, "flows")
    U = D.utility_matrix(c.values)
    t1 = time.time()
    deb = R.debate(d, ss, c, "flows", "joint-draft", 3, 0)
    t2 = time.time()
    nash = D.decide(d, ss, "flows", "nash", c)["chosen"]
    un, ud = U[:, c.names.index(nash)], U[:, deb["index"]]
    print(json.dumps({"seed": seed, "nash": nash, "debate": deb["chosen"], "finals": deb["finals"],
                      "min_diff": float(ud.min() - un.min()), "mean_diff": float(ud.mean() - un.mean()),
                      "util_diff": [round(float(x), 4) for x in ud - un],
                      "cand_s": round(t1 - t, 2), "debate_s": round(t2 - t1, 3)}), flush=True)
