"""One participant's answer after any repairs (shared by the protocol and the closing rules)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fairarena.arena.parsing import ParsedProposal


@dataclass
class Step:
    """The outcome of one ask (after any repairs). ``keys``: the domain's metric keys, in its order
    (:meth:`fairarena.arena.protocol.Debate.metric_keys`, from the domain's metric specs): what the
    per-round summary records; None: every metric the record holds that is a number."""

    proposal: ParsedProposal
    metrics: dict[str, Any] | None
    repairs: int
    keys: tuple[str, ...] | None = None

    @property
    def allocation(self) -> np.ndarray | None:
        return self.proposal.allocation

    def summary(self) -> dict[str, Any]:
        m = self.metrics or {}
        if self.keys is not None:
            keys = [k for k in self.keys if k in m]
        else:
            keys = [k for k, v in m.items() if k != "feasible" and isinstance(v, (int, float))]
        return {"valid": self.proposal.valid, "feasible": bool(m.get("feasible", False)) and self.proposal.valid,
                "repairs": self.repairs, "violations": list(self.proposal.violations),
                "metrics": {k: m[k] for k in keys} if m else None}
