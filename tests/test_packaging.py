"""The wheel ships the knowledge base and the compiled catalogs, and experta
imports on Python 3.10+ without touching the host."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from hatchling.build import build_wheel

    out = tmp_path_factory.mktemp("dist")
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        name = build_wheel(str(out))
    finally:
        os.chdir(cwd)
    return out / name


def test_wheel_contains_knowledge_base_catalogs_and_templates(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for toml in (ROOT / "rules").glob("*.toml"):
        assert f"expert/rules/{toml.name}" in names
    assert "expert/locales/es/LC_MESSAGES/messages.mo" in names
    assert "expert/explanation/templates/advise.txt.j2" in names and "expert/explanation/templates/advise.md.j2" in names
    assert "expert/py.typed" in names
    assert "expert/interfaces/cli/completion.json" in names                              # the words of shell completion
    for asset in ("templates/page.html.j2", "static/expert.css", "static/expert.js"):   # expert serve's page
        assert f"expert/interfaces/web/{asset}" in names, asset
    assert any(n.endswith(".data/data/share/man/man1/expert.1") for n in names), "the man page"
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "expert = expert.interfaces.cli.main:main" in zipfile.ZipFile(wheel).read(entry_points).decode()



def test_wheel_and_sdist_ship_the_license_and_classifiers(wheel: Path, tmp_path: Path) -> None:
    import tarfile

    from hatchling.build import build_sdist

    names = zipfile.ZipFile(wheel).namelist()
    license_file = next(n for n in names if n.endswith(".dist-info/licenses/LICENSE"))
    assert zipfile.ZipFile(wheel).read(license_file).decode() == (ROOT / "LICENSE").read_text(encoding="utf-8")
    metadata = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "License: MIT" in metadata and "Classifier: License :: OSI Approved :: MIT License" in metadata
    for version in ("3.10", "3.11", "3.12", "3.13"):
        assert f"Classifier: Programming Language :: Python :: {version}" in metadata
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        sdist = tmp_path / build_sdist(str(tmp_path))
    finally:
        os.chdir(cwd)
    members = {name.split("/", 1)[1] for name in tarfile.open(sdist).getnames() if "/" in name}
    assert {"LICENSE", "CHANGELOG.md", "README.md", "pyproject.toml"} <= members


HEADER = 'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'


def hook_and_catalog(root: Path) -> tuple[Any, Path]:
    """hatch_build.py loaded as the build loads it, and a Spanish catalog of one message under ``root``."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_expert_hatch_build", ROOT / "hatch_build.py")
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)  # type: ignore[union-attr]
    po = root / "locales" / "es" / "LC_MESSAGES" / "messages.po"
    po.parent.mkdir(parents=True)
    po.write_text(HEADER + 'msgid "Recommendation"\nmsgstr "Recomendación"\n', encoding="utf-8")
    return hook, po


@pytest.mark.parametrize("entry", ['#, fuzzy\nmsgid "Advice"\nmsgstr "Consejos"\n', 'msgid "Advice"\nmsgstr ""\n'])
def test_the_build_refuses_a_fuzzy_or_missing_translation(tmp_path: Path, entry: str) -> None:
    hook, po = hook_and_catalog(tmp_path)
    assert hook.compile_catalogs(tmp_path) == [po.with_suffix(".mo")]
    po.write_text(HEADER + entry, encoding="utf-8")
    with pytest.raises(SystemExit, match="'Advice': not translated"):
        hook.compile_catalogs(tmp_path)


def test_the_build_replaces_a_catalog_whole_or_leaves_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hook writes each .mo beside its .po, in the tree a running `expert` reads (an editable install):
    it writes a new file and renames it over the old one. Writing in place let `expert mcp` read half a
    catalog while the suite built a wheel (a Spanish tool call failed, 2026-12-08). A write that fails
    leaves the old catalog and no temporary file."""
    from babel.messages import mofile

    hook, po = hook_and_catalog(tmp_path)
    mo = po.with_suffix(".mo")
    mo.write_bytes(b"the catalog a running process reads")
    real = mofile.write_mo

    def breaks(fh: Any, catalog: Any, **kwargs: Any) -> None:
        fh.write(b"\xde\x12\x04\x95 half")
        raise OSError("disk full")

    monkeypatch.setattr(mofile, "write_mo", breaks)
    with pytest.raises(OSError, match="disk full"):
        hook.compile_catalogs(tmp_path)
    assert mo.read_bytes() == b"the catalog a running process reads"
    assert sorted(p.name for p in mo.parent.iterdir()) == ["messages.mo", "messages.po"]
    monkeypatch.setattr(mofile, "write_mo", real)
    assert hook.compile_catalogs(tmp_path) == [mo]
    assert sorted(p.name for p in mo.parent.iterdir()) == ["messages.mo", "messages.po"]
    import gettext

    with mo.open("rb") as fh:
        assert gettext.GNUTranslations(fh).gettext("Recommendation") == "Recomendación"


def test_installed_wheel_answers_in_spanish_from_any_directory(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code = ("import expert.paths as p, sys; from expert import advise; "
            "r = advise(model_size_b=7, lang='es'); "
            "print(p.RULES.parent == p.PACKAGE, r.render('text').splitlines()[0])")
    paths = [str(site)] + [p for p in sys.path if p and Path(p).resolve() != ROOT]
    done = subprocess.run([sys.executable, "-c", code], cwd=elsewhere, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join(paths)))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("True Un modelo de 7B con LoRA necesita")


IMPORT_CHECK = """
import collections, logging
root = logging.getLogger()
before = (list(root.handlers), root.level)
import expert.inference.engine
from expert import advise
advise(model_size_b=7)
print(hasattr(collections, "Mapping"), (list(root.handlers), root.level) == before)
"""


def test_experta_imports_without_leaving_aliases_or_logging_handlers() -> None:
    # The vendored experta (expert/_vendor/README.md) needs no collections
    # aliases and no longer calls logging.basicConfig() on the host's root logger.
    done = subprocess.run([sys.executable, "-c", IMPORT_CHECK], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(sys.version_info < (3, 10)), "True"]
    assert "experta" not in done.stderr


def imported_after(code: str, *modules: str) -> list[str]:
    """Which of ``modules`` a fresh Python has imported once ``code`` has run."""
    done = subprocess.run([sys.executable, "-c", f"import sys; {code}; "
                           f"print(' '.join(m for m in {modules!r} if m in sys.modules))"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_help_does_not_import_the_heavy_packages() -> None:
    code = ("from click.testing import CliRunner; from expert.interfaces.cli.main import main; "
            "CliRunner().invoke(main, ['advise', '--help'])")
    assert imported_after(code, "expert._vendor.experta", "jinja2", "babel") == []


def test_the_library_imports_what_an_answer_needs_and_no_more() -> None:
    # Counted, not timed (docs/performance.md, bench/cold_start.py): importing the library reads no template
    # engine and no locale data (jinja2 and babel come with the first text and the first figure), and starts no
    # process machinery (subprocess comes only with --own-gpu auto).
    assert imported_after("import expert.interfaces.api", "jinja2", "babel", "subprocess",
                          "expert.explanation.chart", "expert.explanation.render") == []
    assert imported_after("import expert.interfaces.api; import jinja2", "jinja2") == ["jinja2"]    # it can see one
