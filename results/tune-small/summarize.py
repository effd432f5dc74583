#!/usr/bin/env python3
"""Summarizes results*.tsv (run.sh) and the new tune's --json choices (in
$WORK) into summary.md and choices.tsv.  usage: summarize.py [WORK]"""
import csv, json, os, sys

here = os.path.dirname(os.path.abspath(__file__))
work = sys.argv[1] if len(sys.argv) > 1 else "/tmp/tune-small"
runs = {}
# results-new01.tsv (the branch's final build, pairs 0 and 1) is read last:
# its tune-new rows replace results.tsv's (an earlier build).
files = [os.path.join(here, f) for f in ("results.tsv", "results-pairs23.tsv", "results-new01.tsv")]
for f in [f for f in files if os.path.exists(f)]:
    for r in csv.DictReader(open(f), delimiter="\t"):
        runs.setdefault((r["set"], int(r["pair"])), {})[r["method"]] = r
methods = ["fit", "tune-main", "tune-new"]
lines = ["| set | pair | train / test | fit acc | tune (main) acc | tune (branch) acc | fit log-loss | main log-loss | branch log-loss | branch kept |",
         "|---|---|---|---|---|---|---|---|---|---|"]
ch_rows = [["set", "pair", "design", "configurations", "trial_cap", "kept", "best_trial", "best_round",
            "lowest_trial", "margin_over_defaults", "z", "se"]]
correct = {m: 0 for m in methods}
tests = 0
vs = {m: [0, 0, 0] for m in methods[1:]}  # below fit by >1 row, within 1 row, above by >1 row
for (s, k), r in sorted(runs.items()):
    if any(m not in r for m in methods):
        continue
    n = int(r["fit"]["test"])
    tests += n
    right = {m: round(float(r[m]["accuracy"]) * n) for m in methods}
    for m in methods:
        correct[m] += right[m]
    for m in methods[1:]:
        d = right[m] - right["fit"]
        vs[m][0 if d < -1 else 2 if d > 1 else 1] += 1
    kept = ""
    jf = os.path.join(work, f"{s}-{k}-tune-new.json")
    if os.path.exists(jf):
        j = json.load(open(jf))
        c = j["choice"]
        kept = c["kept"]
        ch_rows.append([s, str(k), j["design"], str(j["configurations"]), str(j.get("trial_cap", 0)), c["kept"],
                        str(j["best"]["trial"]), str(j["best_round"]), str(c["lowest_loss_trial"]),
                        f"{c['margin_over_defaults']:.4g}", f"{c['margin_z']:.3g}", f"{c['margin_se']:.3g}"])
    lines.append(f"| {s} | {k} | {r['fit']['train']} / {n} | " +
                 " | ".join(f"{100 * float(r[m]['accuracy']):.2f}" for m in methods) + " | " +
                 " | ".join(f"{float(r[m]['log_loss']):.3f}" for m in methods) + f" | {kept} |")
lines.append("")
lines.append(f"Test rows classified correctly, over all {tests} test rows: " +
             ", ".join(f"{m} {correct[m]}" for m in methods) + ".")
for m in methods[1:]:
    b, w, a = vs[m]
    lines.append(f"{m} against fit, per run: {b} below by more than one test row, {w} within one row, {a} above by more than one row.")
open(os.path.join(here, "summary.md"), "w").write("\n".join(lines) + "\n")
with open(os.path.join(here, "choices.tsv"), "w") as g:
    for row in ch_rows:
        g.write("\t".join(row) + "\n")
print("\n".join(lines))
