"""knowledge/*.yaml: well-formed, consistent with the installed torch and the skills, rendered pages fresh."""
import os
import re
import subprocess
import sys

from conftest import ROOT

from cdlib import knowledge


def test_triage_rows_well_formed():
    skills = set(os.listdir(os.path.join(ROOT, "skills")))
    ids = [r["id"] for r in knowledge.triage_rows()]
    assert len(ids) == len(set(ids)) and ids[-1] == "user_error"
    required = {"graph_break_fullgraph", "backend_compiler_failed", "inductor_compile_error", "triton_compile_error",
                "compiled_runtime_error", "recompile_limit", "recompile_error", "accuracy_mismatch",
                "dynamo_internal_error", "export_error", "aoti_error", "segfault", "cuda_illegal_memory_access",
                "missing_cxx_compiler", "timeout"}
    assert required <= set(ids)
    for r in knowledge.triage_rows():
        assert r["title"] and r["advice"] and r.get("side", "compiler") in ("user", "custom_op", "either", "compiler")
        # user-side and custom-op rows send the user to their own line, not to another command
        assert r["command"].startswith("{cli} ") if "command" in r else r["side"] in ("user", "custom_op")
        if r.get("side") in ("user", "custom_op"):
            assert "compiler bug" not in r["title"].lower()
        assert r["skill"] in skills, f"{r['id']}: skill {r['skill']} does not exist"
        for p in r.get("patterns") or []:
            re.compile(p)


def test_graph_break_recipes_use_real_registry_ids():
    reg = knowledge.gb_registry()
    assert len(reg) > 200
    data = knowledge.load("graph_breaks")
    for gid, r in data["recipes"].items():
        assert gid in reg, f"{gid} is not in torch's graph-break registry"
        assert r["category"] and r["fix"]
    for fb in data["fallbacks"]:
        re.compile(fb["pattern"])
        assert "use" not in fb or fb["use"] in data["recipes"]
    assert data["fallbacks"][-1]["pattern"] == ".*"


def test_guard_kinds():
    cases = {"tensor 'x' size mismatch at index 0. expected 2, actual 3": "shape",
             "tensor 'x' dtype mismatch. expected Float, actual Double": "dtype",
             "GLOBAL_STATE changed: grad_mode": "grad_mode", "self.use_relu == True": "module_attribute",
             "factor == 0.5": "python_float", "n == 3": "python_int",
             "tensor 'x' requires_grad mismatch. expected requires_grad=1": "requires_grad",
             "___check_obj_id(L['fn'], 1403)": "object_identity", "len(L['xs']) == 2": "container_length"}
    for guard, kind in cases.items():
        assert knowledge.guard_kind(guard)["kind"] == kind, guard


def test_rendered_pages_are_fresh():
    p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "render_knowledge.py"), "--check"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout
