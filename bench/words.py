"""The CPU an answer's words cost once the engine has run: the page's explain()
and its HTML, and the JSON and terminal text of an advise(), over varied
profiles, each consultation's engine runs made beforehand and read again
(what the suite's shared runs do, and what a person asking a second WHY NOT
of the same answer pays for again: the explanation, not the rules).

    python bench/words.py [--n 30]

Reports, per profile, the median and the total CPU of: the page with a WHY
NOT asked (the first card ruled out or ranked below the first), the JSON
and the terminal text of advise(). Compare two versions side by side, each
pinned to one core (`taskset -c 0` / `-c 1`), each from its own worktree
(docs/performance.md).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import profiles
from expert import advise
from expert.inference import engine
from expert.interfaces.web import consult
from expert.interfaces.web import form as reader
from expert.interfaces.web.app import render_page
from expert.knowledge.bases import shipped_catalogs

KEYS = {"model_size_b": "model-size", "method": "method", "budget": "budget", "deadline_h": "deadline",
        "vram_gb": "vram", "dataset_examples": "dataset", "purpose": "purpose", "rocm_ok": "rocm-ok",
        "interruptible": "interruptible"}


def runs_kept() -> None:
    """engine.infer answering the same facts on the same knowledge base with the run it made first."""
    real, kept = engine.infer, {}

    def infer(kb: Any, profile: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        key = (id(kb), repr(sorted(profile.items())), repr(args), repr(sorted(kwargs.items())))
        if key not in kept:
            kept[key] = (kb, real(kb, profile, *args, **kwargs))
        return kept[key][1]

    engine.infer = infer


def page(pairs: list[tuple[str, str]], lang: str) -> str:
    form = reader.read(pairs, lang, shipped_catalogs(), reader.PAGE_KEYS)
    return render_page(form, consult.page(form), lang)


def cpu(work: Callable[..., Any], *args: Any, **kwargs: Any) -> float:
    started = time.process_time()
    work(*args, **kwargs)
    return time.process_time() - started


def rendered(fmt: str, profile: dict[str, Any], lang: str) -> str:
    return advise(**profile, lang=lang).render(fmt)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=30, help="profiles (default 30)")
    args = parser.parse_args()
    runs_kept()
    times: dict[str, list[float]] = {"page with a WHY NOT": [], "advise() JSON": [], "advise() text": []}
    for profile in profiles(args.n, seed=11):
        lang = profile.pop("lang")
        pairs = [(KEYS[k], "yes" if v is True else "no" if v is False else str(v))
                 for k, v in profile.items() if v is not None]
        result = advise(**profile, lang=lang)
        others = [r.gpu for r in result.recommendations[1:2]] + [r.gpu for r in result.rejected[:1]]
        asked = pairs + [("why-not", others[0])] if others else pairs
        page(asked, lang)                                    # the engine's runs made, then read again
        times["page with a WHY NOT"].append(cpu(page, asked, lang))
        times["advise() JSON"].append(cpu(rendered, "json", profile, lang))
        times["advise() text"].append(cpu(rendered, "text", profile, lang))
    print(f"{args.n} profiles (bench.profiles, seed 11), the engine's runs made beforehand; CPU time")
    for name, values in times.items():
        print(f"  {name:<20} median {statistics.median(values) * 1000:7.1f} ms   total {sum(values):6.2f} s")


if __name__ == "__main__":
    main()
