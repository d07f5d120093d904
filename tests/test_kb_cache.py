"""The shipped knowledge base kept in the user's cache folder (expert.knowledge.cache):
read back only when it is sound and of the same content, else built again;
never the reason for an error."""

from __future__ import annotations

import dataclasses
import os
import pickle
import shutil
from pathlib import Path
from typing import Any

import pytest

from expert import cachedir, paths
from expert.interfaces.api import consult
from expert.knowledge.conditions import TRUE, compile_condition
from expert.i18n import Localizer
from expert.knowledge import cache


@pytest.fixture
def shipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A copy of rules/ as the shipped knowledge base, an empty cache folder,
    and the number of times the knowledge base was loaded from its files."""
    rules = tmp_path / "rules"
    shutil.copytree(paths.RULES, rules)
    monkeypatch.setattr(paths, "RULES", rules)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    loads = {"rules": rules, "folder": tmp_path / "cache" / "expert", "count": 0}
    real = cache.load

    def counted(root: Path) -> Any:
        loads["count"] += 1
        return real(root)

    monkeypatch.setattr(cache, "load", counted)
    return loads


def files(folder: Path) -> list[Path]:
    return sorted(folder.glob("kb-*.pickle"))


def test_the_second_process_reads_the_cache(shipped: dict[str, Any]) -> None:
    first = cache.load_shipped()
    assert shipped["count"] == 1 and len(files(shipped["folder"])) == 1
    second = cache.load_shipped()
    assert shipped["count"] == 1            # read back, not loaded again
    assert [rule.id for rule in second.rules] == [rule.id for rule in first.rules]
    assert second.catalog == first.catalog and second.models == first.models and second.timing == first.timing
    assert [rule.condition.source for rule in second.rules] == [rule.condition.source for rule in first.rules]
    # Conditions come back compiled: the same consultation, the same answer.
    tr = Localizer("en")
    for given in ({"model_size_b": 70, "method": "lora"}, {"model_size_b": 8, "method": "qlora", "vram_gb": 24}):
        answers = [consult(kb, given, tr)[1].to_dict() for kb in (first, second)]
        assert answers[0] == answers[1]


def test_a_condition_is_pickled_as_its_source() -> None:
    condition = compile_condition("profile.model_size_b > 13 and profile.method != 'full'")
    copy = pickle.loads(pickle.dumps(condition))
    assert copy.source == condition.source and copy.fields == condition.fields
    assert copy({"profile": {"model_size_b": 70, "method": "lora"}}) is True
    assert copy({"profile": {"model_size_b": 7, "method": "lora"}}) is False
    assert pickle.loads(pickle.dumps(TRUE)) is TRUE


def test_an_edited_rules_file_is_seen(shipped: dict[str, Any]) -> None:
    assert cache.load_shipped().recipes["margin"] == 0.05
    recipes = shipped["rules"] / "recipes.toml"
    recipes.write_text(recipes.read_text(encoding="utf-8").replace("margin = 0.05", "margin = 0.125"),
                       encoding="utf-8")
    assert cache.load_shipped().recipes["margin"] == 0.125
    assert shipped["count"] == 2 and len(files(shipped["folder"])) == 2


def test_a_file_of_another_content_is_not_trusted(shipped: dict[str, Any]) -> None:
    """A file under the right name that says it was built from something else is built again."""
    kb = cache.load_shipped()
    path = files(shipped["folder"])[0]
    changed = dataclasses.replace(kb, recipes={**kb.recipes, "margin": 0.5})
    path.write_bytes(pickle.dumps((cache.FORMAT, "0" * 64, changed)))
    assert cache.load_shipped().recipes["margin"] == 0.05
    assert shipped["count"] == 2
    assert cache.load_shipped().recipes["margin"] == 0.05 and shipped["count"] == 2     # and written again, sound


@pytest.mark.parametrize("damage", [
    lambda data: data[:len(data) // 2],                   # cut short
    lambda data: b"",                                     # empty
    lambda data: b"not a pickle at all\n" * 100,
    lambda data: data[:40] + bytes(200) + data[240:],     # zeros in the middle
    lambda data: pickle.dumps(["a", "list"]),             # sound pickle, wrong thing
    lambda data: pickle.dumps((cache.FORMAT, "x")),
])
def test_a_damaged_file_is_built_again(shipped: dict[str, Any], damage: Any) -> None:
    cache.load_shipped()
    path = files(shipped["folder"])[0]
    path.write_bytes(damage(path.read_bytes()))
    kb = cache.load_shipped()
    assert shipped["count"] == 2 and kb.recipes["margin"] == 0.05
    cache.load_shipped()
    assert shipped["count"] == 2            # the damaged file was replaced by a sound one


def test_a_file_others_can_write_is_not_read(shipped: dict[str, Any]) -> None:
    cache.load_shipped()
    path = files(shipped["folder"])[0]
    os.chmod(path, 0o666)
    cache.load_shipped()
    assert shipped["count"] == 2


def test_where_nothing_can_be_written_it_loads_each_time(shipped: dict[str, Any], tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))          # expert/ cannot be made under a file
    assert cache.load_shipped().recipes["margin"] == 0.05
    assert cache.load_shipped().recipes["margin"] == 0.05
    assert shipped["count"] == 2
    assert list(tmp_path.glob("**/*.tmp")) == []


def test_the_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cachedir.folder() == tmp_path / "expert"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")       # not absolute: ignored, as XDG says
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cachedir.folder() == tmp_path / ".cache" / "expert"
    monkeypatch.setattr(os.path, "expanduser", lambda path: path)   # no home: no cache, not a folder named ~
    assert cachedir.folder() is None
    cachedir.write("kb-x.pickle", b"data", 1)
    assert cachedir.read("kb-x.pickle") is None


def test_old_files_are_removed(shipped: dict[str, Any]) -> None:
    folder = shipped["folder"]
    folder.mkdir(parents=True, mode=0o700)
    for n in range(cache.KEEP + 3):
        old = folder / f"kb-{n:064x}.pickle"
        old.write_bytes(b"old")
        os.utime(old, ns=(n * 10**9, n * 10**9))
    cache.load_shipped()
    kept = files(folder)
    assert len(kept) == cache.KEEP and folder / f"kb-{0:064x}.pickle" not in kept


def test_a_knowledge_base_of_its_own_folder_is_not_cached(shipped: dict[str, Any], tmp_path: Path) -> None:
    """--rules DIR is what someone is editing: loaded and checked every time."""
    from expert.interfaces.api import knowledge_base

    other = tmp_path / "mine"
    shutil.copytree(shipped["rules"], other)
    knowledge_base(other)
    assert files(shipped["folder"]) == []


def test_compiled_templates_are_kept_and_damage_is_compiled_again(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """jinja2's bytecode cache in the same folder: a damaged file is compiled again, the text is the same."""
    from expert.explanation import templating

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    result = consult(cache.load_shipped(), {"model_size_b": 8, "method": "lora"}, Localizer("es"))[1]

    def text() -> str:
        templating.environment.cache_clear()       # a new environment, as in a new process
        return result.render("text", width=80)

    first = text()
    kept = sorted((tmp_path / "expert").glob("template-*"))
    assert len(kept) == 1
    assert text() == first
    sound = kept[0].read_bytes()
    for damage in (b"", b"garbage" * 50, sound[:30] + bytes(100), sound[:len(sound) // 2]):
        kept[0].write_bytes(damage)
        assert text() == first
        assert kept[0].read_bytes() == sound           # compiled again, and kept again
