"""Durable results: files written atomically, the store of finished points, and the tables' checksums.

A sweep of the paper's figures (arXiv v3 §8) takes hours, so every finished
point is kept in a :class:`ResultsStore` (one JSON file per point, keyed by
its full configuration, the library version and the file schema, carrying
its key and a sha256 checksum that are verified on reading): a rerun skips
finished points and an interrupted sweep resumes. The written tables carry
their sha256 in ``FIG.sha256`` (:func:`write_checksums`), checked on every
read (:func:`verify_table`), so an edited number is refused, never shown.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import time
import warnings
from pathlib import Path

from ..version import __version__
from .learner import label_of


def _describe(config: dict) -> str:
    """A stored point named from its configuration alone (its learner, width and N), e.g.
    ``3resnet(last) m=8 n_train=500``: what a warning says of a file found under another point's key."""
    try:
        who = label_of(config)
    except (KeyError, TypeError, ValueError):  # a configuration this version cannot read: its model as written
        who = str(config.get("model", "?"))
    return " ".join([who] + [f"{k}={config[k]}" for k in ("m", "n_train") if config.get(k) is not None])


# ----------------------------------------------------------------- where results go
DEFAULT_OUT = "my-results"
"""The folder of the user's own runs: ``python -m resnetlearn reproduce`` writes to ``./my-results/SCALE``
unless told otherwise (``--out``); git ignores it in a clone."""

PACKAGE_ROOT = Path(__file__).resolve().parents[2]
"""The folder holding the package; in a clone, the repository with its shipped ``results/``."""


def _is_clone(root: Path) -> bool:
    try:
        return 'name = "resnetlearn"' in (root / "pyproject.toml").read_text()
    except OSError:
        return False


def shipped_results(path) -> Path | None:
    """The shipped ``results/`` folder (git-tracked in a clone) that ``path`` lies in, or None.

    It is looked for beside the package and in the current directory when that is a clone of this project.

    Parameters
    ----------
    path : path-like
        A file or folder.

    Returns
    -------
    Path or None
    """
    target = Path(path).resolve()
    for root in dict.fromkeys((PACKAGE_ROOT, Path.cwd().resolve())):
        shipped = root / "results"
        if _is_clone(root) and shipped.is_dir() and target.is_relative_to(shipped):
            return shipped
    return None


def rerun_out(directory) -> str:
    """``--out DIR`` for a rerun hint, with ``--into-shipped`` when DIR is a shipped results folder (the hint every
    message about a missing or damaged table ends with, here and in :mod:`resnetlearn.reproduce.table_reading`)."""
    return f"--out {directory}" + (" --into-shipped" if shipped_results(directory) is not None else "")


# ----------------------------------------------------------------- durable files
def _umask() -> int:
    """The process's umask, read without changing it where Linux shows it (/proc), else set and restored."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _fsync_directory(directory: Path) -> None:
    """Make a rename inside ``directory`` durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(path, data: bytes | str) -> Path:
    """Write ``data`` to ``path`` so that a crash or Ctrl-C leaves the old file or the new one, never half of one.

    The bytes go to a temporary file in the same folder, are flushed and fsync'ed, renamed over ``path`` with
    ``os.replace``, and the folder is fsync'ed so that the rename itself survives a power cut. The file gets the
    permissions of any new file (0o666 less the umask). Missing parent folders are created.

    Parameters
    ----------
    path : path-like
        The file to write.
    data : bytes or str
        The content; a string is encoded as UTF-8.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    OSError
        A full disk, a read-only folder, ...: raised again with ``path`` as its file name, the temporary file removed.
    """
    path = Path(path)
    if isinstance(data, str):
        data = data.encode()
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), 0o666 & ~_umask())
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        if isinstance(e, OSError) and e.filename != str(path):
            raise OSError(e.errno, e.strerror or str(e), str(path)) from e
        raise
    _fsync_directory(path.parent)
    return path


# ----------------------------------------------------------------- store
class StoreWarning(UserWarning):
    """A stored point could not be trusted: it was moved aside and will be recomputed."""


