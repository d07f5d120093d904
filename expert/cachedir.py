"""Files kept between runs in the user's cache folder: ``$XDG_CACHE_HOME/expert``,
else ``~/.cache/expert``. What is kept there is built again from its
sources whenever it is missing, damaged or stale: the knowledge base
(:mod:`expert.knowledge.cache`) and the compiled templates
(:mod:`expert.explanation.templating`).

What is read back becomes code (a pickle, a compiled template), so a file is
read only if it and its folder belong to the user running ``expert`` and no
one else can write them: whoever can write there can already run code as
that user. Where nothing can be written (a read-only home, no home), nothing
is kept and nothing fails. A file is written whole (a temporary file renamed
over it), so a reader never sees half of one.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


def folder() -> Path | None:
    """$XDG_CACHE_HOME/expert (an absolute path, as the XDG specification
    asks), else ~/.cache/expert; None without a home."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(xdg):
        return Path(xdg) / "expert"
    home = os.path.expanduser("~")      # "~" itself when there is no home: then no cache
    return Path(home) / ".cache" / "expert" if os.path.isabs(home) else None


def _private(st: os.stat_result) -> bool:
    """Owned by this user and writable by no one else (always true where files have no owner)."""
    if not hasattr(os, "getuid"):
        return True
    return st.st_uid == os.getuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def read(filename: str) -> bytes | None:
    """The bytes of ``filename`` in the cache folder, or None: missing,
    unreadable, not a regular file, or not private to this user."""
    where = folder()
    if where is None:
        return None
    try:
        with open(where / filename, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not (stat.S_ISREG(st.st_mode) and _private(st) and _private(where.stat())):
                return None
            return fh.read()
    except (OSError, ValueError):          # ValueError: a NUL in XDG_CACHE_HOME
        return None


def write(filename: str, data: bytes, keep: int) -> None:
    """Write ``data`` to ``filename`` in the cache folder whole, or not at
    all; of the files of the same kind (the same name up to its first "-"),
    keep the ``keep`` newest."""
    where = folder()
    if where is None:
        return
    temporary = None
    try:
        where.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not _private(where.stat()):
            return
        descriptor, temporary = tempfile.mkstemp(prefix=".", suffix=".tmp", dir=where)
        with os.fdopen(descriptor, "wb") as fh:
            fh.write(data)
        os.replace(temporary, where / filename)
        temporary = None
        kind = filename.split("-", 1)[0]
        files = sorted(where.glob(f"{kind}-*"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
        for old in files[keep:]:
            old.unlink(missing_ok=True)
    except (OSError, ValueError):
        pass                  # nothing kept: built again next time
    finally:
        if temporary is not None:     # written in part: removed
            Path(temporary).unlink(missing_ok=True)
