"""The debate study: a design of many debates (duel or council), run and resumed into a folder, analysed.

- :mod:`~fairarena.study.design`: the design (``StudyConfig``, validated once from TOML), the presets and
  the expansion into tasks with their keys and the study digest.
- :mod:`~fairarena.study.store`: the store and runner: the folder's records, the lock, resume, the
  backends (``run_study``, ``load_results``, ``study_status``).
- :mod:`~fairarena.study.analysis`: a finished study -> statistics, emergence, tables, report;
  :mod:`~fairarena.study.traces`: one debate's trace; :mod:`~fairarena.study.noise`: repeated samples,
  nulls and transcript analyses; :mod:`~fairarena.study.mechanisms`: each debate's proposals aggregated.
- :mod:`~fairarena.study.council` and :mod:`~fairarena.study.council_analysis`: council studies.
- :mod:`~fairarena.study.plan`: ``study plan`` (calls, tokens, time and cost, without a call).
- :mod:`~fairarena.study.records`: the record format, typed (docs/study.md, "Record schema").
- :mod:`~fairarena.study.frames`: ``load(path)``, a finished study as pandas DataFrames.
- :mod:`~fairarena.study.cli`: ``fairarena study``; :mod:`~fairarena.study.demo`: its sections of
  ``fairarena demo``.

The former module paths (``fairarena.study.design``, ``.study_analysis``, ...) are these modules
themselves, kept for existing code. Names are imported lazily (importing this package loads neither
numpy nor pydantic).
"""

from __future__ import annotations

from fairarena.lazy import lazy_exports

_LAZY = {
    "StudyConfig": "fairarena.study.design",
    "DebateTask": "fairarena.study.design",
    "CouncilTask": "fairarena.study.design",
    "preset": "fairarena.study.design",
    "presets": "fairarena.study.design",
    "expand": "fairarena.study.design",
    "from_dict": "fairarena.study.design",
    "load_study": "fairarena.study.design",
    "to_toml": "fairarena.study.design",
    "run_study": "fairarena.study.store",
    "load_results": "fairarena.study.store",
    "study_status": "fairarena.study.store",
    "analyse_study": "fairarena.study.analysis",
    "check_record": "fairarena.study.records",
    "load": "fairarena.study.frames",
    "StudyData": "fairarena.study.frames",
}

__all__ = list(_LAZY)


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
