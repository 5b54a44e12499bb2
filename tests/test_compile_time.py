"""compile-time: per-phase compile time, cold vs warm caches, a cache bypass with PyTorch's reason,
portable cache artifacts across processes, regional compilation of repeated blocks, recorded traces.
Real torch.compile (Inductor, C++ backend) on small programs; assertions on relations, not times."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

from conftest import program, run_cli, fresh_cache


def ct_summary(trace_dir):
    from cdlib.decide import compile_time as ct
    return ct.summarize(trace_dir)

# the whole measurement (cold, warm, portable, regional) runs once for the module: 4 runs of a small model
BLOCKS = [program("ct_blocks.py"), "4"]


def sug_fix(res, sid):
    return next(g["fix"] for g in res["suggestions"] if g["id"] == sid)


@pytest.fixture(scope="module")
def blocks_all(tmp_path_factory):
    out = tmp_path_factory.mktemp("ct") / "run"
    p = run_cli("compile-time", "--all", "--json", "--no-tlparse", "--out", out, "--", "python", *BLOCKS,
                check=0, timeout=1500)
    return json.loads(p.stdout), out


@pytest.mark.slow
def test_cold_warm_portable_regional(blocks_all):
    res, out = blocks_all
    runs, s = res["runs"], res["summary"]
    assert set(runs) == {"cold", "warm", "portable", "regional"}
    assert all(r["exit_code"] == 0 for r in runs.values())
    # cold: everything missed and was written into the private cache dir inside the run dir
    assert runs["cold"]["caches"]["fx_graph_cache"]["miss"] >= 1
    assert runs["cold"]["cache_dir"].startswith(str(out))
    assert runs["cold"]["cache_files"].get("fxgraph", 0) >= 1
    # warm: same dir -> hits, less compile time
    assert runs["warm"]["caches"]["fx_graph_cache"]["hit"] >= 1
    assert runs["warm"]["caches"]["fx_graph_cache"].get("miss", 0) == 0
    assert runs["warm"]["compile_s"] < runs["cold"]["compile_s"]
    assert res["cold_vs_warm"]["compile_saving_s"] > 0
    # portable: saved at exit of the cold run, loaded into a fresh process with an EMPTY cache dir
    assert runs["cold"]["artifacts_saved"]["saved"] and runs["cold"]["artifacts_saved"]["bytes"] > 0
    loaded = runs["portable"]["artifacts_loaded"]
    assert loaded["loaded"] and sum(loaded["artifacts"].values()) >= 1
    assert runs["portable"]["cache_dir"] != runs["cold"]["cache_dir"]
    assert runs["portable"]["caches"]["fx_graph_cache"]["hit"] >= 1
    assert runs["portable"]["caches"]["aotautograd_cache"]["hit"] >= 1
    # the loaded entries skip Inductor (no lowering/codegen); on CPU the C++ kernels are compiled again
    port = json.load(open(os.path.join(runs["portable"]["trace_dir"], "..", "..", "report.json")))
    phases = {tag: {p["phase"] for p in ct_summary(runs[tag]["trace_dir"])["phases"]} for tag in ("cold", "portable")}
    assert {"lowering", "codegen"} <= phases["cold"] and not {"lowering", "codegen"} & phases["portable"]
    assert "kernel_compile" in phases["portable"]   # CPU: the C++ .so files are not in the artifacts
    assert "C++ kernels (.so) do not" in sug_fix(res, "portable")
    assert port["runs"]["portable"]["compile_s"] == runs["portable"]["compile_s"]
    # regional: the repeated block was found in the whole-model graph and compiled once per layer class
    assert s["repeated_blocks"][0]["container"] == "layers" and s["repeated_blocks"][0]["count"] == 4
    applied = runs["regional"]["applied"]
    assert applied and applied[0]["container"] == "layers" and applied[0]["layer_class"] == "Block"
    whole_ops = max(f["ops"] or 0 for f in s["frames"])
    reg = json.load(open(os.path.join(out, "report.json")))["runs"]["regional"]
    assert reg["frames"] >= 1
    sug = {g["id"]: g for g in res["suggestions"]}
    for k in ("warm_cache", "portable", "regional"):
        assert sug[k]["saving_kind"] == "measured" and sug[k]["saving"].startswith("measured:")
    assert sug["regional"]["saving_s"] == pytest.approx(runs["cold"]["compile_s"] - runs["regional"]["compile_s"], abs=0.01)
    # what cuts the compile itself comes before what reuses one (no help where every start is cold)
    assert [g["reuses_a_compile"] for g in res["suggestions"]] == [g["id"] in ("warm_cache", "portable")
                                                                  for g in res["suggestions"]]
    ranked = [g["id"] for g in res["suggestions"] if g["helps"] and not g.get("inconclusive")]
    if "regional" in ranked and "warm_cache" in ranked:
        assert ranked.index("regional") < ranked.index("warm_cache"), ranked
    assert whole_ops > 0
    # phases partition the compile time, and the picture is there
    assert sum(p["seconds"] for p in s["phases"]) == pytest.approx(s["compile_time_s"], rel=0.05)
    assert {"dynamo", "aot", "kernel_compile"} <= {p["phase"] for p in s["phases"]}
    svg = open(res["artifacts"]["chart"]).read()
    assert svg.startswith("<svg") and "C++/Triton kernel compile" in svg
    top = s["frames"][0]
    assert top["user_code"] and top["location"].endswith("ct_blocks.py:25")


@pytest.mark.slow
def test_recorded_trace(blocks_all, tmp_path):
    res, out = blocks_all
    trace_dir = os.path.join(out, "cold", "trace")
    p = run_cli("compile-time", "--trace", trace_dir, "--out", tmp_path / "r", "--no-tlparse", check=0)
    assert "# Compile time:" in p.stdout and "## Phases" in p.stdout and "ct_blocks.py:25" in p.stdout
    rec = json.load(open(tmp_path / "r" / "report.json"))
    assert rec["summary"]["compile_time_s"] == res["summary"]["compile_time_s"]
    assert rec["summary"]["repeated_blocks"] == res["summary"]["repeated_blocks"]
    assert rec["runs"] == {}


SKIPPED = {"aot", "passes", "lowering", "scheduling", "codegen"}   # what an AOTAutograd/FX cache hit skips


def _phase_totals(summary, cids):
    out = {}
    for f in summary["frames"]:
        if f["compile_id"] in cids:
            for k, v in f["phases"].items():
                out[k] = out.get(k, 0.0) + v
    return out


def _check_bypass_saving(g, summary):
    """The predicted saving of a cache-bypass fix counts only the phases a cache hit skips, each at most
    what that phase took for those graphs in the run it was taken from, and names them after "up to"."""
    cids = {f["compile_id"] for f in summary["frames"] if "fx bypass" in f["caches"]}
    totals = _phase_totals(summary, cids)
    assert g["saving_phases"] and set(g["saving_phases"]) <= SKIPPED
    assert g["saving_s"] == pytest.approx(sum(g["saving_phases"].values()), abs=0.05)
    for ph, v in g["saving_phases"].items():
        assert v <= totals[ph] + 0.01, (ph, v, totals)
        assert f"{ct_label(ph)} {v} s" in g["saving"]
    # never Dynamo, guards or the kernels: less than those graphs' compile time without them
    rest = sum(v for k, v in totals.items() if k not in ("dynamo", "guards", "kernel_compile"))
    assert g["saving_s"] <= rest + 0.05
    assert g["saving"].startswith("expected: up to") and "Not counted: Dynamo tracing" in g["saving"]


def ct_label(ph):
    from cdlib.decide import compile_time as ct
    return ct.PHASE_LABEL[ph].split(" (")[0]


@pytest.mark.slow
def test_cache_bypass_reason_fix_and_saving(tmp_path):
    """ct_bypass.py: a plain-function custom pass bypasses both caches. The fix's saving counts what a
    cache hit would skip (AOTAutograd and Inductor up to codegen; not the C++ kernels, which their own
    cache already served on the warm start), from the warm run; the portable note names the bypass."""
    p = run_cli("compile-time", "--cold-warm", "--portable", "--json", "--no-tlparse", "--out", tmp_path / "r", "--",
                "python", program("ct_bypass.py"), check=0, timeout=900)
    res = json.loads(p.stdout)
    fx = res["summary"]["caches"]["fx_graph_cache"]
    assert fx["bypass"] >= 1 and fx["hit"] == 0
    r = fx["reasons"][0]
    assert r["reason"] == "Unsupported post grad custom pass" and r["fix"]["id"] == "custom_pass"
    assert res["status"] == "issues"
    (g,) = [x for x in res["suggestions"] if x["id"].startswith("bypass:")]   # one per reason, both caches
    assert g["id"] == "bypass:custom_pass" and "AOTAutograd cache" in g["title"] and "FX graph cache" in g["title"]
    assert g["saving_kind"] == "expected" and g["saving_run"] == "warm" and "per warm start" in g["saving"]
    cold, warm = (ct_summary(res["runs"][t]["trace_dir"]) for t in ("cold", "warm"))
    assert warm["caches"]["fx_graph_cache"]["bypass"] >= 1      # the warm run redid the bypassed work
    _check_bypass_saving(g, warm)
    # the old figure was the whole cold compile (kernels included); the warm start shows they were cached
    assert g["saving_s"] < cold["compile_time_s"] - _phase_totals(cold, {"0/0"}).get("kernel_compile", 0)
    assert _phase_totals(warm, {"0/0"}).get("kernel_compile", 0) < _phase_totals(cold, {"0/0"})["kernel_compile"]
    # save_cache_artifacts: Inductor compiled, the bypass left nothing to save (not "nothing compiled")
    assert res["runs"]["cold"]["artifacts_saved"] == {"saved": False} and "portable" not in res["runs"]
    (note,) = [n for n in res["notes"] if "save_cache_artifacts" in n]
    assert "Inductor compiled" in note and "bypassed" in note and "Unsupported post grad custom pass" in note
    md = open(tmp_path / "r" / "report.md").read()
    assert 'PyTorch says "Unsupported post grad custom pass"' in md and "CustomGraphPass" in md
    # the recorded cold trace alone: the same phases, from the cold run
    p = run_cli("compile-time", "--trace", res["runs"]["cold"]["trace_dir"], "--json", "--no-tlparse",
                "--out", tmp_path / "t", check=0)
    (g,) = [x for x in json.loads(p.stdout)["suggestions"] if x["id"].startswith("bypass:")]
    assert g["saving_run"] == "cold" and "per start with a kept cache dir" in g["saving"]
    _check_bypass_saving(g, cold)


@pytest.mark.parametrize("ex", [False, True])
def test_an_effectful_op_that_bypasses_the_cache_is_named_with_its_fix(ex, tmp_path):
    """Blind A/B batch 40: torch.linalg.cholesky in a compiled GP loss; its error check is wrapped in with_effects
    and the FX graph cache bypasses the graph on every start. The generic fix (torch.compiler.disable) named
    neither the op nor the call; now the fix names linalg.cholesky and its _ex variant, and that variant caches."""
    p = run_cli("compile-time", "--json", "--no-tlparse", "--out", tmp_path / "r", "--", "python",
                program("ct_linalg_effects.py"), *(["--ex"] if ex else []), check=0, timeout=900)
    res = json.loads(p.stdout)
    fx = res["summary"]["caches"]["fx_graph_cache"]
    if ex:
        assert fx["bypass"] == 0 and fx["miss"] >= 1 and not fx["reasons"], fx
        return
    (r,) = fx["reasons"]
    assert r["reason"] == "Can't cache HigherOrderOperator: with_effects", r
    assert r["effects"] == {"aten._linalg_check_errors": "linalg.cholesky"}, r
    (g,) = [x for x in res["suggestions"] if x["id"].startswith("bypass:")]
    assert g["fix"].startswith("torch.linalg.cholesky checks its result") and "cholesky_ex" in g["fix"], g


def test_freezing_bypasses_are_one_fix_and_dynamic_false_buckets_are_not_recompiles_to_stop(tmp_path):
    """Blind A/B batch 32: a CPU server with freezing on and dynamic=False for three fixed buckets. Both caches'
    bypass reasons ("mkldnn tensors unpickleable", "freezing enabled") are one suggestion, freezing's (it said to
    keep mkldnn objects out of the compiled region, and 0 s for the AOTAutograd half); the two extra graphs are a
    graph per size by design, not "stop the recompiles" with a triage to run."""
    p = run_cli("compile-time", "--cold-warm", "--json", "--no-tlparse", "--out", tmp_path / "r", "--",
                "python", program("ct_frozen_buckets.py"), check=0, timeout=900)
    res = json.loads(p.stdout)
    caches = res["summary"]["caches"]
    assert caches["fx_graph_cache"]["bypass"] == 3 and caches["aotautograd_cache"]["bypass"] == 3, caches
    byp = [g for g in res["suggestions"] if g["id"].startswith("bypass:")]
    assert [g["id"] for g in byp] == ["bypass:frozen"], byp
    g = byp[0]
    assert "mkldnn tensors unpickleable" in g["title"] and "freezing enabled" in g["title"]
    assert "AOTAutograd cache" in g["title"] and "FX graph cache" in g["title"]
    assert "weight_prepack" in g["fix"] and g["saving_s"] > 0
    ids = [x["id"] for x in res["suggestions"]]
    assert "per_size_graphs" in ids and "recompiles" not in ids, ids
    per = next(x for x in res["suggestions"] if x["id"] == "per_size_graphs")
    assert per["command"] is None and len(per["compile_ids"]) == 2 and "by design" in per["fix"]


def test_a_program_that_makes_its_own_cache_dir_is_told_so(tmp_path):
    """Blind A/B batch 15: a worker points TORCHINDUCTOR_CACHE_DIR at a new mkdtemp() on every start (and
    deletes it at exit). The warm run reuses nothing; compile-time names the line instead of offering
    "keep the cache" with a saving that is noise."""
    prog = program("ct_own_cache_dir.py")
    p = run_cli("compile-time", "--cold-warm", "--json", "--no-tlparse", "--out", tmp_path / "r", "--",
                "python", prog, check=0, timeout=900)
    res = json.loads(p.stdout)
    ids = [g["id"] for g in res["suggestions"]]
    assert ids and ids[0] == "cache_not_reused" and "warm_cache" not in ids, res["suggestions"]
    line = next(i for i, s in enumerate(open(prog), 1) if 'os.environ["TORCHINDUCTOR_CACHE_DIR"]' in s)
    assert f"ct_own_cache_dir.py:{line}" in res["suggestions"][0]["fix"], res["suggestions"][0]


def test_a_graph_that_differs_per_start_is_named_not_the_fixed_cache_dir(tmp_path):
    """Blind A/B batch 34: a worker bakes a start-up statistic (an unseeded sample's mean, a float attribute) into
    the graph, so the warm start misses both caches; its cache dir is a fixed folder set with
    os.environ.setdefault, which the report had called "a new, empty one". The first differing graph line is
    named, with the buffer fix."""
    prog = program("ct_float_per_start.py")
    p = run_cli("compile-time", "--cold-warm", "--json", "--no-tlparse", "--out", tmp_path / "r", "--",
                "python", prog, check=0, timeout=900)
    res = json.loads(p.stdout)
    (g,) = [g for g in res["suggestions"] if g["id"] == "cache_not_reused"]
    assert "compiled different graphs" in g["fix"] and "register_buffer" in g["fix"], g
    assert "ct_float_per_start.py:" in g["fix"] and "new, empty one" not in g["fix"], g


def test_bad_input_one_line_errors(tmp_path):
    p = run_cli("compile-time", "--trace", tmp_path, "--", "python", "x.py", check=2)
    assert "do not also give a target" in p.stderr and "Traceback" not in p.stderr
    p = run_cli("compile-time", "--trace", tmp_path, check=2)
    assert "no TORCH_TRACE" in p.stderr
    p = run_cli("compile-time", "--all", "--trace", tmp_path, check=2)
    assert "do not combine with --trace" in p.stderr


def test_phase_of_and_bypass_table():
    from cdlib.decide import compile_time as ct
    assert ct.phase_of("Scheduler.__init__") == "scheduling" and ct.phase_of("Scheduler.codegen") == "codegen"
    assert ct.phase_of("mm_template_autotuning") == "autotune" and ct.phase_of("pass.post_grad_passes.x") == "passes"
    assert ct.phase_of("something_new") is None
    # every row's pattern matches a reason string PyTorch raises (copied from torch 2.14.1 source)
    for reason, rid in [("Unsupported joint custom pass", "custom_pass"), ("Failed to pickle cache key", "pickle_key"),
                        ("Skipping graph with frozen constants", "frozen"), ("mkldnn tensors unpickleable", "frozen"),
                        ("Cannot cache a graph with freezing enabled", "frozen"), ("FX graph cache is not enabled", "fx_cache_off"),
                        ("Can't cache HigherOrderOperator: foo", "higher_order_op"),
                        ("Unsupported call_function target cond. \n Function module: torch.ops.higher_order, \n"
                         "Function name: cond", "higher_order_op"),
                        ("Unsupported call_function target helper. Function module: mylib", "unsafe_node"),
                        # a custom autograd.Function, named by the AOTAutograd cache as a higher-order op (review)
                        ("Unsupported call_function target autograd_function_apply. \n Function module: "
                         "torch.ops.higher_order", "autograd_function")]:
        assert ct.bypass_fix(reason)["id"] == rid
    # two higher-order ops are two suggestions, each naming its own op (review of 0.33.108)
    from cdlib.decide import compile_time_advice as cta

    def r(reason, cid):
        return {"state": "bypass", "reason": reason, "count": 1, "compile_ids": [cid], "fix": ct.bypass_fix(reason)}
    summary = {"frames": [], "caches": {
        "fx_graph_cache": {"reasons": [r("Can't cache HigherOrderOperator: cond", "0/0"),
                                       r("Can't cache HigherOrderOperator: while_loop", "1/0")]},
        "aotautograd_cache": {"reasons": [r("Unsupported call_function target cond. \n Function module: "
                                            "torch.ops.higher_order", "0/0")]}}}
    fixes = sorted(x["fix"] for x in cta._bypass_suggestions(summary, None))
    assert len(fixes) == 2 and "operator cond," in fixes[0] and "operator while_loop," in fixes[1], fixes
    assert ct.bypass_fix("a reason nobody knows")["id"] is None


@pytest.mark.gpu
def test_gpu_triton_compile_and_autotune_phases(tmp_path):
    p = run_cli("compile-time", "--json", "--no-tlparse", "--out", tmp_path / "r", "--", "python",
                program("ct_gpu_autotune.py"), check=0, timeout=1500)
    res = json.loads(p.stdout)
    s = res["summary"]
    phases = {x["phase"] for x in s["phases"]}
    assert "kernel_compile" in phases and "autotune" in phases
    autotune_s = next(x["seconds"] for x in s["phases"] if x["phase"] == "autotune")
    assert s["autotune"]["max_autotune"] and (s["autotune"]["compile_time_autotune_s"] or autotune_s) > 0
    assert s["triton_compile_time_s"] > 0
    assert any(g["id"] == "max_autotune" for g in res["suggestions"])


def test_portable_note_when_kernels_compile_again():
    """The note that explains a small portable saving (CPU: C++ kernels recompiled) fires on the shape of
    the numbers measured on toy_train (cold 236 s kernel compile, portable 147.5 s, warm 4.7 s), and stays
    quiet when the loaded artifacts also skipped the kernel compile (GPU: Triton kernels bundled)."""
    from cdlib.decide.compile_time_advice import portable_notes as _portable_notes

    def summ(k):
        return {"phases": [{"phase": "dynamo", "seconds": 3.0}, {"phase": "kernel_compile", "seconds": k}]}
    (note,) = _portable_notes({"cold": summ(236.0), "warm": summ(4.7), "portable": summ(147.5)})
    assert "147.5 s" in note and "warm 4.7 s" in note and "not the compiled C++ kernels (.so)" in note
    assert "Triton kernels are bundled" in note
    assert _portable_notes({"cold": summ(236.0), "warm": summ(4.7), "portable": summ(6.0)}) == []
    assert _portable_notes({"cold": summ(236.0), "portable": summ(200.0)})      # no warm run: still said
    assert _portable_notes({"cold": summ(0.0), "portable": summ(0.0)}) == []    # nothing compiled: quiet


def test_single_runs_on_a_busy_machine_are_not_conclusive():
    """A regional run that came out slower while the load was far above the cores is shown as not
    conclusive (an A/B agent measured the opposite by repeating), never as 'did not help'."""
    from cdlib.decide import compile_time_advice as advice
    summary = {"caches": {}, "frames": [], "repeated_blocks": [{"container": "blocks", "count": 12}],
               "recompiles": 0, "autotune": {"max_autotune": False, "max_autotune_gemm": False,
                                             "compile_time_autotune_s": 0}}
    cores = os.cpu_count() or 1
    runs = {"cold": {"compile_s": 29.5, "load": 5.0 * cores},
            "regional": {"compile_s": 42.4, "applied": [{"container": "blocks"}], "load": 0.1}}
    (g,) = [x for x in advice.suggestions(summary, {}, runs, ["python", "serve.py"]) if x["id"] == "regional"]
    assert g["inconclusive"] and g["helps"] and "not conclusive" in g["saving"]
    for r in runs.values():
        r["load"] = 0.1
    (g,) = [x for x in advice.suggestions(summary, {}, runs, ["python", "serve.py"]) if x["id"] == "regional"]
    assert not g["helps"] and "inconclusive" not in g and "no saving here" in g["saving"]


def test_repeated_blocks_need_the_same_signature():
    """12 identical blocks are a repeated block; a Sequential of Linear, GELU, Linear (two numbered
    children with parameters of different shapes) is not (an A/B agent was told to compile `mlp`
    regionally)."""
    from types import SimpleNamespace
    from cdlib.decide import compile_time as ct
    blocks = {f"l_self_modules_blocks_modules_{i}_modules_fc_parameters_weight_": [64, 64] for i in range(12)}
    mlp = {"l_self_modules_mlp_modules_0_parameters_weight_": [256, 64],
           "l_self_modules_mlp_modules_2_parameters_weight_": [64, 256]}
    # blind A/B batch 33: a ModuleList of 16 Embeddings (one weight each) is not a block, however many
    emb = {f"l_self_modules_emb_modules_{i}_parameters_weight_": [1000, 64] for i in range(16)}
    ev = SimpleNamespace(data={"graph_node_shapes": repr({**blocks, **mlp, **emb, "l_x_": [2, 64]})},
                         compile_id="0/0")
    tr = SimpleNamespace(of=lambda kind: [ev] if kind == "compilation_metrics" else [])
    assert ct.repeated_blocks(tr) == [{"container": "blocks", "count": 12, "compile_ids": ["0/0"]}]


def test_regional_run_skips_lists_of_single_torch_layers():
    """The --regional run compiles the largest list of blocks, not a longer list of torch.nn's own single
    layers (batch 33: 8 Embeddings were compiled one by one and the cross layers left eager)."""
    import torch.nn as nn
    from cdlib.run.workers import compile_time_hooks as h

    class Cross(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Linear(4, 4)

    class Ranker(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.ModuleList(nn.Embedding(10, 4) for _ in range(8))
            self.cross = nn.ModuleList(Cross() for _ in range(3))
            self.heads = nn.ModuleList(nn.Linear(4, 4) for _ in range(5))

    name, container = h._repeated(Ranker())
    assert name == "cross" and len(container) == 3
    assert h._repeated(nn.ModuleList(nn.Embedding(10, 4) for _ in range(8))) is None


def _triage_unexpected(rep):
    """Compile ids of the recompiles triage would have fixed: the cause of the guard that failed first is
    not one torch expects (the rule of triage's Next and compare/fix's unexpected_recompiles)."""
    out = set()
    for f in rep["recompiles"]:
        expected = {(c["kind"], c["cause"]): c["expected"] for c in f["causes"]}
        for r in f["recompiles"]:
            if not r["failures"] or not expected[(r["failures"][0]["kind"], r["failures"][0]["cause"])]:
                out.add(r["compile_id"])
    return out


def _agree(ct_res, tri):
    """compile-time's "stop the recompiles" covers exactly the recompiles triage calls not expected."""
    from cdlib.decide import compare
    rec = [g for g in ct_res["suggestions"] if g["id"] == "recompiles"]
    unexpected = _triage_unexpected(tri)
    assert len(unexpected) == compare.unexpected_recompiles(tri)
    assert set(rec[0]["compile_ids"] if rec else []) == unexpected
    stop = any("stop the recompiles" in s["why"] for s in tri["next_steps"])
    assert bool(rec) == stop
    s = ct_res["summary"]
    assert s["expected_recompiles"] == s["recompiles"] - len(unexpected)
    return rec


def test_recompiles_to_fix_agree_with_triage(tmp_path):
    """Recorded trace with 4 recompiles, 2 of them torch expects (automatic dynamic): compile-time's
    saving counts the other 2 only, the ones triage says to fix."""
    trace = os.path.join(os.path.dirname(__file__), "fixtures", "torch-2.14", "rc_multi")
    res = json.loads(run_cli("compile-time", "--trace", trace, "--json", "--no-tlparse", "--out", tmp_path / "c",
                             check=0).stdout)
    tri = json.loads(run_cli("triage", "--trace", trace, "--json", "--no-tlparse", "--out", tmp_path / "t",
                             check=0).stdout)
    (g,) = _agree(res, tri)
    s = res["summary"]
    assert s["recompiles"] == 4 and s["expected_recompiles"] == 2
    fix_s = sum(f["total_s"] for f in s["frames"] if f["compile_id"] in g["compile_ids"])
    assert g["saving_s"] == pytest.approx(fix_s, abs=0.01) and g["saving_s"] < s["recompile_time_s"]
    assert "the 2 recompile(s) torch expects are not counted" in g["saving"]


@pytest.mark.slow
def test_gpt2_training_expected_recompiles_agree_with_triage(tmp_path):
    """transformers GPT-2 trained on growing sequence lengths: each compiled function recompiles once
    with the length dynamic (automatic dynamic). Triage calls that expected; compile-time must not list
    "stop the recompiles" with a saving, and both give the same compile time (lazy backward included)."""
    p = run_cli("compile-time", "--json", "--no-tlparse", "--out", tmp_path / "c", "--", "python",
                program("ct_hf_gpt2_train.py"), check=0, timeout=1500)
    res = json.loads(p.stdout)
    s = res["summary"]
    assert res["runs"]["cold"]["exit_code"] == 0 and s["recompiles"] >= 1
    tri = json.loads(run_cli("triage", "--trace", res["runs"]["cold"]["trace_dir"], "--json", "--no-tlparse",
                             "--out", tmp_path / "t", check=0).stdout)
    assert all(f["expected_only"] for f in tri["recompiles"] if f["recompiles"])
    assert _agree(res, tri) == [] and s["expected_recompiles"] == s["recompiles"]
    assert all("automatic dynamic" in f["recompile_expected"] for f in s["frames"] if f["recompile"])
    md = open(tmp_path / "c" / "report.md").read()
    assert "all expected, nothing to fix" in md and "stop the recompiles" not in md
    assert tri["stats"]["compile_time_s"] == pytest.approx(s["compile_time_s"], abs=0.05)
    assert any(f["backward_s"] for f in s["frames"])    # a training run: the lazy backward compile counts


def test_an_unrolled_python_loop_is_named_with_its_fix(tmp_path):
    """A cell called once per time step in a loop compiled whole (blind A/B batch 8's forecaster: the
    report said "no repeated layers seen" while the cell was traced once per step): the cell's forward
    is counted 12 times in one graph and the first suggestion is to compile the loop's body."""
    from cdlib.decide import compile_time, compile_time_advice
    from cdlib.read import trace as tracemod
    env = dict(os.environ, TORCH_TRACE=str(tmp_path / "trace"), TORCHINDUCTOR_CACHE_DIR=fresh_cache(tmp_path / "cache"))
    p = subprocess.run([sys.executable, program("ct_unrolled_loop.py")], env=env, capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    rc = compile_time.repeated_code(tracemod.parse(str(tmp_path / "trace")))
    assert rc and rc[0]["function"] == "forward" and rc[0]["times"] == 12, rc
    assert rc[0]["file"].endswith("ct_unrolled_loop.py") and rc[0]["lines"] == [13, 14], rc
    summary = compile_time.summarize(tracemod.parse(str(tmp_path / "trace")))
    assert summary["repeated_code"] == rc and not summary["repeated_blocks"]
    got = compile_time_advice.suggestions(summary, {}, {}, ["python", "prog.py"])
    assert got[0]["id"] == "regional" and "unrolled" in got[0]["title"] and "times" in got[0]["title"]


@pytest.mark.slow
def test_a_dynamic_recompile_dearer_than_a_static_graph_is_named_and_dynamic_false_cuts_it(tmp_path):
    """Blind A/B batch 31: HF Swin at 64, 80 and 96 px; the 80 px recompile (sizes made symbolic by automatic
    dynamic) took 340 s against 114 s for the first compile, its window padding a nest of floor/mod expressions,
    and compile-time called it "expected, nothing to fix". A recompile on a new size that costs >= 2x the first
    (static) compile in tracing and lowering (a process's first compile also pays one-time costs in code generation)
    is named, with dynamic=False as the fix, and that fix measured: less compile time in all."""
    def run(name, **env):
        out = tmp_path / name
        p = run_cli("compile-time", "--json", "--no-tlparse", "--out", out, "--", "python",
                    program("ct_windowed_sizes.py"), check=0, timeout=900, env=dict(os.environ, **env))
        assert p.returncode == 0, p.stderr[-2000:]
        return json.loads(p.stdout), (out / "report.md").read_text()
    res, md = run("dynamic")
    (d,) = res["summary"]["costly_dynamic"]
    assert d["compile_id"] == "0/1" and d["trace_s"] >= 2 * d["first_trace_s"], d
    assert "nothing to fix" not in md and "dynamic graph cost more than a static one" in md, md
    sug = {g["id"]: g for g in res["suggestions"]}
    assert "dynamic=False" in sug["static_sizes"]["fix"] and "ct_windowed_sizes.py" in sug["static_sizes"]["title"]
    fixed, _ = run("static", FIXED="1")
    assert not fixed["summary"]["costly_dynamic"] and fixed["summary"]["compiled_frames"] == 2
    assert fixed["summary"]["compile_time_s"] < res["summary"]["compile_time_s"] - (d["trace_s"] - d["first_trace_s"]) / 2


@pytest.fixture(scope="module")
def compiled_step(tmp_path_factory):
    out = tmp_path_factory.mktemp("ct_opt") / "run"
    p = run_cli("compile-time", "--json", "--no-tlparse", "--out", out, "--", sys.executable,
                program("ct_compiled_optimizer.py"), check=0, timeout=900)
    return json.loads(p.stdout), out, p.stderr


def test_a_compiled_optimizer_step_is_named_with_its_fix(compiled_step):
    """opt.step() inside a compiled function (blind A/B batch 22's GPT: the compiled AdamW step was most of
    the startup and grew with depth, and the report offered only regional compilation): the frame is named
    as torch's optimizer code called from the program, and a suggestion says to run the step uncompiled
    with the fused kernel. Without that frame, no such suggestion."""
    res, _, err = compiled_step
    assert res["target_status"] == "ok", err[-2000:]
    step = [f for f in res["summary"]["frames"] if (f.get("torch_code") or "").startswith("torch/optim/")
            and (f["ops"] or 0) >= 100]
    assert len(step) == 1 and step[0]["function"].startswith("step (torch/optim/"), res["summary"]["frames"]
    assert "called at ct_compiled_optimizer.py:17" in step[0]["function"]
    sug = next(g for g in res["suggestions"] if g["id"] == "compiled_optimizer")
    assert sug["compile_ids"] == [step[0]["compile_id"]] and f"{step[0]['ops']} ops" in sug["title"]
    assert "fused=True" in sug["fix"] and sug["saving_kind"] == "expected" and sug["saving_s"] == round(step[0]["total_s"], 2)
    from cdlib.decide import compile_time_advice
    summary = dict(res["summary"], frames=[f for f in res["summary"]["frames"] if f not in step])
    assert all(g["id"] != "compiled_optimizer" for g in compile_time_advice.suggestions(summary, {}, {}, []))
    # the review's: an EMA model's forward (torch/optim/swa_utils.py) is not an optimizer step
    ema = dict(step[0], function="forward (torch/optim/swa_utils.py, called at ema.py:7)",
               torch_code="torch/optim/swa_utils.py")
    summary = dict(res["summary"], frames=[f for f in res["summary"]["frames"] if f not in step] + [ema])
    assert all(g["id"] != "compiled_optimizer" for g in compile_time_advice.suggestions(summary, {}, {}, []))


def _ct_report(frames, compile_s, exit_code=0, hits=0, suggestions=()):
    """A compile-time report dict as report.json holds it (the fields compare reads)."""
    fr = [{"compile_id": cid, "function": fn, "location": f"/x/train.py:{10 + i}", "ops": ops, "total_s": t}
          for i, (cid, fn, ops, t) in enumerate(frames)]
    return {"command": "compile-time", "target": "python train.py", "run_dir": "/r", "_stdout": "loss 1.0\n",
            "summary": {"frames": fr, "compile_time_s": compile_s, "compiled_frames": len(fr), "recompiles": 0,
                        "phases": [], "caches": {"fx_graph_cache": {"hit": hits}}},
            "runs": {"cold": {"exit_code": exit_code, "wall_s": compile_s + 5}},
            "suggestions": [{"id": i, "title": i} for i in suggestions]}


def test_compare_compile_time_rules():
    """The review's cases of compare on compile-time runs: a function's recompiles are frames of their own; a
    before run that was killed is not comparable; frames gone while the unchanged graphs got slower is not
    "better"; a cache hit (a setting) is not the machine; suggestions that need a warm run are not "gone"."""
    from cdlib.decide import compare_compile_time as cct
    fwd = [("0/0", "forward", 50, 4.0), ("0/1", "forward", 50, 5.0), ("0/2", "forward", 50, 5.0)]
    res = cct.compare(_ct_report(fwd, 14.0), _ct_report(fwd[:1], 4.2))
    assert len(res["frames"]["gone"]) == 2 and res["same_graphs_s"] == [4.0, 4.0], res
    assert res["verdict"].startswith("better: compile 14.0 → 4.2 s"), res["verdict"]
    res = cct.compare(_ct_report(fwd[:1], 4.0, exit_code=-9), _ct_report(fwd, 14.0))
    assert res["verdict"].startswith("not comparable: the before run failed (exit -9"), res["verdict"]
    opt = ("1/0", "step (torch/optim/adam.py, called at train.py:9)", 500, 6.0)
    res = cct.compare(_ct_report([fwd[0][:3] + (16.0,), opt], 22.0), _ct_report([fwd[0][:3] + (30.0,)], 30.0))
    assert res["verdict"].startswith("not conclusive on time: 1 compiled frame(s) gone (6.0 s"), res["verdict"]
    res = cct.compare(_ct_report([fwd[0][:3] + (16.0,), opt], 22.0), _ct_report([fwd[0][:3] + (12.0,)], 12.0))
    assert res["verdict"].startswith("better: 1 compiled frame(s) gone"), res["verdict"]
    res = cct.compare(_ct_report([fwd[0][:3] + (16.0,)], 16.0), _ct_report([fwd[0][:3] + (3.0,)], 3.0, hits=1))
    assert res["verdict"].startswith("better: compile 16.0 → 3.0 s"), res["verdict"]
    res = cct.compare(_ct_report(fwd[:1], 4.0, suggestions=("warm_cache", "regional")), _ct_report(fwd[:1], 4.0))
    assert res["suggestions_gone"] == ["regional"], res["suggestions_gone"]


def test_compare_takes_a_compile_time_run_and_the_fixed_command(compiled_step, tmp_path):
    """compare BEFORE -- <fixed command> on a compile-time run (batch 22: compare refused compile-time run
    dirs, so the agent timed the fix by hand): one cold run of the fix, the optimizer frame gone, the losses
    printed the same, the suggestion no longer made; a triage run dir after a compile-time one is refused."""
    res, before, _ = compiled_step
    p = run_cli("compare", "--json", "--out", tmp_path / "cmp", str(before), "--", sys.executable,
                program("ct_compiled_optimizer.py"), "--fused-step", check=0, timeout=900)
    assert p.returncode == 0, p.stderr[-2000:]
    c = json.loads(p.stdout)
    assert c["kind"] == "compile-time" and c["after"]["exit_code"] == 0 and c["output"] == "same", c
    assert any(x.startswith("`step (torch/optim/") for x in c["frames"]["gone"]) and not c["frames"]["new"], c["frames"]
    assert c["after"]["ops"] < c["before"]["ops"] and not c["verdict"].startswith("worse"), c["verdict"]
    assert any(x.startswith("run the optimizer step uncompiled") for x in c["suggestions_gone"])
    md = run_cli("compare", str(before), str(tmp_path / "cmp" / "after"), check=0).stdout
    assert md.startswith("# compare (compile time): ") and "## Compiled frames: " in md
    tri = tmp_path / "tri"
    tri.mkdir()
    (tri / "report.json").write_text(json.dumps({"command": "triage", "graph_breaks": []}))
    p = run_cli("compare", str(before), str(tri))
    assert p.returncode == 2 and "is a compile-time run" in p.stderr and "Traceback" not in p.stderr


def test_a_throwaway_cache_starts_with_the_cpu_probes_and_compiles_the_program(tmp_path):
    """Every run in a cache of its own (compile-time's cold run, fix trials, triage's empty-cache check, bisect)
    starts with the CPU ISA probes copied from the user's cache: g++ builds the program's kernels there and no
    probe (each ~0.5-2 s; ~8 s of the ~14 s a tiny cold run cost on 2 cores). The user's cache is only read."""
    log = tmp_path / "cxx.log"
    cxx = tmp_path / "cxx"
    cxx.write_text(f'#!/bin/sh\nfor a in "$@"; do case "$a" in *.cpp) echo "$a" >> {log};; esac; done\nexec g++ "$@"\n')
    cxx.chmod(0o755)
    # the user's cache holds the probes once torch has picked an ISA with this compiler there (the compiler is in
    # their key on some releases: 2.11); copied from the suite's cache where they match, built where they don't
    user = fresh_cache(tmp_path / "user-cache")
    subprocess.run([sys.executable, "-c", "from torch._inductor import cpu_vec_isa as m; print(m.pick_vec_isa())"],
                   check=True, timeout=300, capture_output=True, env={**os.environ, "CXX": str(cxx),
                                                                       "TORCHINDUCTOR_CACHE_DIR": user})
    log.write_text("")
    for f in pathlib.Path(user).rglob("*"):   # built a while ago (a probe written in the last 5 s is not copied)
        os.utime(f, (f.stat().st_mtime - 60,) * 2)
    before = sorted((str(p), p.stat().st_mtime_ns) for p in pathlib.Path(user).rglob("*") if p.is_file())
    prog = tmp_path / "prog.py"
    prog.write_text("import torch\n\n@torch.compile\ndef f(x):\n    return torch.relu(x) * 3 + 1\n\n"
                    "print(f(torch.arange(8.0)).sum().item())\n")
    p = run_cli("compile-time", "--json", "--no-tlparse", "--out", tmp_path / "r", "--", sys.executable, prog,
                env={"CXX": str(cxx), "TORCHINDUCTOR_CACHE_DIR": user}, check=0)
    cold = json.loads(p.stdout)["runs"]["cold"]
    assert cold["exit_code"] == 0 and cold["caches"]["fx_graph_cache"]["miss"] >= 1
    built = log.read_text().split()
    probes = [f for f in built if b"_chk_kernel" in open(f, "rb").read()]
    assert built and not probes, built
    copied = [f for f in pathlib.Path(cold["cache_dir"]).rglob("*.cpp") if b"_chk_kernel" in f.read_bytes()]
    assert copied
    assert sorted((str(p), p.stat().st_mtime_ns) for p in pathlib.Path(user).rglob("*")
                  if p.is_file()) == before


def test_seeding_copies_finished_probes_only(tmp_path):
    """seed_isa_probes copies a probe's .cpp, .so and .load_ok; not a program's kernel, not a probe whose .so is
    still being written (mtime < 5 s ago), nothing when the source is the destination."""
    from cdlib.run import proc
    src, dst = tmp_path / "user", tmp_path / "new"
    (src / "ab").mkdir(parents=True)
    probe = 'extern "C" void __avx_chk_kernel() {}\n'
    for key, text, age in (("cprobe", probe, 60), ("ckernel", "extern \"C\" void kernel() {}\n", 60),
                           ("cfresh", probe, 0)):
        for suffix, body in ((".cpp", text), (".so", "ELF"), (".so.load_ok", "")):
            f = src / "ab" / (key + suffix)
            f.write_text(body)
            os.utime(f, (f.stat().st_mtime - age,) * 2)
    assert proc.seed_isa_probes(str(dst), str(src)) == 1
    assert sorted(p.name for p in dst.rglob("*")) == ["ab", "cprobe.cpp", "cprobe.so", "cprobe.so.load_ok"]
    assert proc.seed_isa_probes(str(src), str(src)) == 0 and proc.seed_isa_probes(str(dst), str(tmp_path / "none")) == 0


@pytest.mark.slow
def test_an_aoti_load_that_runs_g_plus_plus_is_timed_on_an_empty_cache(tmp_path):
    """Nothing compiles at run time, but the program's pods load an AOTInductor package (a script it starts as a
    process, named in a string): one more run with an empty cache dir times the load's CPU-feature check (torch
    2.14/2.15 build ~10 g++ test programs there; blind A/B batch 36's compile-time said only "nothing was
    compiled"), and the advice names the load's line and a warmed cache dir."""
    import torch
    cache = fresh_cache(tmp_path / "cache")
    pkg = tmp_path / "ranker.pt2"
    subprocess.run([sys.executable, program("aoti_pods.py"), "--export", pkg], check=True, timeout=600,
                   capture_output=True, env={**os.environ, "TORCHINDUCTOR_CACHE_DIR": cache})
    for f in pathlib.Path(cache).rglob("*"):   # probes built a while ago are copied into the cold run's cache
        os.utime(f, (f.stat().st_mtime - 60,) * 2)
    p = run_cli("compile-time", "--json", "--no-tlparse", "--out", tmp_path / "r", "--", sys.executable,
                program("aoti_pods.py"), pkg, env={"TORCHINDUCTOR_CACHE_DIR": cache}, check=0, timeout=900)
    res = json.loads(p.stdout)
    assert res["status"] == "no-compile" and set(res["runs"]) == {"cold", "empty_cache"}
    assert res["runs"]["cold"]["aoti_load"] == "aoti_pod_worker.py:8"
    [g] = res["suggestions"]
    assert g["id"] == "aoti_load_check" and "aoti_pod_worker.py:8" in g["title"]
    assert "TORCHINDUCTOR_CACHE_DIR" in g["fix"] and "next" not in res
    md = (tmp_path / "r" / "report.md").read_text()
    assert "empty-cache run" in md and "## What would help" in md
    if tuple(int(x) for x in torch.__version__.split(".")[:2]) >= (2, 14):   # 2.9.1's load has no such check
        # the AVX-512 probes are built only on a CPU that has them (a machine without: 1 probe, a small difference)
        try:
            avx512 = "avx512" in pathlib.Path("/proc/cpuinfo").read_text()
        except OSError:
            avx512 = False
        assert res["runs"]["empty_cache"]["isa_probes_built"] >= (2 if avx512 else 1), res["runs"]["empty_cache"]
        if avx512:
            assert g["helps"], g
            assert res["runs"]["empty_cache"]["wall_s"] > res["runs"]["cold"]["wall_s"]


@pytest.mark.slow
def test_a_function_kept_opaque_by_allow_in_graph_gets_the_mark_removed_and_then_caches(tmp_path):
    """Blind A/B batch 52: a gated swish of three torch ops marked torch.compiler.allow_in_graph; the AOTAutograd
    cache bypassed its graph on every start and the fix said "register it as a torch.library custom op". Now it names
    the function, its module and removing the mark (or the unsafe opt-in with its key); without the mark (PLAIN=1)
    the warm start hits the AOTAutograd cache."""
    p = run_cli("compile-time", "--cold-warm", "--json", "--no-tlparse", "--out", tmp_path / "c", "--", "python",
                program("ct_allow_in_graph_fn.py"), check=0, timeout=900)
    res = json.loads(p.stdout)
    (g,) = [x for x in res["suggestions"] if x["id"].startswith("bypass:")]
    assert g["id"] == "bypass:allow_in_graph_function" and "\n" not in g["title"], g
    assert "function gated_swish (module __main__)" in g["fix"] and "remove the allow_in_graph mark" in g["fix"] \
        and '{"__main__.gated_swish": "1"}' in g["fix"], g["fix"]
    p = run_cli("compile-time", "--cold-warm", "--json", "--no-tlparse", "--out", tmp_path / "w", "--", "python",
                program("ct_allow_in_graph_fn.py"), env={"PLAIN": "1"}, check=0, timeout=900)
    warm = json.loads(p.stdout)["runs"]["warm"]["caches"]
    assert warm["aotautograd_cache"]["hit"] >= 1 and not warm["aotautograd_cache"]["bypass"], warm


@pytest.mark.slow
def test_a_warm_aot_miss_without_bypass_names_grad_on_inference_and_no_grad_fixes_it(tmp_path):
    """Blind A/B batch 53: a scorer ran its compiled model with grad on; every warm start missed the AOTAutograd
    cache with no bypass (its entry is saved after a backward that never runs), and "What would help" said nothing.
    Now a suggestion names it; under torch.no_grad() (NO_GRAD=1) the warm start hits."""
    p = run_cli("compile-time", "--cold-warm", "--json", "--no-tlparse", "--out", tmp_path / "c", "--", "python",
                program("ct_inference_grad_on.py"), check=0, timeout=900)
    res = json.loads(p.stdout)
    assert res["suggestions"][0]["id"] == "aot_entry_never_saved", res["suggestions"]
    assert "torch.no_grad()" in res["suggestions"][0]["fix"]
    p = run_cli("compile-time", "--cold-warm", "--json", "--no-tlparse", "--out", tmp_path / "n", "--", "python",
                program("ct_inference_grad_on.py"), env={"NO_GRAD": "1"}, check=0, timeout=900)
    res = json.loads(p.stdout)
    assert res["runs"]["warm"]["caches"]["aotautograd_cache"]["hit"] >= 1, res["runs"]["warm"]["caches"]
    assert not any(s["id"] == "aot_entry_never_saved" for s in res["suggestions"])


@pytest.mark.slow
def test_a_torch_cond_that_no_cache_stores_is_one_suggestion_with_a_fix_that_caches(tmp_path):
    """Blind A/B batch 50: a gap filler through torch.cond; both caches bypass the graph on every start. The
    AOTAutograd reason ("Unsupported call_function target cond") got "register it as a custom op" and came first
    with "up to 0 s", the FX one "torch.compiler.disable around it" (a graph break). Now both are one suggestion that
    names cond and torch.where; with torch.where (WHERE=1) the warm start hits both caches."""
    p = run_cli("compile-time", "--cold-warm", "--json", "--no-tlparse", "--out", tmp_path / "c", "--", "python",
                program("ct_cond_gap_fill.py"), check=0, timeout=900)
    res = json.loads(p.stdout)
    (g,) = [x for x in res["suggestions"] if x["id"].startswith("bypass:")]
    assert g["id"] == "bypass:higher_order_op" and "AOTAutograd" in g["title"] and "FX graph" in g["title"], g
    assert "operator cond" in g["fix"] and "torch.where(pred, a, b)" in g["fix"] and \
        '"torch.ops.higher_order.cond"' in g["fix"], g["fix"]
    p = run_cli("compile-time", "--cold-warm", "--json", "--no-tlparse", "--out", tmp_path / "w", "--", "python",
                program("ct_cond_gap_fill.py"), env={"WHERE": "1"}, check=0, timeout=900)
    warm = json.loads(p.stdout)["runs"]["warm"]["caches"]
    assert warm["fx_graph_cache"]["hit"] >= 1 and not warm["fx_graph_cache"]["bypass"], warm
    assert warm["aotautograd_cache"]["hit"] >= 1, warm


@pytest.mark.slow
def test_inductor_codegen_re_expanding_an_unrolled_recurrence_is_named(tmp_path):
    """Blind A/B batch 59 (eo, pytorch#148073): an integrator unrolled over 8 substeps took minutes in Inductor's code
    generation (inlined q/p re-expanded at every use); the report named only the unrolled loop. Now the codegen share
    per graph op names the re-expansion and realize_opcount_threshold; with FIXED=1 (that option) it is gone."""
    prog = program("unrolled_integrator_codegen.py")
    p = run_cli("compile-time", "--json", "--no-tlparse", "--out", tmp_path / "r", "--", "python", prog,
                check=0, timeout=900)
    res = json.loads(p.stdout)
    fix = sug_fix(res, "inductor_reexpansion")
    assert 'options={"realize_opcount_threshold": 30}' in fix and "compile one step" in fix, fix
    p = run_cli("compile-time", "--json", "--no-tlparse", "--out", tmp_path / "f", "--", "python", prog,
                env={"FIXED": "1"}, check=0, timeout=900)
    fixed = json.loads(p.stdout)
    assert "inductor_reexpansion" not in {g["id"] for g in fixed["suggestions"]}, fixed["suggestions"]
    def codegen(r):
        return sum(x["seconds"] for x in r["summary"]["phases"] if x["phase"] in ("codegen", "scheduling"))
    assert codegen(fixed) < codegen(res), (fixed["summary"]["phases"], res["summary"]["phases"])
