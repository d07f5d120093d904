"""The knowledge bases in use: :func:`knowledge_base` loads one (the shipped
``rules/`` or another folder, with user catalogs) once, and reuses it while
every file it was read from is unchanged; a few dozen at most are kept.
The shipped catalogs are named by :func:`shipped_catalogs`.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .. import paths
from ..errors import InputError
from .cache import load_shipped
from .catalog import with_catalogs
from .load import load
from .records import KnowledgeBase
from .source import MAX_BYTES, Unreadable, read_regular

# Loaded knowledge bases, most recently used last; a few dozen at most, so that
# catalogs edited again and again (each edit is a new key) cannot fill memory.
_KB: OrderedDict[tuple[Any, ...], KnowledgeBase] = OrderedDict()
_KB_LOCK = threading.Lock()
KB_CACHE_SIZE = 32
# One catalog or several: a path, a shipped catalog's name ("current"), or a list of them.
Catalogs = str | Path | Sequence[str | Path] | None


def file_digest(path: Path) -> str | None:
    """The SHA-256 of a catalog file, read as the loader reads it (a regular
    file of at most 2 MB, opened non-blocking, with a bounded read); None if
    it is not such a file now."""
    try:
        return hashlib.sha256(read_regular(path, MAX_BYTES)).hexdigest()
    except Unreadable:
        return None


# The name of the guide's own catalog: given as a catalog, the guide's cards alone.
GUIDE = "guide"


def shipped_catalogs() -> dict[str, Path]:
    """The catalogs that ship with the package, by name: ``guide`` (the
    guide's own, ``rules/catalog.toml``: its cards alone) and today's market
    (``rules/catalogs/NAME.toml``, weighed by default)."""
    return {GUIDE: paths.RULES / "catalog.toml",
            **{path.stem: path for path in sorted((paths.RULES / "catalogs").glob("*.toml"))}}


def catalog_paths(catalog: Catalogs) -> tuple[Path, ...]:
    if catalog is None:
        return ()
    items = [catalog] if isinstance(catalog, (str, Path)) else catalog
    if not isinstance(items, (list, tuple)) or not all(isinstance(c, (str, Path)) for c in items):
        raise InputError("catalog", "catalog: a file path or a list of file paths is accepted")
    # A shipped catalog may be named ("current"); anything else is a path.
    shipped = shipped_catalogs()
    return tuple(shipped[c] if isinstance(c, str) and c in shipped else Path(c) for c in items)


def _stamp(path: Path, resolve: bool = True) -> tuple[str, int, int]:
    """A file's name, modification time and size: a changed stamp is a
    changed file. ``resolve=False`` for a path already absolute and resolved
    (one found under a resolved folder), which saves a system call per
    folder of its path on every consultation."""
    try:
        stat = path.stat()
        return (str(path.resolve() if resolve else path), stat.st_mtime_ns, stat.st_size)
    except (OSError, RuntimeError, ValueError):  # ValueError: a NUL in the path; the loader reports it
        return (str(path), 0, 0)


def knowledge_base(rules_dir: str | Path | None = None, catalog: Catalogs = None) -> KnowledgeBase:
    """The knowledge base in ``rules_dir`` (the shipped one by default), with the
    cards of the user catalogs in ``catalog`` (a path or a list of paths) added.

    Loaded once and reused while the files are unchanged; the shipped one is
    also kept between processes in the user's cache folder (:mod:`expert.knowledge.cache`).
    """
    catalogs = catalog_paths(catalog)
    root = Path(rules_dir) if rules_dir is not None else paths.RULES
    # Every file of the rules directory is stamped, so an edited rules/ is
    # read again by a long-running process (a server, a notebook).
    resolved = root.resolve()
    base_key = (str(resolved), *(_stamp(path, resolve=False) for path in sorted(resolved.rglob("*.toml"))))
    key = base_key + tuple(_stamp(path) for path in catalogs)
    with _KB_LOCK:
        if key not in _KB:
            # The shipped knowledge base may come from the user's cache folder (expert.knowledge.cache).
            base = _KB.get(base_key) or (load_shipped() if rules_dir is None else load(rules_dir))
            _remember(base_key, base)
            _remember(key, with_catalogs(base, catalogs) if catalogs else base)
        _KB.move_to_end(key)
        return _KB[key]


def _remember(key: tuple[Any, ...], kb: KnowledgeBase) -> None:
    _KB[key] = kb
    _KB.move_to_end(key)
    while len(_KB) > KB_CACHE_SIZE:
        _KB.popitem(last=False)
