"""Grid configs for the procedural-fairness sweep: validated once, expanded into settings.

A grid is a full factorial over the number of agents ``N``, arms ``K``, preference cultures,
Mallows dispersions ``phi`` (crossed with the ``mallows`` culture only), favourite-arm modes and
the favourite count ``f`` (crossed with the ``fixed`` mode only; combinations with ``f >= K`` are
filtered out). A config file is TOML with the fields of :class:`GridConfig` at top level;
``base = "paper"`` starts from a preset and overrides only the fields given.

Each setting has its own seed derived from the grid seed and the setting's parameters (not its
position), so a setting's instance is the same whatever else the grid contains.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from fairarena.errors import InputError
from fairarena.sweep.presets import PAPER, PRESETS  # noqa: F401  (PAPER re-exported)

MAX_AGENTS = 500
"""Largest number of agents ``N`` of a setting. Measured on 2 cores (one setting, K = 10, every Table 1
policy): N = 500 takes 3.4 s; at N = 600 the GGI (OWA) program did not finish in 2 minutes. The
paper's grid stops at N = 19."""
MAX_ARMS = 1_000
"""Largest number of arms ``K`` (and favourite count ``f``): N = 10, K = 1,000 takes 32 s for one setting.
The paper's grid stops at K = 10."""
MAX_SETTINGS = 1_000_000
"""Largest full factorial (before ``--limit``), counted before any setting is made: 128 times the
paper's 7,776 settings."""

TABLE_POLICIES = ("pf", "ef", "uf", "nsw", "ggi")
"""The policies of the procedural-fairness paper's Table 1 (the default ``policies``)."""


def all_policies() -> tuple[str, ...]:
    """Every policy a grid may ask for: the registered notions (in registration order)."""
    from fairarena.bandit.notions import NOTIONS

    return NOTIONS.names()


