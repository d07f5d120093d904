"""A model's ``config.json`` read from the Hugging Face Hub by the model's id
(``org/name``), through ``huggingface_hub`` (the ``hub`` extra:
``pip install 'expert[hub]'``).

What ``huggingface_hub`` already does is left to it: its cache (a config read
once is read again without the network), ``HF_TOKEN`` (or ``hf auth login``)
for gated and private models, ``HF_HUB_OFFLINE=1`` (the cache only) and
``HF_ENDPOINT`` (a mirror; read when a model is read, so a running server or a
test can point elsewhere). This module only bounds what it takes: the size the
Hub announces is checked before anything is downloaded, the file is read with
a bounded read, and what it holds is untrusted (the caller counts it with
:func:`expert.knowledge.models.config_model`, which checks every field).

Each failure is a :class:`HubUnreadable` with a reason the input layer words
in the person's language; nothing here prints or translates.
"""

from __future__ import annotations

import os
import re
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from .source import Unreadable, read_regular

# A model's id on the Hub: a user or organisation and a repository name, each
# of letters, digits, '-', '_' and '.', at most 96 characters, not starting
# with '-' or '.' (huggingface_hub's validate_repo_id; its docs, "Repository
# id"). Anything else is not sent to the Hub.
_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,95}/[A-Za-z0-9][A-Za-z0-9_.\-]{0,95}$")
# The file every transformers model on the Hub carries, and the only one read.
CONFIG_FILE = "config.json"
# How long the first HEAD request waits for the Hub: huggingface_hub's own default (HF_HUB_ETAG_TIMEOUT, 10 s).
PROBE_TIMEOUT_S = 10
# Configs read in this process, by endpoint and id: WHAT IF and WHY NOT
# consult the same model again, and a server answers many people.
_MEMO_MAX = 256
_memo: OrderedDict[tuple[str, str], bytes] = OrderedDict()
_lock = threading.Lock()

REASONS = ("no-library", "offline", "missing", "gated", "no-config", "too-large", "unreachable")


class HubUnreadable(Exception):
    """The config of ``repo_id`` could not be read; ``reason`` is one of
    :data:`REASONS` (``detail``: what the Hub said, one line, for the curious)."""

    def __init__(self, reason: str, repo_id: str, detail: str = "") -> None:
        super().__init__(reason)
        self.reason, self.repo_id, self.detail = reason, repo_id, detail


def is_hub_id(text: str) -> bool:
    """Whether ``text`` has the shape of a model's id on the Hub (``org/name``)."""
    return bool(_HUB_ID.match(text)) and ".." not in text and "--" not in text


def read_config_bytes(repo_id: str, max_bytes: int) -> bytes:
    """The bytes of ``repo_id``'s ``config.json`` on the Hub (or in the Hub's
    cache), at most ``max_bytes`` of them; :class:`HubUnreadable` otherwise."""
    if not is_hub_id(repo_id):
        raise HubUnreadable("missing", repo_id)
    endpoint = os.environ.get("HF_ENDPOINT", "").rstrip("/") or None
    key = (endpoint or "", repo_id)
    with _lock:
        if key in _memo:
            _memo.move_to_end(key)
            return _memo[key]
    raw = _download(repo_id, endpoint, max_bytes)
    with _lock:
        _memo[key] = raw
        while len(_memo) > _MEMO_MAX:
            _memo.popitem(last=False)
    return raw


def forget() -> None:
    """Forget the configs read in this process (a test changes what the Hub holds)."""
    with _lock:
        _memo.clear()


def _download(repo_id: str, endpoint: str | None, max_bytes: int) -> bytes:
    try:
        import huggingface_hub
        from huggingface_hub import errors
    except ImportError:
        raise HubUnreadable("no-library", repo_id) from None
    path = (_cached_when_out_of_reach(huggingface_hub, repo_id, endpoint)
            or _fetch(huggingface_hub, errors, repo_id, endpoint, max_bytes))
    try:
        return read_regular(Path(path), max_bytes)
    except Unreadable as error:
        raise HubUnreadable("too-large" if error.reason == "too-large" else "unreachable", repo_id,
                            error.reason) from None


def _cached_when_out_of_reach(huggingface_hub: Any, repo_id: str, endpoint: str | None) -> str | None:
    """One HEAD request, not retried: when it reaches no server at all (a closed port, no route, a
    timeout), the cached config's path, or :class:`HubUnreadable` ("offline") at once. huggingface_hub
    retries such a download five times, 1 to 8 s apart (about 25 s in all, with "Retrying in" warnings
    on the terminal), before it says the same; a server that answers, even with an error, is left to
    :func:`_fetch`, which words each answer."""
    from huggingface_hub import errors
    url = huggingface_hub.hf_hub_url(repo_id, CONFIG_FILE, endpoint=endpoint)
    try:
        huggingface_hub.get_hf_file_metadata(url, timeout=PROBE_TIMEOUT_S)
        return None
    except (errors.HfHubHTTPError, errors.OfflineModeIsEnabled):
        return None                 # a server answered, or the cache alone is asked for: _fetch says which
    except Exception as error:      # no server answered (the HTTP library's own transport errors)
        cached = huggingface_hub.try_to_load_from_cache(repo_id, CONFIG_FILE)
        if isinstance(cached, str):
            return cached
        raise HubUnreadable("offline", repo_id, _line(error)) from None


def _fetch(huggingface_hub: Any, errors: Any, repo_id: str, endpoint: str | None, max_bytes: int) -> str:
    """The cached path of the config once downloaded, each failure worded."""
    try:
        # First what the Hub says of the file (a HEAD request; the cache when offline), so that a file
        # larger than a config is refused before it is downloaded.
        info = huggingface_hub.hf_hub_download(repo_id, CONFIG_FILE, endpoint=endpoint, dry_run=True)
        if info.file_size is not None and info.file_size > max_bytes:
            raise HubUnreadable("too-large", repo_id, str(info.file_size))
        path = huggingface_hub.hf_hub_download(repo_id, CONFIG_FILE, endpoint=endpoint)
    except errors.GatedRepoError as error:
        raise HubUnreadable("gated", repo_id, _line(error)) from None
    except errors.RepositoryNotFoundError as error:     # also a private model without a token
        raise HubUnreadable("missing", repo_id, _line(error)) from None
    except errors.LocalEntryNotFoundError as error:     # offline, or the Hub out of reach, and not in the cache
        if isinstance(error.__cause__, errors.HfHubHTTPError):      # the Hub answered, with an error
            raise HubUnreadable("unreachable", repo_id, _line(error.__cause__)) from None
        raise HubUnreadable("offline", repo_id, _line(error)) from None
    except errors.EntryNotFoundError as error:
        raise HubUnreadable("no-config", repo_id, _line(error)) from None
    except errors.OfflineModeIsEnabled as error:
        raise HubUnreadable("offline", repo_id, _line(error)) from None
    except (OSError, ValueError) as error:      # HfHubHTTPError (5xx, 4xx), a connection or a file error
        raise HubUnreadable("unreachable", repo_id, _line(error)) from None
    return str(path)


def _line(error: BaseException) -> str:
    """The first line of what the library said, at most 200 characters."""
    return (str(error).strip().splitlines() or [""])[0][:200]
