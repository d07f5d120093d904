"""The shipped knowledge base, kept in the user's cache folder by content.

Loading ``rules/`` (parsing its TOML files, checking and building every
record) costs a command more than its consultation does. So a process that
loads the shipped knowledge base writes what it built to
``$XDG_CACHE_HOME/expert`` (else ``~/.cache/expert``), as a pickle named by
the SHA-256 of everything it was built from: the bytes of every TOML file of
the rules folder, its path, the code that reads and builds it
(``expert/kb/*.py``, ``expert/conditions.py``: the code itself, which a
version number would only stand for, and an editable install changes
without changing its version) and Python's version. The next process reads that file back instead of loading again.

Safe by construction:
- a change to any of those inputs is a new name, so a stale file is never
  read; the name is also stored inside the file and compared;
- a file that cannot be read back, of any kind of damage, is built again:
  the cache is never the reason for an error;
- a pickle runs code when read, so a file (and its folder) is read only if
  it belongs to the user running ``expert`` and no one else can write it —
  whoever can write there can already run code as that user;
- where nothing can be written (a read-only home, no home), the knowledge
  base is simply loaded each time;
- files are written whole (a temporary file renamed over), so a reader never
  sees half of one.

Only the shipped knowledge base is cached: a ``--rules`` folder is what
someone is editing, and it is loaded and checked every time, as
``expert check`` always does.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import stat
import sys
import tempfile
from pathlib import Path

from .. import paths
from .load import load
from .model import KnowledgeBase

# What a cache file holds: (FORMAT, its key, the knowledge base).
FORMAT = "expert-kb-cache-1"
# Files kept in the folder (several installations or Python versions may share it).
KEEP = 8
_CODE = (*sorted(Path(__file__).parent.glob("*.py")), Path(__file__).parent.parent / "conditions.py")


def folder() -> Path | None:
    """Where cache files go: $XDG_CACHE_HOME/expert (an absolute path, as
    the XDG specification asks), else ~/.cache/expert; None without a home."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(xdg):
        return Path(xdg) / "expert"
    try:
        return Path.home() / ".cache" / "expert"
    except (RuntimeError, KeyError, OSError):  # no home directory
        return None


def key(root: Path) -> str:
    """The SHA-256 of everything the knowledge base in ``root`` is built from."""
    digest = hashlib.sha256(f"{FORMAT}\0{sys.version}\0{root.resolve()}\0".encode())
    for path in (*sorted(root.rglob("*.toml")), *_CODE):
        data = path.read_bytes()
        digest.update(f"{path.name}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def load_shipped() -> KnowledgeBase:
    """The shipped knowledge base: from the cache when a sound file of the
    same content is there, else loaded (and checked) and written to it."""
    root = paths.RULES
    try:
        name = key(root)
    except OSError:           # a file vanished or cannot be read: the loader says which
        return load(root)
    where = folder()
    kb = _read(where / f"kb-{name}.pickle", name) if where is not None else None
    if kb is not None:
        return kb
    kb = load(root)
    if where is not None:
        try:
            unchanged = key(root) == name     # not edited while it was loading
        except OSError:
            unchanged = False
        if unchanged:
            _write(where, f"kb-{name}.pickle", (FORMAT, name, kb))
    return kb


def _private(st: os.stat_result) -> bool:
    """Owned by this user and writable by no one else (always true where files have no owner)."""
    if not hasattr(os, "getuid"):
        return True
    return st.st_uid == os.getuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _read(path: Path, name: str) -> KnowledgeBase | None:
    """The knowledge base in cache file ``path`` if it is sound and of key ``name``, else None."""
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not (stat.S_ISREG(st.st_mode) and _private(st) and _private(path.parent.stat())):
                return None
            entry = pickle.load(fh)
    except FileNotFoundError:
        return None
    except Exception:      # a damaged file, of any kind of damage, is built again
        return None
    if (isinstance(entry, tuple) and len(entry) == 3 and entry[0] == FORMAT and entry[1] == name
            and isinstance(entry[2], KnowledgeBase)):
        return entry[2]
    return None


def _write(where: Path, filename: str, entry: tuple[str, str, KnowledgeBase]) -> None:
    """Write ``entry`` to ``where/filename`` whole, or not at all; keep the newest KEEP files."""
    temporary = None
    try:
        where.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not _private(where.stat()):
            return
        descriptor, temporary = tempfile.mkstemp(prefix=".kb-", suffix=".tmp", dir=where)
        with os.fdopen(descriptor, "wb") as fh:
            pickle.dump(entry, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(temporary, where / filename)
        temporary = None
        files = sorted(where.glob("kb-*.pickle"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
        for old in files[KEEP:]:
            old.unlink(missing_ok=True)
    except (OSError, pickle.PickleError, RecursionError):
        pass                  # no cache where nothing can be written: loaded again next time
    finally:
        if temporary is not None:     # written in part: removed
            Path(temporary).unlink(missing_ok=True)
