"""The knowledge base: the TOML files of ``rules/``, loaded and validated.

- :mod:`.records`: the typed records (:class:`KnowledgeBase`, :class:`RuleDef`,
  :class:`Card` ...) and the vocabulary the files are checked against;
- :mod:`.source`: reading a TOML file, the problems found in it and their lines;
- :mod:`.load`: :func:`load`, and the checks across files; :mod:`.shapes`: the shape of every file;
  :mod:`.figures`, :mod:`.profile_files`, :mod:`.rules_file`: the checks of each file;
- :mod:`.catalog`: GPU catalogs, the guide's and the user's (:func:`with_catalogs`);
- :mod:`.owned`: the cards people own, found by name (:func:`find_cards`);
- :mod:`.vocabulary`: the words of ``rules/vocabulary.toml``;
- :mod:`.cache`: the shipped knowledge base kept in the user's cache folder (:func:`load_shipped`);
- :mod:`.bases`: the knowledge bases in use, loaded once (:func:`~.bases.knowledge_base`).
"""

from __future__ import annotations

from .cache import load_shipped
from .catalog import with_catalogs
from .load import load
from .owned import find_cards, find_unsupported
from .records import (
           ACTIONS,
           COLLECTS,
           COSTS,
           LARGER_BATCH,
           OFF_LADDER,
           PROFILE_FIELDS,
           SCALE_OUT,
           SEGMENTS,
           SPEED_UP,
           TRIAL_STEPS,
           VENDORS,
           Card,
           KnowledgeBase,
           ModelDef,
           ProfileField,
           RuleDef,
           StageDef,
)
from .source import MAX_BYTES, Unreadable, read_regular

# What the rest of the package imports from here; everything else is in the submodules.
__all__ = [
           "ACTIONS",
           "COLLECTS",
           "COSTS",
           "LARGER_BATCH",
           "MAX_BYTES",
           "OFF_LADDER",
           "PROFILE_FIELDS",
           "SCALE_OUT",
           "SEGMENTS",
           "SPEED_UP",
           "TRIAL_STEPS",
           "VENDORS",
           "Card",
           "KnowledgeBase",
           "ModelDef",
           "ProfileField",
           "RuleDef",
           "StageDef",
           "Unreadable",
           "find_cards",
           "find_unsupported",
           "load",
           "load_shipped",
           "read_regular",
           "with_catalogs",
]
