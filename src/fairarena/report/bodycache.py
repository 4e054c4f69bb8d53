"""A cache of a report's compressed drill-down bodies (a debate's instance and transcript, rendered to HTML,
gzip-compressed and base64-encoded), kept in the study folder beside ``traces.json``.

Rendering a debate's body costs about 2 ms (reading its transcript, building its tables, rendering and
compressing them): 4-5 s of CPU for a 2,000-debate study. The body depends only on the transcript's bytes
and on the code that renders it, so :class:`BodyCache` keeps each body under its debate's key with a
fingerprint of its transcript (the record's ``transcript_sha256``, and the file's size and modification
time, so a transcript changed after its record was written is rendered again) and a digest of the
installed ``fairarena`` sources (any change of the code renders every body again). A domain from another
package (an entry point) is not in that digest: after changing how it renders an instance, delete the file.

The file is not trusted as it is read: it is read as JSON, every entry must have the expected shape, a
base64 body (only ``A-Z a-z 0-9 + / =``: it cannot break out of the page's ``data-z`` attribute) and a
checksum over its key, fingerprint, size and body; a file or entry that fails any check is ignored (the
body is rendered again) and the file is rewritten. The checksum catches damage, not forgery: like
``traces.json`` (which feeds the statistics), a body written on purpose by someone who can write the study
folder is shown (inflated into the page when its debate is opened); delete the file to render every body
again from the transcripts. It is written atomically (a reader never sees half a file; two
reports written at once each write a whole, valid file), with only the entries the last report used.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from fairarena.fsutil import loads_json

FILE = "report_bodies.json"
FORMAT = 1
_B64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")


@dataclass(frozen=True)
class Packed:
    """An item's body as the page embeds it: ``raw`` bytes of HTML, compressed and encoded as ``z``."""

    raw: int
    z: str


@lru_cache(maxsize=1)
def code_digest() -> str:
    """SHA-256 of the ``fairarena`` package's sources (every ``.py`` file: path and bytes): a body cached
    by other code is not used."""
    base = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for p in sorted(base.rglob("*.py")):
        h.update(p.relative_to(base).as_posix().encode() + b"\0")
        h.update(p.read_bytes())
    return h.hexdigest()


def _check(key: str, fp: str, raw: int, z: str) -> str:
    return hashlib.sha256(f"{key}\0{fp}\0{raw}\0".encode() + z.encode("ascii")).hexdigest()[:32]


def transcript_fingerprint(path: Path, sha256: Any) -> str | None:
    """The record's transcript hash with the file's size and modification time (None: no such file or
    no hash, so not cached)."""
    if not isinstance(sha256, str) or not sha256:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return f"{sha256}:{st.st_size}:{st.st_mtime_ns}"


class BodyCache:
    """The cached bodies of one study folder (:data:`FILE`); :meth:`get`, :meth:`put`, then :meth:`save`."""

    def __init__(self, path: str | os.PathLike[str], *, code: str | None = None) -> None:
        self.path = Path(path)
        self.code = code_digest() if code is None else code
        self.entries: dict[str, tuple[str, int, str]] = {}
        self.used: dict[str, tuple[str, int, str]] = {}
        self.rejected = 0            # entries (or a whole file: 1) found damaged or stale and ignored
        self._load()

    def _load(self) -> None:
        try:
            data = loads_json(self.path.read_bytes())
        except FileNotFoundError:
            return
        except (OSError, ValueError):
            self.rejected = 1
            return
        if not (isinstance(data, dict) and data.get("format") == FORMAT and data.get("code") == self.code
                and isinstance(data.get("bodies"), dict)):
            self.rejected = 1
            return
        for key, e in data["bodies"].items():
            if (isinstance(e, list) and len(e) == 4 and isinstance(e[0], str) and type(e[1]) is int and e[1] >= 0
                    and isinstance(e[2], str) and isinstance(e[3], str) and _B64.fullmatch(e[2])
                    and len(e[2]) % 4 == 0 and e[3] == _check(key, e[0], e[1], e[2])):
                self.entries[key] = (e[0], e[1], e[2])
            else:
                self.rejected += 1

    def get(self, key: str, fp: str | None) -> Packed | None:
        e = self.entries.get(key)
        if fp is None or e is None or e[0] != fp:
            return None
        self.used[key] = e
        return Packed(e[1], e[2])

    def put(self, key: str, fp: str | None, packed: Packed) -> None:
        if fp is not None:
            self.used[key] = (fp, packed.raw, packed.z)

    def save(self) -> bool:
        """Write the entries used by this report (atomically) unless the file already holds exactly them.
        False when the folder cannot be written (a read-only study: no cache)."""
        from fairarena.fsutil import atomic_write_text

        if self.used == self.entries and not self.rejected:
            return True
        body = {k: [fp, raw, z, _check(k, fp, raw, z)] for k, (fp, raw, z) in sorted(self.used.items())}
        try:
            atomic_write_text(self.path, json.dumps({"format": FORMAT, "code": self.code, "bodies": body},
                                                    separators=(",", ":")))
        except OSError:
            return False
        self.entries, self.rejected = dict(self.used), 0
        return True


__all__ = ["FILE", "BodyCache", "Packed", "code_digest", "transcript_fingerprint"]
