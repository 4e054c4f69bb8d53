"""Grid configs: presets, filtering, derived seeds, TOML files and their validation."""

from __future__ import annotations

import pytest

from fairarena.errors import InputError
from fairarena.sweep.config import expand, load_config, preset, subsample


def test_paper_preset_is_a_full_factorial_of_exactly_the_papers_7776_settings():
    """The paper reports 7,776 settings: 18 agent counts x 54 (K, favourite) pairs x 8 cultures."""
    cfg = preset("paper")
    settings = expand(cfg)
    assert len(settings) == 7776 == 18 * 54 * 8
    assert cfg.seed == 42 and cfg.N == list(range(2, 20)) and cfg.K == list(range(2, 11))
    # every combination appears once; 'fixed' f only below K; phi only with mallows
    keys = {s.key for s in settings}
    assert len(keys) == len(settings)
    assert all(s.f < s.K for s in settings if s.fav_mode == "fixed")
    assert {s.phi for s in settings if s.culture == "mallows"} == {0.1, 0.3, 0.5, 0.7, 0.9}
    n_fav_per_k = {k: sum(1 for s in settings if s.N == 2 and s.K == k and s.culture == "ic") for k in cfg.K}
    assert n_fav_per_k == {k: k for k in cfg.K}  # (K - 1) fixed f values + 1 random


def test_setting_seeds_depend_on_the_setting_not_the_grid():
    paper = {s.key: s.seed for s in expand(preset("paper"))}
    tiny = expand(preset("tiny"))
    assert all(paper[s.key] == s.seed for s in tiny)
    other = {s.key: s.seed for s in expand(preset("tiny", seed=43))}
    assert all(other[s.key] != s.seed for s in tiny)
    assert len({s.seed for s in expand(preset("paper"))}) == 7776


def test_subsample_is_spread_and_deterministic():
    settings = expand(preset("paper"))
    sub = subsample(settings, 300)
    assert len(sub) == 300 and sub == subsample(settings, 300)
    assert {s.N for s in sub} == set(range(2, 20))
    assert sub[0] is settings[0] and sub[-1] is settings[-1]


def test_toml_config_with_a_base_preset(tmp_path):
    p = tmp_path / "grid.toml"
    p.write_text('base = "paper"\nN = [3, 4]\nK = [3]\ncultures = ["ic", "single_peaked"]\nf = [1, 2, 5]\n')
    cfg = load_config(p)
    assert cfg.cultures == ["ic", "sp_conitzer"] and cfg.phi == [0.1, 0.3, 0.5, 0.7, 0.9]
    assert len(expand(cfg)) == 2 * 2 * 3  # N x cultures x (f in {1, 2} + random)


@pytest.mark.parametrize("body, field", [
    ('N = [2]\nK = [2]\ncultures = ["ic"]\nfavourites = ["fixed"]\nf = [2, 3]\n', "grid"),
    ('N = [2]\nK = []\ncultures = ["ic"]\n', "config.K"),
    ('N = [0, 3]\nK = [2]\ncultures = ["ic"]\n', "config.N"),
    ('N = [2]\nK = [-2]\ncultures = ["ic"]\n', "config.K"),
    ('N = [2]\nK = [2]\ncultures = ["condorcet"]\n', "config.cultures"),
    ('N = [2]\nK = [2]\ncultures = ["mallows"]\nphi = [0.5, 1.2]\n', "config.phi"),
    ('N = [2]\nK = [2]\ncultures = ["ic"]\ncolour = "red"\n', "config.colour"),
    ('N = [2]\nK = [2]\n', "config.cultures"),
    ('N = [2\n', "config"),
    ('base = "huge"\n', "config.base"),
])
def test_bad_configs_name_the_field(tmp_path, body, field):
    p = tmp_path / "bad.toml"
    p.write_text(body)
    with pytest.raises(InputError) as exc:
        expand(load_config(p))
    assert exc.value.field == field
