"""One participant's answer after any repairs (shared by the protocol and the closing rules)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fairarena.arena.parsing import ParsedProposal


@dataclass
class Step:
    """The outcome of one ask (after any repairs)."""

    proposal: ParsedProposal
    metrics: dict[str, Any] | None
    repairs: int

    @property
    def allocation(self) -> np.ndarray | None:
        return self.proposal.allocation

    def summary(self) -> dict[str, Any]:
        m = self.metrics or {}
        return {"valid": self.proposal.valid, "feasible": bool(m.get("feasible", False)) and self.proposal.valid,
                "repairs": self.repairs, "violations": list(self.proposal.violations),
                "metrics": {k: m[k] for k in ("esg", "rmg", "var", "dw_esg", "vwci", "gini")} if m else None}
