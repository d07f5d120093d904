"""The artefacts built with the package (expert/prebuilt.py) give the same
answers as the work they spare, and are not used when they do not match."""

from __future__ import annotations

import json
import pickle
import shutil
import sys
from pathlib import Path

import pytest

from expert import advise, paths, prebuilt
from expert.templating import new_environment

tomllib = prebuilt.toml_parser()

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("prebuilt") / "_prebuilt"
    prebuilt.build(target, rules=ROOT / "rules", templates=paths.TEMPLATES)
    return target


def test_the_install_has_the_artefacts() -> None:
    # pip install (also -e) runs hatch_build.py, which builds them.
    names = {p.relative_to(prebuilt.DIRECTORY).as_posix() for p in prebuilt.files()}
    assert {"toml.json", "templates.json", "cldr.pickle"} <= names
    assert len([n for n in names if n.startswith("templates/tmpl_")]) == len(list(paths.TEMPLATES.glob("*.j2")))


def test_parsed_toml_is_what_tomllib_reads(built: Path) -> None:
    files = sorted((ROOT / "rules").rglob("*.toml"))
    assert files
    for path in files:
        text = path.read_text(encoding="utf-8")
        doc = prebuilt.parsed_toml(text, built)
        assert doc == tomllib.loads(text), path
        assert list(doc) == list(tomllib.loads(text))  # file order is kept (fields are asked in it)


def test_changed_toml_is_parsed_again(built: Path) -> None:
    text = (ROOT / "rules" / "ranking.toml").read_text(encoding="utf-8")
    assert prebuilt.parsed_toml(text, built) is not None
    assert prebuilt.parsed_toml(text + "\n# edited\n", built) is None
    assert prebuilt.parsed_toml(text, built.parent / "nowhere") is None


def test_parsed_toml_is_a_fresh_copy(built: Path) -> None:
    text = (ROOT / "rules" / "ranking.toml").read_text(encoding="utf-8")
    first = prebuilt.parsed_toml(text, built)
    first.clear()
    assert prebuilt.parsed_toml(text, built)


def render_all(env_loader: object) -> dict[str, str]:
    from expert import render

    outputs = {}
    for lang in ("en", "es"):
        env = new_environment(env_loader)
        env.install_gettext_translations(render.Localizer(lang).translations, newstyle=True)
        for size, method, vram in ((7, "qlora", 24), (70, "lora", None), (405, "full", None)):
            result = advise(model_size_b=size, method=method, vram_gb=vram, lang=lang, deadline_h=8)
            for name in ("advise.txt.j2", "advise.md.j2"):
                outputs[f"{lang}/{size}/{name}"] = env.get_template(name).render(
                    r=result, width=80, assumed=render._assumed(result, render.Localizer(lang)))
    return outputs


def test_compiled_templates_render_what_the_sources_render(built: Path) -> None:
    import jinja2

    loader = prebuilt.template_loader(paths.TEMPLATES, built)
    assert loader.modules is not None and set(loader.hashes) == {p.name for p in paths.TEMPLATES.glob("*.j2")}
    compiled = render_all(loader)
    assert compiled == render_all(jinja2.FileSystemLoader(str(paths.TEMPLATES)))
    # and they did come from the compiled modules
    env = new_environment(loader)
    template = env.get_template("advise.txt.j2")
    assert "_jinja2_module_templates_" in template.root_render_func.__module__ or \
        "tmpl_" in template.root_render_func.__code__.co_filename


