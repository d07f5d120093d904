"""Print the calibration table of the time model (rules/timing.toml
[calibration]) as markdown: each anchor of the guide, published measurement
and speed ratio, with what the model predicts and whether it is within
tolerance. docs/knowledge-base.md holds its output between the markers

    <!-- calibration:start --> ... <!-- calibration:end -->

    python scripts/calibration.py --write    # refresh the docs
    python scripts/calibration.py            # print it

tests/test_time_and_money.py fails when the docs are stale.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "knowledge-base.md"


def table() -> str:
    sys.path.insert(0, str(ROOT))
    from expert.inference.calibration import calibration, calibration_summary
    from expert.interfaces.api import knowledge_base

    rows = calibration(knowledge_base(None, ["current"]))
    lines = ["| what | stack | unit | predicted | published | predicted time ÷ published | within tolerance | source |",
             "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        low, high = row["published"]
        published = f"{low:,.2f}" if low == high else f"{low:,.2f}–{high:,.2f}"
        source = row["source"].replace("|", "\\|")
        ratio = f"{row['ratio']:.2f}" if row["ratio"] is not None else "—"
        holds = "yes" if row["holds"] else ("shown, not held" if row["kind"] == "anchor" else "NO")
        lines.append(f"| {row['id']} ({row['kind']}) | {row['stack']} | {row['unit']} | {row['predicted']:,.2f} | "
                     f"{published} | {ratio} | {holds} | {source} |")
    lines += ["", "| stack | measurements | geometric mean of predicted ÷ published time | spread (geometric SD) | "
              "within ×/÷1.5 |", "|---|---|---|---|---|"]
    for stack, figures in calibration_summary(rows).items():
        lines.append(f"| {stack} | {figures['count']} | {figures['geometric_mean']:.2f} | {figures['spread']:.2f} | "
                     f"{figures['within'] * 100:.0f} % |")
    return "\n".join(lines) + "\n"


def main() -> None:
    # beside this script; imported here, as the tests load table() alone
    from docs_table import print_or_write

    print_or_write(table(), DOC, "calibration")


if __name__ == "__main__":
    main()
