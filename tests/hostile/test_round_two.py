"""Untrusted input, round two (issue 26): every read of a file from outside
bounded and non-blocking, at every read; the free-text cap after
normalisation; the shipped catalog by name everywhere."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path
from typing import Any, Callable

import pytest

from expert import Consultation, InputError, advise, register_catalog
from expert.paths import RULES

CURRENT = RULES / "catalogs" / "current.toml"
QUICK = 10.0      # seconds: a read that blocks never returns; this only ends the test


def outcome_of(call: Callable[[], Any], unblock: Path | None = None) -> BaseException | Any:
    """What ``call`` returns or raises, run in a thread: a call blocked on a
    FIFO is let go (a writer opens it) and the test fails."""
    done: list[Any] = []

    def run() -> None:
        try:
            done.append(call())
        except BaseException as error:  # noqa: BLE001 - the test inspects it
            done.append(error)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(QUICK)
    if worker.is_alive():
        if unblock is not None:
            with open(unblock, "w"):
                pass
        worker.join(QUICK)
        pytest.fail("the read blocked")
    return done[0]


def registered(tmp_path: Path, name: str) -> tuple[Path, dict[str, Any]]:
    path = tmp_path / f"{name}.toml"
    shutil.copy(CURRENT, path)
    register_catalog(path, name=name)
    return path, Consultation(lang="en", catalog=[name], model_size_b=8).to_dict()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_registered_catalog_replaced_by_a_fifo_is_refused_without_waiting(tmp_path: Path) -> None:
    path, state = registered(tmp_path, "fifo-later")
    path.unlink()
    os.mkfifo(path)
    error = outcome_of(lambda: Consultation.from_dict(state), unblock=path)
    assert isinstance(error, InputError) and error.field == "catalog" and "changed or disappeared" in str(error)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero here")
def test_a_registered_catalog_replaced_by_an_endless_device_is_refused_without_reading_it(tmp_path: Path) -> None:
    path, state = registered(tmp_path, "zero-later")
    path.unlink()
    path.symlink_to("/dev/zero")
    error = outcome_of(lambda: Consultation.from_dict(state))
    assert isinstance(error, InputError) and error.field == "catalog"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_model_config_is_opened_once_without_waiting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The file is checked on the descriptor it is read from: a FIFO swapped
    in after a check of the name (here, os.stat says a small regular file)
    is refused, not waited on."""
    fifo = tmp_path / "config.json"
    os.mkfifo(fifo)
    real = os.stat
    regular = real(CURRENT)
    monkeypatch.setattr(os, "stat", lambda path, *a, **k: regular if str(path) == str(fifo) else real(path, *a, **k))
    error = outcome_of(lambda: advise(model_config=fifo, lang="en"), unblock=fifo)
    assert isinstance(error, InputError) and error.field == "model_config" and "not a regular file" in str(error)


def test_the_shipped_catalog_by_name_in_a_consultation(tmp_path: Path) -> None:
    consultation = Consultation(lang="en", catalog="current", model_size_b=70, method="full")
    assert consultation.catalog == ["current"]
    state = consultation.to_dict()
    assert state["catalog"] == ["current"]
    again = Consultation.from_dict(state)
    gpus = {r.gpu for r in again.result().recommendations} | {r.gpu for r in again.result().rejected}
    assert "b200-180gb" in gpus
    assert again.result().to_dict() == advise(catalog="current", model_size_b=70, method="full",
                                              lang="en").to_dict()
    with pytest.raises(InputError) as caught:      # a registered name never shadows a shipped one
        register_catalog(CURRENT, name="current")
    assert caught.value.field == "catalog" and "shipped" in str(caught.value)


def test_the_free_text_cap_counts_the_text_once_normalised(monkeypatch: pytest.MonkeyPatch) -> None:
    """U+FDFA spells out to 18 characters: 60 of them are over the cap of
    1,000 once normalised, and refused before any matching is done."""
    from expert.input import freetext

    consultation = Consultation(lang="es")
    assert len(freetext.normal("\ufdfa")) == 18
    told = consultation.tell("\ufdfa" * 50 + " 7B")           # 900 + 3 characters: read
    assert told.understood == {"model_size_b": 7.0}
    monkeypatch.setattr(freetext, "extract", lambda *a, **k: pytest.fail("matched text over the cap"))
    for text in ("\ufdfa" * 60, "\ufdfa" * 1000, "x" * 1001):
        with pytest.raises(InputError) as caught:
            consultation.tell(text)
        assert caught.value.field == "text" and "1000" in str(caught.value).replace(".", "")