def _one_of(field: str, value: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ValueError(f"unknown {field} {value!r}: expected one of {', '.join(choices)}")
    return value


class GridConfig(BaseModel):
    """A sweep grid (every list is one factor of the full factorial)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = "custom"
    seed: int = Field(42, ge=0, description="master seed; each setting derives its own")
    N: list[int] = Field(..., min_length=1, description="numbers of agents")
    K: list[int] = Field(..., min_length=1, description="numbers of arms")
    cultures: list[str] = Field(..., min_length=1, description="preference cultures")
    phi: list[float] = Field([0.5], min_length=1, description="Mallows dispersions (mallows only)")
    favourites: list[str] = Field(["fixed", "random"], min_length=1,
                                  description="favourite-arm modes (fairarena.preferences.rewards.FAVOURITE_MODES)")
    f: list[int] = Field([1], min_length=1, description="favourite counts for the 'fixed' mode")
    reward_low: float = Field(0.01, gt=0.0, lt=1.0)
    reward_high: float = Field(0.99, gt=0.0, lt=1.0)
    policies: list[str] = Field(list(TABLE_POLICIES), min_length=1)
    ef_kind: str = Field("squared", description="squared or absolute pairwise differences (EF)")
    tie_break: str = Field("utilitarian", description="utilitarian or central (PF, EF)")
    ggi_kind: str = Field("owa", description="owa (generalized Gini welfare) or gini (min Gini coefficient)")
    tol: float = Field(1e-9, ge=0.0, lt=1.0)
    max_batch: int = Field(512, ge=1, description="largest batch of one shape solved in one task")

    @field_validator("N", "K", "f")
    @classmethod
    def _positive(cls, v: list[int], info: Any) -> list[int]:
        high = MAX_AGENTS if info.field_name == "N" else MAX_ARMS
        for j, x in enumerate(v):
            if x <= 0:
                raise ValueError(f"entry {j} is {x}: expected positive integers")
            if x > high:
                raise ValueError(f"entry {j} is {x}: at most {high:,} "
                                 f"({'agents' if info.field_name == 'N' else 'arms'}; docs/reliability.md)")
        return sorted(set(v))

    @field_validator("phi")
    @classmethod
    def _phi(cls, v: list[float]) -> list[float]:
        for j, x in enumerate(v):
            if not (np.isfinite(x) and 0.0 <= x <= 1.0):
                raise ValueError(f"entry {j} is {x}: Mallows phi must lie in [0, 1]")
        return sorted(set(v))

    @field_validator("cultures")
    @classmethod
    def _cultures(cls, v: list[str]) -> list[str]:
        from fairarena.preferences.cultures import get_culture

        out: list[str] = []
        for x in v:
            try:
                name = get_culture(x).name
            except InputError as exc:
                raise ValueError(f"unknown culture {x!r}: {exc.expected}") from None
            if name not in out:
                out.append(name)
        return out

    @field_validator("favourites")
    @classmethod
    def _favourites(cls, v: list[str]) -> list[str]:
        from fairarena.preferences.rewards import FAVOURITE_MODES

        for x in v:
            _one_of("favourite mode", x, FAVOURITE_MODES)
        return list(dict.fromkeys(v))

    @field_validator("policies")
    @classmethod
    def _policies(cls, v: list[str]) -> list[str]:
        names = all_policies()
        for x in v:
            if x not in names:
                raise ValueError(f"unknown policy {x!r}: expected some of {', '.join(names)}")
        return [p for p in names if p in v]

    @field_validator("ef_kind", "tie_break", "ggi_kind")
    @classmethod
    def _option(cls, v: str, info: Any) -> str:
        from fairarena.bandit.vocabulary import EF_KINDS, GGI_KINDS, TIE_BREAKS

        choices = {"ef_kind": EF_KINDS, "tie_break": TIE_BREAKS, "ggi_kind": GGI_KINDS}[info.field_name]
        return _one_of(info.field_name, v, choices)

    @model_validator(mode="after")
    def _bounds(self) -> "GridConfig":
        if not self.reward_low < self.reward_high:
            raise ValueError(f"reward_low = {self.reward_low} must be below reward_high = {self.reward_high}")
        return self

    def options(self) -> Any:
        from fairarena.bandit.notions import Options

        return Options(tol=self.tol, ef_kind=self.ef_kind, tie_break=self.tie_break, ggi_kind=self.ggi_kind)


@dataclass(frozen=True)
class Setting:
    """One point of the grid."""

    setting_id: int
    N: int
    K: int
    culture: str
    phi: float          # NaN unless culture == 'mallows'
    fav_mode: str
    f: int              # 0 unless fav_mode == 'fixed'
    seed: int           # derived instance seed

    @property
    def key(self) -> str:
        phi = "" if np.isnan(self.phi) else repr(float(self.phi))
        return f"N={self.N}|K={self.K}|culture={self.culture}|phi={phi}|fav={self.fav_mode}|f={self.f}"


def derive_seed(master: int, key: str) -> int:
    """A 63-bit seed from the master seed and a setting's key (stable across Python runs)."""
    words = np.frombuffer(hashlib.blake2b(key.encode(), digest_size=16).digest(), dtype=np.uint32)
    ss = np.random.SeedSequence([int(master), *map(int, words)])
    return int(ss.generate_state(2, dtype=np.uint32).astype(np.uint64) @ np.array([1 << 31, 1], np.uint64))


def expand(cfg: GridConfig, limit: int | None = None) -> list[Setting]:
    """All settings of the grid, in (N, K, culture, phi, favourite mode, f) order; with ``limit``,
    the spread-out subsample :func:`subsample` keeps (seeds are derived for kept settings only)."""
    size = grid_size(cfg)
    if size > MAX_SETTINGS:
        raise InputError("grid", f"{size:,} settings", f"at most {MAX_SETTINGS:,} settings in the full factorial "
                         "(fewer N, K, cultures, phi or f values; docs/reliability.md)")
    out: list[Setting] = []
    for n in cfg.N:
        for k in cfg.K:
            for culture in cfg.cultures:
                phis = cfg.phi if culture == "mallows" else [float("nan")]
                for phi in phis:
                    for mode in cfg.favourites:
                        fs = [f for f in cfg.f if f < k] if mode == "fixed" else [0]
                        for f in fs:
                            out.append(Setting(len(out), n, k, culture, float(phi), mode, f, 0))
    if not out:
        raise InputError("grid", _grid_summary(cfg),
                         "the full factorial is empty after filtering impossible combinations "
                         "(the 'fixed' favourite mode needs some f < K)")
    return [replace(s, seed=derive_seed(cfg.seed, s.key)) for s in subsample(out, limit)]


def grid_size(cfg: GridConfig) -> int:
    """The number of settings of the full factorial (what :func:`expand` makes without ``limit``), counted
    without making them."""
    per_k = sum((len(cfg.phi) if c == "mallows" else 1) for c in cfg.cultures)
    modes = sum(sum(1 for k in cfg.K for f in cfg.f if f < k) if m == "fixed" else len(cfg.K) for m in cfg.favourites)
    return len(cfg.N) * per_k * modes


def _grid_summary(cfg: GridConfig) -> dict[str, Any]:
    return {"K": cfg.K, "favourites": cfg.favourites, "f": cfg.f}


def subsample(settings: list[Setting], limit: int | None) -> list[Setting]:
    """A deterministic, spread-out subsample of ``limit`` settings (every grid region represented)."""
    if limit is None or limit >= len(settings):
        return settings
    if isinstance(limit, bool) or limit < 1:
        raise InputError("limit", limit, "expected a positive integer")
    idx = np.unique(np.linspace(0, len(settings) - 1, int(limit)).round().astype(int))
    return [settings[i] for i in idx]


# ------------------------------------------------------------------------------------------------
# Presets
# ------------------------------------------------------------------------------------------------

def _from_dict(data: dict[str, Any], where: str) -> GridConfig:
    try:
        # strict types: N = ["3"] or seed = true is refused, not converted (fairarena.inputs.validate_model)
        return GridConfig.model_validate(data, strict=True)
    except ValidationError as exc:
        from fairarena.inputs import model_error

        err = exc.errors()[0]
        loc = ".".join(str(x) for x in err["loc"]) or "config"
        msg = model_error(exc, "").expected   # the common wording ("expected a number, not text ...")
        raise InputError(f"{where}{loc}" if loc != "config" else where.rstrip(".") or "config",
                         err.get("input"), msg) from None


def preset(name: str, **overrides: Any) -> GridConfig:
    return _from_dict({**PRESETS.get(name), **overrides}, "")


def load_config(path: str | Path) -> GridConfig:
    """A grid from a TOML file (top-level fields of :class:`GridConfig`; optional ``base`` preset)."""
    from fairarena.inputs import load_toml

    data, _ = load_toml(path, "config", missing="no such config file", invalid="not valid TOML")
    data = data.get("grid", data) if isinstance(data.get("grid"), dict) else data
    base = data.pop("base", None)
    if base is not None:
        if base not in PRESETS:
            raise InputError("config.base", base, f"expected one of {PRESETS.choices()}")
        data = {**PRESETS[base], **data}
    return _from_dict(data, "config.")
