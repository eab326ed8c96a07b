"""Checkpoints inside one point: a search that takes hours keeps each finished group of models, so it resumes
part-way.

A point is the store's unit (:class:`~resnetlearn.reproduce.store.ResultsStore`): it is kept only when its whole
search has run. A wide network on a CPU (Figure 4(a) at m = 10000, arXiv v3 §8.2) needs more hours for one point
than a working session has. With :class:`Checkpoints` its grid trains a few models at a time (``models``), and every
group that finishes is written to ``<store>/<figure>/<key>.partial/`` as one file: the point's store key, each
model's (role, lr, wd, seed) and its row of errors and norms, the group's seconds, and a sha256 over all of it. A
later run of the same point with the same ``models`` reads them back (:class:`ChunkLog`) and trains only the
groups still missing, so its result is the one an uninterrupted run in the same groups stores, to the last bit.
A group is reused only as the very group it was (the same models in the same order): the models of a search are
independent (each has its own initialisation and mini-batch order), but the batched kernels of some architectures
round differently for another number of models trained at once (the three-layer ResNet's errors move in the last
float32 bits), so groups of another size are trained again rather than mixed. When the point is stored, its
partial folder is removed. A file that does not verify is moved aside (beside the stored points) with a
:class:`~resnetlearn.reproduce.store.StoreWarning` and its models are trained again; a partial folder is never read
as a finished point.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from .. import validation as V
from .store import _as_json, _checksum, atomic_write, move_aside

__all__ = ["Checkpoints", "ChunkLog", "partial_folder"]

SCHEMA = 1
"""Bumped when the layout of a group file changes."""


def partial_folder(store_root, figure: str, key: str) -> Path:
    """Where the finished groups of the point with store ``key`` wait: beside its (future) stored file."""
    return Path(store_root) / figure / f"{key}.partial"


@dataclass(frozen=True)
class Checkpoints:
    """How one point keeps its finished groups: at most ``models`` models trained at once, each group written to
    ``folder`` under the point's store ``key``. Plain data, so it travels to a worker process with the point."""

    folder: str
    key: str
    models: int

    def __post_init__(self):
        V.integer("models", self.models, lo=1)

    def log(self) -> ChunkLog:
        """The reader and writer of this point's groups."""
        return ChunkLog(Path(self.folder), self.key)


def _group(role: str, combos) -> tuple:
    """A group's name in the log: its role and its models' (lr, wd, seed), in order."""
    return (role, tuple((float(lr), float(wd), int(seed)) for lr, wd, seed in combos))


class ChunkLog:
    """The finished groups of one point's search (see the module's description), as the search's ``chunk_log``
    (:class:`~resnetlearn.learners.training.RunOptions`): :meth:`rows` returns a group's kept rows when every model
    was kept as one group, :meth:`keep` writes a group that just finished. ``reused_seconds``: the training time of the
    groups read back (a resumed point's time is the sum of its runs')."""

    def __init__(self, folder: Path, key: str):
        self.folder, self.key = Path(folder), key
        self._kept: dict[tuple, dict] | None = None
        self.reused_seconds = 0.0

    def _load(self) -> dict[tuple, dict]:
        if self._kept is None:
            self._kept = {}
            for path in sorted(self.folder.glob("*.json")) if self.folder.is_dir() else []:
                group = self._verified(path)
                if group is None:
                    continue
                self._kept[_group(group["role"], group["combos"])] = group
        return self._kept

    def _verified(self, path: Path) -> dict | None:
        try:
            payload = json.loads(path.read_bytes())
            body = {k: v for k, v in payload.items() if k != "sha256"}
            if _checksum(body) != payload["sha256"]:
                reason = "fails its sha256 checksum (edited or corrupted)"
            elif payload["schema"] != SCHEMA or payload["key"] != self.key:
                reason = f"belongs to another point or layout (key {payload['key']}, schema {payload['schema']})"
            elif len(payload["combos"]) != len(payload["rows"]) or not payload["rows"]:
                reason = "has no rows, or not one row per model"
            else:
                return payload
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as e:
            reason = f"is not a readable group of models ({type(e).__name__}: {e})"
        # moved into the folder of the stored points, where a damaged point goes too: the partial folder is removed
        # once its point is stored, and a damaged file is kept for inspection
        move_aside(path, reason, then="its models will be trained again", into=self.folder.parent,
                   name=f"{self.folder.name}-{path.name}")
        return None

    def rows(self, role: str, combos: list[tuple]) -> list[dict] | None:
        """The kept rows of the group of models ``combos`` ((lr, wd, seed) each, in order) in ``role``, or None
        when that group was not kept (then it is trained); the group's seconds count in ``reused_seconds``."""
        group = self._load().get(_group(role, combos))
        if group is None:
            return None
        self.reused_seconds += group["seconds"]
        return [dict(r) for r in group["rows"]]

    def keep(self, role: str, combos: list[tuple], rows: list[dict], seconds: float) -> Path:
        """Write one finished group: its models ``combos`` ((lr, wd, seed) each) in ``role``, their ``rows`` and
        the ``seconds`` it trained, atomically (a crash leaves the file whole or absent)."""
        if len(combos) != len(rows):
            raise ValueError(f"rows must have one entry per model: {len(combos)} models, {len(rows)} rows")
        body = {"schema": SCHEMA, "key": self.key, "role": role,
                "combos": _as_json([[c[0], c[1], c[2]] for c in combos]), "rows": _as_json(rows),
                "seconds": round(float(seconds), 2)}
        first = combos[0]
        name = f"{role}-lr{first[0]:g}-wd{first[1]:g}-seed{first[2]}-{len(combos)}.json"
        path = atomic_write(self.folder / name, json.dumps(dict(body, sha256=_checksum(body)), indent=1) + "\n")
        return path

    def clear(self) -> None:
        """Remove the partial folder (its point is stored)."""
        shutil.rmtree(self.folder, ignore_errors=True)
