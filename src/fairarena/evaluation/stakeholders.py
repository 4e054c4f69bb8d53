"""Stakeholder-centric evaluation of a collective decision: the functions live in
:mod:`fairarena.aggregation.stakeholders` (beside the profiles and utilities they read; the council and
the ``evaluate`` command call them there, so the aggregation package never imports this one) and are
re-exported here under their established names."""

from __future__ import annotations

from fairarena.aggregation.stakeholders import TOL, envy_free_up_to_one, evaluate, recipients_view

__all__ = ["evaluate", "recipients_view", "envy_free_up_to_one", "TOL"]
