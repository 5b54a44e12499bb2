"""By-design differences between compiled and eager (knowledge/semantics.yaml, cdlib/semantics.py).
Every class has a real program in tests/programs/; the real CLI `triage` names the class, shows
PyTorch's own message first and in full, the fix and how to verify it, and never sends to bisect."""
import json
import os
import re
import sys

import pytest
from conftest import ROOT, program, resolve_dotted, run_cli

from cdlib import knowledge

CLASSES = knowledge.load("semantics")["classes"]
CPU = [c for c in CLASSES if c["device"] == "cpu"]
GPU = [c for c in CLASSES if c["device"] == "cuda"]
SIGNALS = {"error", "output", "recompile", "guards_mixed", "guards_none", "dynamo_graph", "inductor_code",
           "source", "source_traced", "failure"}
# the eager check still calls through the torch.compile(module) wrapper, so it fails the same way: the
# verdict says so and the class (seen from PyTorch's warning) still gives the fix
VERDICT = {"hooks_changed_after_compile": None, "global_hooks_extra_call": "fails_eager_too",
           "compiled_state_dict_prefix": None}
API_RE = re.compile(r"\btorch(?:\.[A-Za-z_]\w*)+")


def _one(s):
    return " ".join(s.split())


def test_classes_well_formed():
    ids = [c["id"] for c in CLASSES]
    assert len(ids) >= 10 and len(ids) == len(set(ids))
    triage_ids = {r["id"] for r in knowledge.triage_rows()}
    for c in CLASSES:
        assert c["id"] not in triage_ids, f"{c['id']}: also a triage row id"
        assert c["title"] and c["why"] and c["fix"] and c["verify"] and c["device"] in ("cpu", "cuda")
        assert len(_one(c["why"])) < 420, f"{c['id']}: why is one line"
        assert os.path.isfile(program(c["program"])), c["program"]
        for alt in c["detect"]:
            assert set(alt) <= SIGNALS, alt
            for k, v in alt.items():
                if k != "failure":
                    re.compile(v)
        if c.get("pytorch"):
            re.compile(c["pytorch"])


def test_named_torch_apis_exist():
    """Every config or API a class (or a recompile kind) names exists in the installed torch."""
    missing = []
    for name in ("semantics", "recompiles"):
        with open(os.path.join(ROOT, "knowledge", f"{name}.yaml"), encoding="utf-8") as f:
            for api in sorted(set(API_RE.findall(f.read()))):
                try:
                    resolve_dotted(api)
                except (ImportError, AttributeError):
                    missing.append(api)
    assert not missing, f"not in the installed torch: {missing}"


def _triage(name, tmp_path):
    run_dir = tmp_path / "r"
    p = run_cli("triage", "--json", "--no-tlparse", "--out", run_dir, "--", sys.executable, program(name),
                check=0, timeout=900)
    with open(run_dir / "report.md", encoding="utf-8") as f:
        return json.loads(p.stdout), f.read()


def _check(c, rep, md):
    found = {f["id"]: f for f in rep["semantics"]}
    assert c["id"] in found, (rep["semantics"], rep["errors"])
    f = found[c["id"]]
    sec = md.split("## Compiled differs from eager by design", 1)[1].split("\n## ", 1)[0]
    assert _one(c["fix"]) in sec and _one(c["verify"]) in sec
    if c.get("pytorch"):
        # shown first, in full: the whole sentences of PyTorch's message, none clipped
        assert f["pytorch"] and sec.split("\n")[2] == f"   PyTorch: {f['pytorch']}" and not f["pytorch"].endswith("…")
    nxt = md.split("\n## Next", 1)[1]
    assert nxt.lstrip().startswith(f"1. [{c['id']}] {_one(c['fix'])}"), nxt
    assert not re.search(r"→ (bisect|bug-basher) skill|\b(bisect|minify|accuracy) (--from|--) ", nxt), nxt
    assert not any(re.search(r" (bisect|minify|accuracy) ", s["command"] or "") for s in rep["next_steps"])
    want = VERDICT.get(c["id"], "compile_only")
    if want is None:      # a silent difference: the program exits 0
        assert rep["exit_code"] == 0 and not rep["errors"] and rep["status"] == "issues"
        return
    assert rep["verdict"]["kind"] == want and f["explains_error"]
    if want == "compile_only":
        e = rep["errors"][0]
        assert (e["category"], e["side"], e["next_command"]) == (c["id"], "semantics", None)


@pytest.mark.slow
@pytest.mark.parametrize("c", CPU, ids=[c["id"] for c in CPU])
def test_triage_names_the_class(c, tmp_path):
    rep, md = _triage(c["program"], tmp_path)
    _check(c, rep, md)


@pytest.mark.gpu
@pytest.mark.parametrize("c", GPU, ids=[c["id"] for c in GPU])
def test_triage_names_the_gpu_class(c, tmp_path):
    rep, md = _triage(c["program"], tmp_path)
    _check(c, rep, md)


def test_state_dict_before_compiling_is_the_modules_own():
    """`model.state_dict()` above `model = torch.compile(model)` is the module's own (no "_orig_mod."
    keys): not the checkpoint class (a CompileQA answer's triage said it was); below it, it is."""
    from types import SimpleNamespace
    from cdlib import semantics
    pat = _one(next(c for c in semantics.classes() if c["id"] == "compiled_state_dict_prefix")["detect"][0]["source"])
    before = SimpleNamespace(files=[program("sem_state_dict_before_compile.py")], traced_lines=[])
    assert semantics._signal("source", pat, before, None) is None
    after = SimpleNamespace(files=[program("sem_state_dict_prefix.py")], traced_lines=[])
    assert semantics._signal("source", pat, after, None).startswith("sem_state_dict_prefix.py:19 ")


def test_hook_recompiles_have_their_own_kind():
    """A recompile on the hooks of a module is not 'a container changed size'."""
    k = knowledge.guard_kind("len(G['model']._modules['0']._forward_hooks) != 1")
    assert k["kind"] == "module_hooks" and "skip_nnmodule_hook_guards" in k["fix"]
    assert knowledge.guard_kind("len(L['xs']) == 2")["kind"] == "container_length"
