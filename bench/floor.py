"""What the inference engine itself costs for this knowledge base: the facts
and firings of real consultations replayed through the same Rete network with
actions that do nothing but declare what the real action declared.

    python bench/floor.py [--n 300]

For each of N varied profiles (bench.py's), in turn:
1. ``advise()`` as a user calls it, timed (CPU time);
2. the consultation's inference (``engine.infer``), timed;
3. the same inference once more, recording what each firing declared and
   retracted, in firing order (not timed);
4. that record replayed: a fresh engine of the same rules (its own Rete
   network, built once) gets the same profile and cards, and each firing only
   declares and retracts what step 3 recorded, so experta matches the same
   facts, evaluates the same conditions and fires as many rules, ending with
   the same working memory; ``run()`` timed.

Step 4 is the floor under any change to the rules' actions, the result or the
text: what experta's propagation, agenda and facts cost for this rule base's
facts and firings. It prints the medians, the floor's share of a
consultation, and how many firings and facts each consultation had (the
replay checks it fired as many rules and declared as many facts).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import Counter
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench import profiles


def engines(kb: Any) -> tuple[Any, Any]:
    """A recording and a replaying engine of ``kb``'s rules."""
    from expert.inference import engine

    built = engine.engine_class(kb)

    class Recorder(built):  # type: ignore[misc,valid-type]
        script: list[list[tuple[str, Any]]]

        def fire(self, rule: Any, bound: dict[str, Any]) -> None:
            self.script.append([])
            super().fire(rule, bound)

        def declare(self, *facts: Any) -> Any:
            if self.running:
                self.script[-1].append(("declare", [(type(f), {k: v for k, v in f.items() if k != "__factid__"})
                                                    for f in facts]))
            return super().declare(*facts)

        def retract(self, fact: Any) -> Any:
            if self.running:
                self.script[-1].append(("retract", fact["__factid__"]))
            return super().retract(fact)

    class Replayer(built):  # type: ignore[misc,valid-type]
        script: list[list[tuple[str, Any]]]

        def fire(self, rule: Any, bound: dict[str, Any]) -> None:
            for what, arg in self.script.pop(0):
                if what == "declare":
                    self.declare(*(cls(**values) for cls, values in arg))
                else:
                    self.retract(self.facts[arg])

    return Recorder(), Replayer()


def replay(recorder: Any, replayer: Any, kb: Any, profile: dict[str, Any]) -> tuple[Any, Any, float]:
    """One consultation of ``profile`` recorded, then replayed: the two
    runs and the CPU time of the replay's ``run()``."""
    from expert.inference import engine

    recorder.script = []
    recorded = engine.begin(recorder, kb, profile, "checked")
    recorder.run()
    replayer.script = [list(ops) for ops in recorder.script]
    replayed = engine.begin(replayer, kb, profile, "checked")
    began = time.process_time()
    replayer.run()
    return recorded, replayed, time.process_time() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=300, help="profiles (default 300)")
    args = parser.parse_args()

    from expert import advise
    from expert.i18n import Localizer
    from expert.inference import engine
    from expert.input.profile import build
    from expert.interfaces.api import knowledge_base
    from expert.knowledge.prices import for_profile

    cases = profiles(args.n, seed=3)
    base = knowledge_base()
    recorder, replayer = engines(base)
    times: dict[str, list[float]] = {"advise": [], "infer": [], "floor": []}
    firings, facts = [], []
    kinds: Counter[str] = Counter()
    for i, case in enumerate(cases):
        lang = case.pop("lang")
        given, _ = build(base, dict(case), Localizer(lang), None)
        kb = for_profile(base, given)
        began = time.process_time()
        advise(lang=lang, **case)
        times["advise"].append(time.process_time() - began)
        began = time.process_time()
        engine.infer(kb, given, "checked")
        times["infer"].append(time.process_time() - began)
        recorded, replayed, elapsed = replay(recorder, replayer, kb, given)
        if replayer.script or replayed.declared != recorded.declared:
            raise SystemExit(f"profile {i}: the replay did not fire and declare as the consultation did")
        if i >= 20:     # the first 20: warm-up (catalogs and caches loaded)
            times["floor"].append(elapsed)
            firings.append(len(recorder.script))
            facts.append(recorded.declared)
            kinds.update(type(fact).__name__ for fact in recorder.facts.values())
    for label in ("advise", "infer"):
        del times[label][:20]
    median = {label: statistics.median(values) * 1e3 for label, values in times.items()}
    print(f"{len(times['floor'])} varied profiles (after 20 of warm-up), CPU time, medians:")
    print(f"  advise():                                   {median['advise']:6.1f} ms")
    print(f"  its inference (engine.infer):               {median['infer']:6.1f} ms")
    print(f"  experta alone, the same facts and firings:  {median['floor']:6.1f} ms "
          f"({median['floor'] / median['advise']:.0%} of advise())")
    print(f"  per consultation: {statistics.mean(firings):.1f} firings, {statistics.mean(facts):.1f} facts declared")
    print("  facts in working memory at the end, by kind: " + ", ".join(
        f"{kind} {count / len(facts):.1f}" for kind, count in kinds.most_common()))
    began = time.process_time()
    total = 0
    for step in range(10_000_000):
        total += step
    print(f"reference: a 10,000,000-step Python loop took {time.process_time() - began:.2f} s")


if __name__ == "__main__":
    main()