def _canonical(obj) -> str:
    """The JSON text that checksums are taken over: sorted keys, no spaces, non-JSON values as strings."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)


def _as_json(obj):
    """``obj`` as it reads back from JSON (tuples become lists, devices strings, ...)."""
    return json.loads(_canonical(obj))


def _checksum(body: dict) -> str:
    return hashlib.sha256(_canonical(body).encode()).hexdigest()


class ResultsStore:
    """One JSON file per finished point under ``root/<figure>/<key>.json``.

    The key hashes the point's full configuration, the library version and the file schema, so changed settings or
    code never reuse stale numbers. Each file carries that key and configuration again, ``"complete": true`` and a
    sha256 checksum of its content. :meth:`get` trusts a file only if all of these agree; a file that does not parse,
    belongs to another point, is not marked complete or fails its checksum is named in a :class:`StoreWarning`,
    renamed to ``<key>.json.corrupt-<time>`` (kept for inspection, never deleted) and reported as missing, so the
    point is computed again. Files are written with :func:`atomic_write`. No pickle.

    Parameters
    ----------
    root : path-like
        The store's folder.
    """

    SCHEMA = 3
    """Bumped when the file layout changes (2: every run of the grid, ``runs``;
    3: embedded key, ``complete`` flag and sha256 checksum)."""

    def __init__(self, root):
        self.root = Path(root)

    @staticmethod
    def key(config: dict) -> str:
        """The store key of a point: 20 hex digits of a sha256.

        The hash is taken over the configuration, the library version and the file schema.

        Parameters
        ----------
        config : dict
            A point's flat configuration (:meth:`Point.config <resnetlearn.reproduce.point.Point.config>`).

        Returns
        -------
        str
        """
        blob = json.dumps({"config": config, "version": __version__, "schema": ResultsStore.SCHEMA},
                          sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:20]

    def path(self, config: dict) -> Path:
        """Where the point's file lives: ``root/<figure>/<key>.json``.

        Parameters
        ----------
        config : dict
            A point's flat configuration (:meth:`Point.config <resnetlearn.reproduce.point.Point.config>`).

        Returns
        -------
        Path
        """
        return self.root / config["figure"] / f"{self.key(config)}.json"

    def put(self, config: dict, result: dict) -> Path:
        """Store the result of a finished point (only call it for a point that ran to its end).

        Parameters
        ----------
        config : dict
            A point's flat configuration (:meth:`Point.config <resnetlearn.reproduce.point.Point.config>`).
        result : dict
            What :func:`~resnetlearn.reproduce.points.run_point` returned.

        Returns
        -------
        Path
            The file written.
        """
        body = {"schema": self.SCHEMA, "key": self.key(config), "version": __version__, "complete": True,
                "config": _as_json(config), "result": _as_json(result)}
        payload = dict(body, sha256=_checksum(body))
        return atomic_write(self.path(config), json.dumps(payload, indent=1, default=str) + "\n")

    def get(self, config: dict) -> dict | None:
        """The stored payload of a point, or None when there is none or its file cannot be trusted.

        A file that cannot be trusted is moved aside with a :class:`StoreWarning`.

        Parameters
        ----------
        config : dict
            A point's flat configuration (:meth:`Point.config <resnetlearn.reproduce.point.Point.config>`).

        Returns
        -------
        dict or None
            The payload; ``payload["result"]`` is the result.
        """
        p = self.path(config)
        try:
            data = p.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as e:
            return self._reject(p, f"cannot be read ({e})")
        reason, payload = self._problem(data, config)
        return self._reject(p, reason) if reason else payload

    def verify(self, path) -> str | None:
        """Why the file at ``path`` cannot be trusted as the point its own configuration names.

        Reads only; nothing is moved.

        Parameters
        ----------
        path : path-like
            A stored point's file.

        Returns
        -------
        str or None
            The reason, or None when the file can be trusted.
        """
        try:
            data = Path(path).read_bytes()
            config = json.loads(data)["config"]
        except (OSError, ValueError, TypeError, KeyError) as e:
            return f"is not a readable stored point ({type(e).__name__}: {e})"
        if not isinstance(config, dict) or "figure" not in config:
            return "holds no point configuration"
        if Path(path).name != f"{self.key(config)}.json":
            return "is stored under another point's key"
        return self._problem(data, config)[0]

    def _problem(self, data: bytes, config: dict) -> tuple[str | None, dict | None]:
        """Why ``data`` is not the stored result of ``config`` (None and the payload when it is)."""
        try:
            payload = json.loads(data)
        except ValueError as e:
            return f"is not valid JSON, truncated or corrupted ({e})", None
        fields = ("schema", "key", "version", "config", "result", "sha256")
        if not isinstance(payload, dict) or any(f not in payload for f in fields):
            missing = [f for f in fields if not isinstance(payload, dict) or f not in payload]
            return f"is not a stored point of schema {self.SCHEMA} (missing {', '.join(missing)})", None
        if payload["schema"] != self.SCHEMA:
            return f"has schema {payload['schema']!r}, expected {self.SCHEMA}", None
        if payload.get("complete") is not True:
            return "is not marked complete", None
        body = {k: v for k, v in payload.items() if k != "sha256"}
        if _checksum(body) != payload["sha256"]:
            return "fails its sha256 checksum (edited or corrupted)", None
        key = self.key(config)
        if payload["key"] != key or payload["config"] != _as_json(config) or payload["version"] != __version__:
            other = payload["config"] if isinstance(payload["config"], dict) else {}
            return (f"belongs to another point ({_describe(other)}, key {payload['key']}, "
                    f"version {payload['version']}), not to key {key}"), None
        if not isinstance(payload["result"], dict):
            return "has no result", None
        return None, payload

    def _reject(self, path: Path, reason: str) -> None:
        move_aside(path, reason, then="the point will be recomputed")
        return None


def move_aside(path: Path, reason: str, *, then: str, into: Path | None = None, name: str | None = None) -> None:
    """Rename a file of the store that cannot be trusted to ``<name>.corrupt-<time>`` in the folder ``into`` (by
    default its own folder and name), kept for inspection and never deleted, and say so in a :class:`StoreWarning`
    naming the file, ``reason`` and what happens ``then``."""
    folder = path.parent if into is None else Path(into)
    stem = f"{name or path.name}.corrupt-{time.strftime('%Y%m%dT%H%M%S')}"
    aside, n = folder / stem, 1
    while aside.exists():
        n += 1
        aside = folder / f"{stem}-{n}"
    try:
        os.replace(path, aside)
        where = f"moved aside to {aside.name}"
    except OSError as e:
        where = f"could not be moved aside ({e})"
    warnings.warn(f"results store: {path} {reason}; {where}; {then}", StoreWarning, stacklevel=4)


# ----------------------------------------------------------------- table checksums
def checksum_path(name: str, directory) -> Path:
    """Where the checksums of a figure's tables live: ``FIG.sha256`` beside them."""
    return Path(directory) / f"{name}.sha256"


