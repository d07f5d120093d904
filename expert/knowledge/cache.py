"""The shipped knowledge base, kept in the user's cache folder by content.

Loading ``rules/`` (parsing its TOML files, checking and building every
record) costs a command more than its consultation does. So a process that
loads the shipped knowledge base keeps what it built in the user's cache
folder (:mod:`expert.cachedir`), as a pickle named by the SHA-256 of
everything it was built from: the bytes of every TOML file of the rules
folder, its path, the code that reads and builds it (``expert/knowledge/*.py``:
the code itself, which a version number would only
stand for, and an editable install changes without changing its version)
and Python's version. The next process reads that file back instead of
loading again.

- A change to any of those inputs is a new name, so a stale file is never
  read; the name is also stored inside the file and compared.
- A file that cannot be read back, of any kind of damage, is built again:
  the cache is never the reason for an error. What may be read at all is
  :mod:`expert.cachedir`'s rule: private to the user.
- Only the shipped knowledge base is cached: a ``--rules`` folder is what
  someone is editing, and it is loaded and checked every time, as
  ``expert check`` always does.
"""

from __future__ import annotations

import hashlib
import pickle
import sys
from pathlib import Path

from .. import cachedir, paths
from .load import load
from .records import KnowledgeBase

# What a cache file holds: (FORMAT, its key, the knowledge base).
FORMAT = "expert-kb-cache-1"
# Files kept (several installations or Python versions may share the folder).
KEEP = 8
_CODE = tuple(sorted(Path(__file__).parent.glob("*.py")))


def key(root: Path) -> str:
    """The SHA-256 of everything the knowledge base in ``root`` is built from."""
    digest = hashlib.sha256(f"{FORMAT}\0{sys.version}\0{root.resolve()}\0".encode())
    for path in (*sorted(root.rglob("*.toml")), *_CODE):
        data = path.read_bytes()
        digest.update(f"{path}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def load_shipped() -> KnowledgeBase:
    """The shipped knowledge base: from the cache when a sound file of the
    same content is there, else loaded (and checked) and kept there."""
    root = paths.RULES
    try:
        name = key(root)
    except OSError:           # a file vanished or cannot be read: the loader says which
        return load(root)
    kb = _unpickled(cachedir.read(f"kb-{name}.pickle"), name)
    if kb is not None:
        return kb
    kb = load(root)
    try:
        unchanged = key(root) == name     # not edited while it was loading
    except OSError:
        unchanged = False
    if unchanged:
        try:
            data = pickle.dumps((FORMAT, name, kb), protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PickleError, TypeError, AttributeError, RecursionError):
            return kb                     # a record that cannot be kept: loaded again next time
        cachedir.write(f"kb-{name}.pickle", data, KEEP)
    return kb


def _unpickled(data: bytes | None, name: str) -> KnowledgeBase | None:
    """The knowledge base in ``data`` if it is sound and of key ``name``, else None."""
    if not data:
        return None
    try:
        entry = pickle.loads(data)
    except Exception:      # a damaged file, of any kind of damage, is built again
        return None
    if (isinstance(entry, tuple) and len(entry) == 3 and entry[0] == FORMAT and entry[1] == name
            and isinstance(entry[2], KnowledgeBase)):
        return entry[2]
    return None
