"""Participatory budgeting on real Pabulib elections: the domain ``pb``.

* :mod:`fairarena.pb.election` — read a ``.pb`` file (validated line by line, then parsed by pabutools);
* :mod:`fairarena.pb.rules` — the PB rules (greedy, Equal Shares with its completion, Phragmén, max-utilitarian);
* :mod:`fairarena.pb.groups` — stakeholder groups (age, sex, category, seeded clusters) and their utilities;
* :mod:`fairarena.pb.fair` — feasible-set rules over the groups (utilitarian, Nash, leximin, group max-min);
* :mod:`fairarena.pb.domain` — the domain plug-in (``fairarena domain check pb``);
* :mod:`fairarena.pb.compare` — every rule, the debate and the city's outcome on one election.

See docs/pb.md.
"""

from fairarena.pb.election import Election, read_election

__all__ = ["Election", "read_election"]
