"""Table of a CompileQA-Bench run (docs/agent-eval.md): per case and arm, the blind judge's Diagnosis,
Actionability and Fabrication (rubric v3) and the answerer's tool calls; totals per arm.

    python3 evals/compileqa/summarize.py evals/compileqa/run-2026-11-26
"""
import json
import pathlib
import sys

import yaml


def main(run):
    run = pathlib.Path(run)
    key = json.loads((run / "judge" / "key.json").read_text())
    calls = yaml.safe_load((run / "calls.yaml").read_text())
    rows, tot = [], {a: {"d": 0, "a": 0, "f": 0, "calls": 0, "n": 0} for a in ("plugin", "bare")}
    for cid in sorted(key, key=lambda c: (c.split("-")[0], int(c.split("-")[1]))):
        j = run / "judge" / f"{cid}.json"
        if not j.exists():
            continue
        scores = json.loads(j.read_text())["answers"]
        arm_of = {label: arm for label, arm in key[cid].items()}
        by_arm = {arm_of[label]: s for label, s in scores.items()}
        cells = []
        for arm in ("plugin", "bare"):
            s, t = by_arm[arm], tot[arm]
            t["d"] += s["diagnosis"]
            t["a"] += s["actionability"]
            t["f"] += bool(s["fabrication"])
            t["calls"] += calls[arm][cid]
            t["n"] += 1
            cells.append(f"{s['diagnosis']}/{s['actionability']}/{'F' if s['fabrication'] else '-'} ({calls[arm][cid]})")
        rows.append(f"| {cid} | {cells[0]} | {cells[1]} |")
    print("| case | plugin D/A/F (calls) | bare D/A/F (calls) |\n|---|---|---|")
    print("\n".join(rows))
    for arm, t in tot.items():
        print(f"{arm}: {t['n']} cases, diagnosis {t['d']}, actionability {t['a']} (sum {t['d'] + t['a']} of "
              f"{6 * t['n']}), fabrications {t['f']}, tool calls {t['calls']}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python3 evals/compileqa/summarize.py RUN_DIR")
    main(sys.argv[1])
