#!/usr/bin/env python3
"""Render knowledge/*.yaml into the skills' reference pages, so skills quote the one source of
truth instead of restating it. tests/test_knowledge.py fails when a page is out of date.

    python3 scripts/render_knowledge.py          # rewrite the pages
    python3 scripts/render_knowledge.py --check  # exit 1 if a page is stale
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdlib import ROOT
from cdlib.decide import knowledge  # noqa: E402

HEADER = "<!-- Generated from knowledge/{src} by scripts/render_knowledge.py; edit the YAML, not this page. -->\n"
CLI = 'python3 "${CLAUDE_PLUGIN_ROOT}/scripts/compile_debug.py"'


def _one(s):
    return " ".join(str(s or "").split())


def triage_table():
    rows = knowledge.triage_rows()
    out = [HEADER.format(src="triage.yaml"), "# Error-triage table\n",
           "First matching row wins (order matters). `triage` and `triage --from-text` apply it; "
           "every error in a report carries its row id.\n",
           "| id | what | typical patterns | skill | next command |", "|---|---|---|---|---|"]
    for r in rows:
        pats = ", ".join(f"`{p}`" for p in (r.get("patterns") or [])[:3]).replace("|", "\\|")
        if r.get("signals"):
            pats += (", " if pats else "") + "signal " + "/".join(r["signals"])
        cmd = (r.get("command") or "").replace("{cli}", "compile_debug.py").replace("{target}", "<cmd>")
        cmd = f"`{cmd}`" if cmd else ("none: fix the program at the line shown" if r.get("side", "compiler") != "compiler"
                                      else "none: what to do is below")
        out.append(f"| `{r['id']}` | {r['title']} | {pats} | {r.get('skill')} | {cmd} |")
    out.append("\n## What to do, per row\n")
    for r in rows:
        out.append(f"- **{r['id']}**: {_one(r.get('advice'))}")
        for k in r.get("known") or []:
            out.append(f"  - torch's message `{k['pattern']}`: {_one(k['fix'])}")
    return "\n".join(out) + "\n"


def graph_break_recipes():
    data = knowledge.load("graph_breaks")
    out = [HEADER.format(src="graph_breaks.yaml"), "# Graph-break fix recipes (by registry id)\n",
           "Ids are torch's graph-break registry ids (torch/_dynamo/graph_break_registry.json), stable "
           "across versions; the triage report prints the id of every break.\n"]
    for gid, r in data["recipes"].items():
        out.append(f"## {gid}: {knowledge.gb_type_of(gid) or r.get('gb_type') or r['category']}\n")
        out.append(f"Class: {r['category']}. Fix: {_one(r['fix'])}")
        if r.get("code"):
            out.append("\n```python\n" + r["code"].rstrip() + "\n```")
        if r.get("escape"):
            out.append(f"\nEscape hatch: {r['escape']}")
        for v in r.get("variants") or []:   # the recipe for a break whose text matches `when`
            out.append(f"\nWhen the break's text matches `{v['when']}`: {_one(v['fix'])}")
        out.append("")
    out.append("## Recipes by construct (chosen from how the break line uses the value)\n")
    for c in data.get("constructs") or []:
        out.append(f"### {c['use']}: {c['category']}\n")
        out.append(f"Replaces the recipe of {', '.join(a for a in c['applies_to'] if a.startswith('GB'))}. "
                   f"Fix: {_one(c['fix'])}")
        if c.get("code"):
            out.append("\n```python\n" + c["code"].rstrip() + "\n```")
        out.append("")
    out.append("## Library settings that avoid a breaking library path\n")
    for ls in data.get("library_settings") or []:
        out.append(f"- **{ls['library']}** (break text matches `{ls['pattern']}`): {_one(ls['setting'])}")
    out.append("\n## Distributed wrappers whose own code breaks the graph (DDP, FSDP2)\n")
    out.append("triage labels a break whose chain passes through these files as the wrapper's, not yours, "
               "and keeps it out of the next steps.\n")
    for w in data.get("wrappers") or []:
        out.append(f"### {w['name']}: {w['category']} (frames in {', '.join(w['paths'])})\n")
        out.append(f"{_one(w['expected'])}\n\nSetup: {_one(w['setup'])}")
        if w.get("splits"):
            out.append(f"\nGraph splits: {_one(w['splits'])}")
        out.append("")
    return "\n".join(out) + "\n"


def recompile_fixes():
    data = knowledge.load("recompiles")
    out = [HEADER.format(src="recompiles.yaml"), "# Recompile kinds and fixes\n",
           "triage classifies each guard failure with the first kind whose pattern matches the guard text.\n",
           "| kind | what changed | fix |", "|---|---|---|"]
    for k in data["kinds"]:
        out.append(f"| `{k['kind']}` | {k['title']} | {_one(k['fix'])} |")
    out.append(f"\n**Recompile limit hit**: {_one(data['limit_fix'])}\n")
    out.append("## Library settings that keep a library's inputs stable\n")
    for ls in data.get("library_settings") or []:
        out.append(f"- **{ls['library']}** (`{ls['kind']}` guard matches `{ls['pattern']}`): {_one(ls['setting'])}")
    return "\n".join(out) + "\n"


def semantic_differences():
    data = knowledge.load("semantics")
    out = [HEADER.format(src="semantics.yaml"), "# Compiled differs from eager by design\n",
           "Classes of programs that fail or behave differently only when compiled although torch.compile "
           "works as designed: not compiler bugs, so no bisect. `triage` tests each on every run (from the "
           "error text, PyTorch's warnings, the trace and the program's source) and reports the class with "
           "PyTorch's own message first, the fix and how to verify it.\n",
           "| id | what | seen from | device |", "|---|---|---|---|"]
    for c in data["classes"]:
        seen = " or ".join(dict.fromkeys("+".join(k for k in alt) for alt in c["detect"]))
        out.append(f"| `{c['id']}` | {c['title']} | {seen} | {c.get('device', 'cpu')} |")
    out.append("")
    for c in data["classes"]:
        out.append(f"## {c['id']}\n")
        out.append(f"{c['title']}.\n")
        out.append(f"- Why: {_one(c['why'])}")
        out.append(f"- Fix: {_one(c['fix'])}")
        out.append(f"- Verify: {_one(c['verify'])}")
        out.append(f"- Example: tests/programs/{c['program']}\n")
    return "\n".join(out)


PAGES = {
    "skills/overview/references/triage-table.md": triage_table,
    "skills/trace-dynamo/references/graph-break-recipes.md": graph_break_recipes,
    "skills/trace-dynamo/references/recompile-fixes.md": recompile_fixes,
    "skills/overview/references/semantic-differences.md": semantic_differences,
}


def main(argv):
    stale = []
    for rel, fn in PAGES.items():
        path = os.path.join(ROOT, rel)
        text = fn()
        old = open(path).read() if os.path.exists(path) else None
        if old != text:
            stale.append(rel)
            if "--check" not in argv:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as f:
                    f.write(text)
    if "--check" in argv and stale:
        print("stale: " + ", ".join(stale) + " (run python3 scripts/render_knowledge.py)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
