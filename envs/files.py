"""Files written whole or not at all.

Every file the project writes over one that may already hold something (checkpoints, agent
files, a tournament's or an exploitability run's ``results.json``, a sweep's summary, a hand
history) goes through :func:`atomic_write_bytes`: the bytes go to a temporary file in the same
folder, are flushed to the disk, and the temporary file is moved into place with ``os.replace``.
A crash, Ctrl-C or full disk in the middle of a write leaves the previous file whole (or no file),
never half of one. Standard library only, so every layer can use it.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["atomic_write_bytes", "atomic_write_text"]


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
