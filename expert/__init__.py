"""expert: which GPU (or GPUs) to fine-tune a large language model on, and why.

    from expert import advise
    result = advise(model_size_b=70, method="lora", lang="es")
    result.recommendations[0].gpu     # a catalog id, or "own"
    result.render("markdown")         # the reasons, ready for a chat message

Imports are lazy so that ``expert --help`` does not load experta, jinja2 or
babel.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import InputError, KnowledgeBaseError

__all__ = ["Consultation", "InputError", "KnowledgeBaseError", "Result", "advise", "explain", "launch", "register_catalog"]
from .version import __version__ as __version__  # the package's version, re-exported

if TYPE_CHECKING:
    from .application import explain
    from .explanation.result import Result
    from .interfaces.api import advise, register_catalog
    from .interfaces.consultation import Consultation
    from .interfaces.launch.make import launch


def __getattr__(name: str) -> Any:
    if name == "advise":
        from .interfaces.api import advise

        return advise
    if name == "register_catalog":
        from .interfaces.api import register_catalog

        return register_catalog
    if name == "Consultation":
        from .interfaces.consultation import Consultation

        return Consultation
    if name == "explain":
        from .application import explain

        return explain
    if name == "launch":
        from .interfaces.launch.make import launch

        return launch
    if name == "Result":
        from .explanation.result import Result

        return Result
    raise AttributeError(f"module 'expert' has no attribute {name!r}")