def test_a_changed_template_is_compiled_from_its_source(built: Path, tmp_path: Path) -> None:
    templates = tmp_path / "templates"
    shutil.copytree(paths.TEMPLATES, templates)
    path = templates / "advise.txt.j2"
    path.write_text("EDITED {{ r.lang }}\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    env = new_environment(prebuilt.template_loader(templates, built))
    env.install_null_translations(newstyle=True)
    result = advise(model_size_b=7, lang="en")
    assert env.get_template("advise.txt.j2").render(r=result, width=80, assumed=[]).startswith("EDITED en")


def test_templates_of_another_jinja2_are_not_used(built: Path, tmp_path: Path) -> None:
    other = tmp_path / "_prebuilt"
    shutil.copytree(built, other)
    manifest = json.loads((other / "templates.json").read_text())
    manifest["jinja2"] = "0.0"
    (other / "templates.json").write_text(json.dumps(manifest))
    prebuilt._json.cache_clear()
    loader = prebuilt.template_loader(paths.TEMPLATES, other)
    assert loader.modules is None and loader.hashes == {}


def test_a_damaged_compiled_template_is_compiled_from_its_source(built: Path, tmp_path: Path) -> None:
    import jinja2

    other = tmp_path / "_prebuilt"
    shutil.copytree(built, other)
    for module in (other / "templates").glob("tmpl_*.py"):
        module.write_text("this is not python (\n")
    env = new_environment(prebuilt.template_loader(paths.TEMPLATES, other))
    env.install_null_translations(newstyle=True)
    result = advise(model_size_b=7, lang="en")
    source_env = new_environment(jinja2.FileSystemLoader(str(paths.TEMPLATES)))
    source_env.install_null_translations(newstyle=True)
    expected = source_env.get_template("advise.txt.j2").render(r=result, width=80, assumed=[])
    assert env.get_template("advise.txt.j2").render(r=result, width=80, assumed=[]) == expected


NUMBERS = [0, 0.04, 0.05, 1, 1.25, 2.5, 7, 12.34, 80, 141, 999.95, 1000, 1234.5, 20_000, 1_234_567.891]


def test_the_cldr_subset_formats_like_babel(built: Path) -> None:
    from babel import Locale
    from babel.lists import format_list
    from babel.numbers import format_decimal
    from babel.units import format_unit

    for lang in prebuilt.LANGUAGES:
        subset, full = prebuilt.locale(lang, built), Locale.parse(lang)
        assert type(subset._Locale__data._data) is prebuilt._Subset
        for value in NUMBERS:
            for pattern in ("#,##0", "#,##0.#", "#,##0.##"):
                assert format_decimal(value, format=pattern, locale=subset) == format_decimal(
                    value, format=pattern, locale=full)
            for unit in prebuilt.UNITS:
                assert format_unit(value, unit, length="short", format="#,##0.#", locale=subset) == format_unit(
                    value, unit, length="short", format="#,##0.#", locale=full)
        for items in (["a"], ["a", "b"], ["a", "b", "c"], list("abcdef")):
            for style in ("standard", "or"):
                assert format_list(items, style=style, locale=subset) == format_list(items, style=style, locale=full)
        # The host's own babel locales are untouched.
        assert not isinstance(Locale.parse(lang)._data._data, prebuilt._Subset)
        # Anything else comes from babel's full data.
        assert subset.territories["ES"] == full.territories["ES"]
        assert subset.decimal_formats[None].pattern == full.decimal_formats[None].pattern


def test_cldr_of_another_babel_is_not_used(built: Path, tmp_path: Path) -> None:
    other = tmp_path / "_prebuilt"
    other.mkdir()
    with open(built / "cldr.pickle", "rb") as fh:
        _, subsets = pickle.load(fh)
    with open(other / "cldr.pickle", "wb") as fh:
        pickle.dump(("0.0", subsets), fh)
    assert not isinstance(prebuilt.locale("es", other)._data._data, prebuilt._Subset)
    (other / "cldr.pickle").write_bytes(b"not a pickle")
    prebuilt._cldr.cache_clear()
    assert not isinstance(prebuilt.locale("es", other)._data._data, prebuilt._Subset)
    assert prebuilt.locale("es", tmp_path / "nowhere").number_symbols["latn"]["decimal"] == ","


def test_answers_do_not_depend_on_the_artefacts(tmp_path: Path) -> None:
    import subprocess

    code = ("import json; from expert import advise; "
            "r = advise(model_size_b=70, method='lora', deadline_h=8, lang='es'); "
            "print(json.dumps(r.to_dict(), sort_keys=True)); print(r.render('text')); print(r.render('markdown')); "
            "import expert.i18n as i, expert.render as e, expert.prebuilt as p; "
            "print(type(i._locale('es')._data._data) is p._Subset, e.environment('es').loader.modules is not None)")
    with_them = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    hidden = prebuilt.DIRECTORY.with_name("_prebuilt_hidden_for_test")
    assert not hidden.exists()
    code_without = ("import expert.prebuilt as p, pathlib; p.DIRECTORY = pathlib.Path(%r); " % str(hidden)) + code
    without = subprocess.run([sys.executable, "-c", code_without], capture_output=True, text=True, check=True).stdout
    assert with_them.endswith("True True\n") and without.endswith("False False\n")
    assert without[:-len("False False\n")] == with_them[:-len("True True\n")]