def write_checksums(name: str, directory, tables: dict[str, bytes]) -> Path:
    """Record the sha256 of each table's bytes (file name -> content) in ``FIG.sha256``, in the format
    of ``sha256sum`` (so ``sha256sum -c FIG.sha256`` inside the directory checks them too)."""
    lines = "".join(f"{hashlib.sha256(data).hexdigest()}  {fname}\n" for fname, data in sorted(tables.items()))
    return atomic_write(checksum_path(name, directory), lines)


def _recorded_checksums(name: str, directory: Path, scale: str | None) -> dict[str, str]:
    """File name -> sha256 from ``FIG.sha256``; a ValueError naming the file when it is missing or unreadable."""
    path = checksum_path(name, directory)
    redo = (f"rewrite the tables from their store: python -m resnetlearn reproduce {name}"
            + (f" --scale {scale}" if scale else "") + f" {rerun_out(directory)} (stored points are reused)")
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise ValueError(f"{path} is missing: the tables of {name!r} in {directory} cannot be verified "
                         f"({redo})") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"{path} cannot be read ({e}); {redo}") from None
    recorded = {}
    for i, line in enumerate(text.splitlines(), 1):
        digest, _, fname = line.partition("  ")
        if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest) or not fname:
            raise ValueError(f"{path}, line {i}: not '<sha256>  <file name>' ({line!r}); {redo}")
        recorded[fname] = digest
    return recorded


def verify_table(path, scale: str | None = None) -> None:
    """Refuse a written table whose bytes are not those recorded in its ``FIG.sha256`` when it was written.

    Parameters
    ----------
    path : path-like
        ``FIG.csv`` or ``FIG_runs.csv``.
    scale : str or None, default None
        The scale, named in the rewrite command the error suggests.

    Raises
    ------
    ValueError
        Naming the table, the checksum file and how to rewrite it, if the checksum file is missing, unreadable,
        malformed or lacks the table, or the bytes differ.
    """
    path = Path(path)
    name = path.name.removesuffix(".csv").removesuffix("_runs")
    recorded = _recorded_checksums(name, path.parent, scale)
    sums = checksum_path(name, path.parent)
    if path.name not in recorded:
        raise ValueError(f"{sums} records no checksum for {path.name}: {path} cannot be verified")
    got = hashlib.sha256(path.read_bytes()).hexdigest()
    if got != recorded[path.name]:
        raise ValueError(f"{path} does not match the sha256 recorded in {sums} when it was written "
                         f"({got[:12]}… instead of {recorded[path.name][:12]}…): the table was edited or "
                         f"corrupted, and its numbers are not the computed ones. Rewrite it from its store: "
                         f"python -m resnetlearn reproduce {name}" + (f" --scale {scale}" if scale else "")
                         + f" {rerun_out(path.parent)} (stored points are reused)")
