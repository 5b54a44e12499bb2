"""Every graph-break id of the installed torch gets a fix from triage, and every id our knowledge
names exists. The break text is built from torch's own registry entry
(torch/_dynamo/graph_break_registry.json) in the format torch prints it (see the recorded
tests/fixtures/torch-2.14/*/trace.log payloads)."""
import re

from cdlib.decide import analyze_dynamo, knowledge

REGISTRY = knowledge.gb_registry()
URL = "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb{:04d}.html"


def hints(entry):
    """The registry stores one hint as several fragments when its source concatenates strings
    (a fragment then ends with a space): join those, as torch prints them."""
    out, cur = [], ""
    for h in entry.get("Hints") or []:
        cur += h
        if not h.endswith(" "):
            out.append(cur.strip())
            cur = ""
    return [h for h in out + [cur.strip()] if h]


def payload(gid, entry):
    return (f"Graph break in user code at /home/u/prog.py:3\nGraph Break Reason: {entry['Gb_type']}\n"
            f"  Explanation: {entry.get('Explanation') or ''}\n" + "".join(f"  Hint: {h}\n" for h in hints(entry))
            + f"\n  Developer debug context: {entry.get('Context') or ''}\n\n"
            f" For more details about this graph break, please visit: {URL.format(int(gid[2:]))}\n")


def test_registry_is_installed():
    assert len(REGISTRY) > 500


def check(gid):
    entry = REGISTRY[gid][0]
    gb = analyze_dynamo.parse_graph_break(payload(gid, entry))
    assert gb["gb_ids"] == [gid] and gb["gb_type"] == entry["Gb_type"].strip()
    b = analyze_dynamo.make_break(gb, gid)
    kept = [h for h in hints(entry) if not h.startswith(analyze_dynamo.BOILERPLATE_HINTS)]
    assert b.hints == kept, "torch's hints must be kept verbatim (only the report-an-issue boilerplate is dropped)"
    assert [w["text"] for w in b.workarounds if w["source"] == "pytorch"] == b.hints      # shown first
    assert (b.fix.get("fix") or "").strip() or b.hints, "no fix and no hint"
    if "recipe_id" not in b.fix:       # no curated recipe: at least torch's page for the id
        assert b.fix["url"].endswith(f"gb{gid[2:]}.html".lower())


def test_every_registry_id_gets_a_fix():
    bad = {}
    for gid in sorted(REGISTRY):
        try:
            check(gid)
        except AssertionError as e:
            bad[gid] = str(e).splitlines()[0]
    assert not bad, bad


def test_every_id_in_knowledge_exists():
    data = knowledge.load("graph_breaks")
    named = set(data["recipes"]) | {f["use"] for f in data["fallbacks"] if "use" in f}
    named |= {a for c in data["constructs"] for a in c["applies_to"] if re.fullmatch(r"GB\d{4}", a)}
    missing = sorted(g for g in named if g not in REGISTRY
                     and not knowledge.newer_than_installed(data["recipes"].get(g, {}).get("since")))
    assert not missing, f"ids in knowledge/graph_breaks.yaml that torch's registry lacks: {missing}"
