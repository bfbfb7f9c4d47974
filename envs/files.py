"""Files written whole or not at all.

Every file the project writes over one that may already hold something (checkpoints, agent
files, a tournament's or an exploitability run's ``results.json``, a sweep's summary, a hand
history) goes through :func:`atomic_write_bytes`: the bytes go to a temporary file in the same
folder, are flushed to the disk, and the temporary file is moved into place with ``os.replace``.
A crash, Ctrl-C or full disk in the middle of a write leaves the previous file whole (or no file),
never half of one. :func:`make_folder` makes an output folder before a command does its work
(:func:`check_folder` only looks), so that a folder that cannot be made (a file in its path, no
permission) is one line at the start, not a traceback after the work; :func:`check_folder_name`
keeps a run folder's ``--name`` inside its ``--out``. Standard library only, so every layer can
use it.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

__all__ = ["atomic_write_bytes", "atomic_write_text", "write_json", "finite_or_none", "check_folder",
           "make_folder", "check_folder_name"]


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` through a temporary file beside it and ``os.replace``; returns
    the path. The temporary file is removed when the write fails."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def atomic_write_text(path: str | Path, text: str) -> Path:
    """:func:`atomic_write_bytes` of ``text`` in UTF-8."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def finite_or_none(value: Any) -> Any:
    """``value`` (dicts, lists, tuples of numbers and strings) with every NaN or infinite float
    as None: JSON has no NaN (Python writes one that other readers refuse); an interval that too
    few deals leave undefined is written as null."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_or_none(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_or_none(v) for v in value]
    return value


def write_json(path: str | Path, data: Any) -> Path:
    """``data`` as strict JSON (NaN and infinities as null; anything else JSON lacks as its
    ``str``), indented, written whole (:func:`atomic_write_text`)."""
    text = json.dumps(finite_or_none(data), indent=2, default=str, allow_nan=False)
    return atomic_write_text(path, text + "\n")


def check_folder(path: str | Path) -> Path:
    """A ``ValueError`` with one line saying why when the folder ``path`` could not be made or
    written in (a file where a folder of its path should be, no permission), without making
    anything; else ``path``."""
    path = Path(path)
    for part in (path, *path.parents):
        if part.exists():
            if not part.is_dir():
                raise ValueError(f"cannot make the folder {path}: {part} is a file, not a folder")
            if not os.access(part, os.W_OK | os.X_OK):
                verb = "write in" if part == path else "make"
                raise ValueError(f"cannot {verb} the folder {path}: {part} is not writable")
            break
    return path


def check_folder_name(name: str) -> str:
    """``name`` when it names one folder inside another (a run folder under ``--out``); else a
    ``ValueError`` with one line: empty, ``.`` or ``..``, or a path (a separator in it) would
    put the folder somewhere else than its parent."""
    separators = [s for s in (os.sep, os.altsep) if s]   # "/" here, and "\\" too on Windows
    if not name or name in (".", "..") or any(s in name for s in separators) or "\0" in name:
        raise ValueError(f"{name!r} is not a plain folder name (no '/', not '.' or '..', not empty)")
    return name


def make_folder(path: str | Path) -> Path:
    """Make the folder ``path`` and its parents (nothing when it exists) and return it; a
    ``ValueError`` with one line saying why when it cannot be made or written in."""
    path = check_folder(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"cannot make the folder {path}: {exc.strerror or exc}") from None
    return path
