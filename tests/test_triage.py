"""triage end to end: real torch.compile on small real programs, one run each (CPU)."""
import json
import re
import os
import shutil
import subprocess
import sys

import pytest
from conftest import CLI, ROOT, program, run_cli, run_json, fresh_cache

_CACHE = {}


@pytest.fixture(scope="session")
def triaged(tmp_path_factory):
    def get(name, *extra):
        key = (name, extra)
        if key not in _CACHE:
            out = tmp_path_factory.mktemp(name.replace(".py", ""))
            os.rmdir(out)
            data, p = run_json("triage", "--no-tlparse", "--out", str(out), *extra, "--", program(name), timeout=600)
            assert p.returncode == 0, p.stderr
            _CACHE[key] = data
        return _CACHE[key]
    return get


def sites(data):
    return {(os.path.basename(b["location"]["file"]), b["location"]["line"]): b for b in data["graph_breaks"]}


@pytest.mark.parametrize("name,line,gb_id,category", [
    ("gb_print.py", 8, "GB0059", "printed/logged tensor value"),
    ("gb_data_dependent_if.py", 8, "GB0170", "data-dependent branch"),
    ("gb_nonzero.py", 7, "GB0036", "dynamic-shape operator (boolean mask / nonzero)"),
    ("gb_explicit.py", 8, "GB0025", "explicit graph break"),
    ("gb_unsupported_call.py", 9, "GB0007", "call to a skipped function"),
    ("gb_bincount.py", 7, "GB0036", "dynamic-shape operator (bincount)"),
])
def test_graph_break_located_and_classified(triaged, name, line, gb_id, category):
    d = triaged(name)
    at = [b for b in d["graph_breaks"] if (os.path.basename(b["location"]["file"]), b["location"]["line"]) == (name, line)]
    b = next((b for b in at if b["gb_id"] == gb_id), None)
    assert b is not None and b["category"] == category, [(b["gb_id"], b["category"]) for b in at]
    assert b["count"] >= 1 and b["frames"] and b["fix"]["fix"]
    assert b["location"]["code"]                      # the user's source line
    assert d["status"] == "issues" and not d["errors"] and d["exit_code"] == 0


def test_item_and_float_of_tensor(triaged):
    s = sites(triaged("gb_item.py"))
    assert s[("gb_item.py", 7)]["gb_id"] == "GB0124"           # .item()
    assert s[("gb_item.py", 9)]["gb_id"] == "GB0124"           # float(t)
    assert "capture_scalar_outputs" in s[("gb_item.py", 7)]["fix"]["fix"]


def test_break_inside_loop(triaged):
    b = sites(triaged("gb_loop.py"))[("gb_loop.py", 6)]
    assert b["fix"]["frame_skipped"] is True
    assert [a["gb_id"] for a in b["fix"]["also"]] == ["GB7000"]
    assert [u["line"] for u in b["user_stack"]][-2:] == [13, 6]     # the loop body's call, then the print


@pytest.mark.parametrize("name,kind,function,guard_part", [
    ("rc_batch.py", "shape", "forward", "size mismatch at index 0"),
    ("rc_float.py", "python_float", "scale", "factor == 0.5"),
    ("rc_attr.py", "module_attribute", "forward", "self.use_relu"),
    ("rc_grad.py", "grad_mode", "step", "grad_mode"),
    ("rc_threads.py", "num_threads", "score", "num_threads"),
    ("rc_dtype.py", "dtype", "f", "dtype mismatch"),
    ("rc_reqgrad.py", "requires_grad", "forward", "requires_grad mismatch"),
    ("rc_text.py", "python_str", "predict", "text == 'refund please'"),
    ("rc_stride.py", "stride", "forward", "stride mismatch"),   # blind A/B batch 31: filed as a shape change
])
def test_recompile_classified(triaged, name, kind, function, guard_part):
    d = triaged(name)
    (f,) = d["recompiles"]
    assert f["function"] == function and os.path.basename(f["location"]["file"]) == name
    (r,) = f["recompiles"]
    g = r["failures"][0]
    assert g["kind"] == kind and guard_part in g["guard"]
    assert f["compiles"] == 2 and not f["limit_hit"]
    (c,) = f["causes"]
    assert c["kind"] == kind and c["fix"]
    # one new shape / number / grad-mode switch is a recompile torch expects (automatic dynamic, one graph
    # per mode, one with and one without requires_grad, one per memory layout: rc_stride's two layouts make one
    # recompile, then both graphs are reused): marked expected and kept out of "Next"; a flag or dtype change
    # is a cause to fix
    expected = kind in ("shape", "python_float", "grad_mode", "requires_grad", "stride")
    assert c["expected"] is expected and f["expected_only"] is expected
    assert any(x["kind"] == kind for x in f["fixes"]) is not expected
    assert any("recompile" in s["why"] for s in d["next_steps"]) is not expected
    if not expected:
        # `fix --from` measures the no-code-edit fixes on this very run; none of knowledge/fixes.yaml's applies to a
        # bool flag, a thread count, a dtype or a string (a shape or an int attribute has some), so it is not offered
        # there: it would run nothing (blind A/B batch 27: a call spent on a fix with no candidate)
        (st,) = [s for s in d["next_steps"] if "recompile" in s["why"]]
        assert st["fixable"] and st["command"] is None and st["why"], st
    assert d["stats"]["recompiles"] == 1


def test_recompile_limit_hit_falls_back_to_eager(triaged):
    d = triaged("rc_limit.py")
    (f,) = d["recompiles"]
    assert f["limit_hit"] and f["limit"] == 3 and f["kinds"] == {"module_attribute": 3}
    assert any(x["kind"] == "limit" for x in f["fixes"])
    loc = f["recompiles"][0]["failures"][0]["location"]
    assert (os.path.basename(loc["file"]), loc["line"]) == ("rc_limit.py", 13)


def test_compiled_module_wrapper_mapped_to_user_code(triaged):
    (f,) = triaged("rc_sequential.py")["recompiles"]
    assert os.path.basename(f["location"]["file"]) == "rc_sequential.py" and f["location"]["line"] == 6
    assert "external_utils.py" in f["wrapper"]


def test_fullgraph_error(triaged):
    d = triaged("err_fullgraph.py")
    (e,) = d["errors"]
    assert e["category"] == "graph_break_fullgraph" and e["skill"] == "trace-dynamo"
    assert (os.path.basename(e["location"]["file"]), e["location"]["line"]) == ("err_fullgraph.py", 8)
    assert d["exit_code"] == 1 and d["status"] == "error"
    assert d["verdict"]["kind"] == "compile_only"  # the eager re-run (force_eager) passes: no fullgraph error there


@pytest.mark.slow
def test_inductor_compile_error_injected(triaged):
    d = triaged("err_inductor_compile.py")
    (e,) = d["errors"]
    assert e["category"] == "inductor_compile_error" and e["type"] == "InductorError"
    assert "CppCompileError" in e["message"]
    # the next step reuses this triage run (its command and classification) instead of running it again
    assert e["next_command"].endswith(f"minify --from {d['run_dir']}") and e["skill"] == "bisect"
    assert d["verdict"]["kind"] == "compile_only" and d["verdict"]["eager"]["exit_code"] == 0


def test_inductor_runtime_error_injected(triaged):
    d = triaged("err_inductor_runtime.py")
    (e,) = d["errors"]
    assert e["category"] == "compiled_runtime_error" and e["type"] == "RuntimeError"
    assert d["stats"]["graphs"] == 1
    assert d["verdict"]["kind"] == "compile_only"
    assert os.path.exists(os.path.join(d["run_dir"], "eager_check.stderr"))


def test_program_without_torch_compile(triaged):
    d = triaged("no_compile.py")
    assert d["status"] == "no-compile" and not d["used_compile"] and d["exit_code"] == 0
    assert not d["errors"] and not d["graph_breaks"]


def test_clean_program_points_to_perf(triaged):
    """A clean run says nothing about its results: Next offers the compiled-vs-eager output check first
    (wrong numbers are not slowness; blind A/B case ringbuffer), then perf."""
    d = triaged("clean.py")
    assert d["status"] == "clean" and d["stats"]["graphs"] == 1 and d["stats"]["ops"] >= 3
    first, second = d["next_steps"][:2]
    assert "triage --vs-eager -- " in first["command"] and "recompile" not in first["why"]
    assert second["skill"] == "trace-inductor" and " perf -- " in second["command"]


def test_markdown_report_and_artifacts(tmp_path):
    out = tmp_path / "run"
    p = run_cli("triage", "--out", str(out), "--", program("gb_print.py"), timeout=600, check=0)
    md = p.stdout
    assert md.startswith("# torch.compile triage: 1 graph-break site")
    assert "gb_print.py:8" in md and "GB0059" in md and str(out) in md
    files = set(os.listdir(out))
    assert {"report.json", "report.md", "target.stdout", "target.stderr", "trace"} <= files
    assert open(out / "target.stdout").read().count("step") == 2      # the program's own output is kept
    # ... and its last lines are in the report, so that seeing them needs no second run
    tail = json.load(open(out / "report.json"))["printed_tail"]
    assert [ln for ln in tail if ln.startswith("step")] == [ln for ln in open(out / "target.stdout").read().splitlines()
                                                              if ln.startswith("step")], tail
    assert "It printed (" in md and md.index("It printed (") < md.index("## Graph breaks"), md
    if shutil.which("tlparse"):
        assert (out / "tlparse" / "index.html").exists() and "tlparse" in md


def test_default_target_is_the_bundled_example(tmp_path):
    data, p = run_json("triage", "--no-tlparse", "--out", str(tmp_path / "r"), timeout=900)
    assert p.returncode == 0
    assert data["target"].endswith("examples/toy_train.py")
    ids = {b["gb_id"] for b in data["graph_breaks"]}
    assert {"GB0124", "GB0170"} <= ids
    kinds = {k for f in data["recompiles"] for k in f["kinds"]}
    assert {"shape", "grad_mode", "module_attribute"} <= kinds
    assert any(f["limit_hit"] for f in data["recompiles"])


def test_target_without_dashdash_and_with_args(tmp_path):
    prog = tmp_path / "args.py"
    prog.write_text("import sys, torch\nf = torch.compile(lambda x: x * int(sys.argv[1]), backend='eager')\n"
                    "print(f(torch.ones(2)).tolist())\n")
    out = tmp_path / "run"
    run_cli("triage", "--no-tlparse", "--out", str(out), str(prog), "3", timeout=300, check=0)
    assert open(out / "target.stdout").read().strip() == "[3.0, 3.0]"


def test_user_env_and_cwd_are_kept(tmp_path):
    prog = tmp_path / "cwd.py"
    prog.write_text("import os\nprint(os.getcwd(), os.environ.get('MY_FLAG'))\n")
    out = tmp_path / "run"
    run_cli("triage", "--no-tlparse", "--out", str(out), "--", "python", "cwd.py", cwd=str(tmp_path),
            env={"MY_FLAG": "42"}, timeout=300, check=0)
    assert open(out / "target.stdout").read().split() == [str(tmp_path), "42"]


@pytest.mark.parametrize("text,category,skill", [
    ("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\nCppCompileError: C++ compile error", "inductor_compile_error", "bisect"),
    ("RuntimeError: CUDA error: an illegal memory access was encountered", "cuda_illegal_memory_access", "bisect"),
    ("torch._inductor.exc.InvalidCxxCompiler: No working C++ compiler found in torch._inductor.config.cpp.cxx", "missing_cxx_compiler", "overview"),
    ("torch._dynamo.exc.Unsupported: Data-dependent branching\n  Explanation: Detected data-dependent branching", "graph_break_fullgraph", "trace-dynamo"),
    ("torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode: Could not guard on data-dependent expression Eq(u0, 1)", "data_dependent_guard", "export"),
    ("torch._dynamo.exc.InternalTorchDynamoError: AttributeError: 'NoneType' object has no attribute 'x'", "dynamo_internal_error", "bug-basher"),
    ("torch._dynamo.exc.FailOnRecompileLimitHit: recompile_limit reached with fullgraph=True", "recompile_limit", "trace-dynamo"),
    ("AssertionError: Tensor-likes are not close!\n\nMismatched elements: 3 / 16", "accuracy_mismatch", "bisect"),
    ("torch._dynamo.exc.UserError: Constraints violated (batch)! For more information, run with TORCH_LOGS=\"+dynamic\".", "export_error", "export"),
    ("Fatal Python error: Segmentation fault\n\nCurrent thread 0x00007f (most recent call first):", "segfault", "bisect"),
    ("ValueError: my own bug in data loading", "user_error", "overview"),
])
def test_from_text_classification(tmp_path, text, category, skill):
    f = tmp_path / "err.txt"
    f.write_text("Traceback (most recent call last):\n  File \"/home/u/train.py\", line 3, in <module>\n    main()\n" + text + "\n")
    data, p = run_json("triage", "--from-text", str(f), timeout=60)
    assert p.returncode == 0
    (e,) = data["errors"]
    assert (e["category"], e["skill"]) == (category, skill)


@pytest.mark.parametrize("warning", [
    # torch 2.9's words, then 2.14's and 2.15's
    "Unable to hit fast path of CUDAGraphs because of pending, uninvoked backwards. Consider running with "
    "torch.no_grad() or using torch._inductor.cudagraph_mark_step_begin() before each model invocation",
    "Unable to hit fast path of CUDAGraphs because outputs from a previous step still require backward. Ensure "
    "backward() is invoked or detach outputs. You may also call torch.compiler.cudagraph_mark_step_begin() before "
    "each model invocation.",
])
def test_from_text_log_without_an_exception(tmp_path, warning):
    """A pasted log of a slowdown (a CompileQA-Bench question) has no exception: not 'an error in the
    program'. PyTorch's warning in it is shown and, when known, named."""
    f = tmp_path / "log.txt"
    f.write_text("compile eval time 0: 0.53\n/opt/conda/lib/python3.10/site-packages/torch/_inductor/"
                 f"cudagraph_trees.py:2049: UserWarning: {warning}\n  warnings.warn(\ncompile eval time 1: 0.68\n")
    data, p = run_json("triage", "--from-text", str(f), timeout=60)
    (e,) = data["errors"]
    assert (e["category"], e["skill"]) == ("cudagraph_slow_path", "trace-inductor")
    assert data["warnings"] == [f"UserWarning: {warning}"]
    assert "torch.no_grad()" in e["advice"] and "cudagraph_mark_step_begin" in e["advice"]
    f.write_text("eager: 0.29\ncompile: 63.8\nW1126 21:54:17.079000 10710 torch/_dynamo/convert_frame.py:1000] "
                 "torch._dynamo hit config.recompile_limit (8)\n")
    data, p = run_json("triage", "--from-text", str(f), timeout=60)
    (e,) = data["errors"]
    assert e["category"] == "recompile_limit"
    f.write_text("eager: 0.29\ncompile: 63.8\n")
    p = run_cli("triage", "--from-text", str(f), timeout=60)
    assert p.stdout.startswith("# Classified: No exception or crash in this text `[no_error]`")
    assert "Error in the program" not in p.stdout and "triage -- <your command>" in p.stdout


# a pasted traceback (CompileQA J1-3, torch 2.1): DDPOptimizer's graph split passed an autocast object to torch.fx;
# the issue's text is cut off in the middle of torch's frames, below a torch/_dynamo/eval_frame.py frame
_DDP_AUTOCAST = """Traceback (most recent call last):
  File "elastic_ddp.py", line 330, in demo_basic
    loss, compile_time = timed(
  File "/opt/conda/lib/python3.8/site-packages/torch/_dynamo/eval_frame.py", line 328, in _fn
    return fn(*args, **kwargs)
  File "elastic_ddp.py", line 269, in <resume in train>
    predict = model(data[0])
  File "/opt/conda/lib/python3.8/site-packages/torch/nn/modules/module.py", line 1518, in _wrapped_call_impl
    return self._call_impl(*args, **kwargs)
{last}
"""


def test_from_text_does_not_call_an_error_under_compile_the_programs(tmp_path):
    """A text has no eager run: an unknown exception whose traceback passes through torch.compile's frames is not
    "Error in the program itself"; torch.fx's "argument of type" is its own row; a live traceback of the program's
    own raise inside a compiled call says so, and torch.fx's error from a live symbolic_trace gets the fx row."""
    f = tmp_path / "ddp.txt"
    f.write_text(_DDP_AUTOCAST.format(last="NotImplementedError: argument of type: "
                                      "<class 'torch.amp.autocast_mode.autocast'>"))
    data, p = run_json("triage", "--from-text", str(f), timeout=60)
    (e,) = data["errors"]
    assert (e["category"], e["skill"]) == ("fx_graph_argument", "trace-dynamo"), e
    assert "optimize_ddp = False" in e["advice"] and "autocast" in e["advice"]
    f.write_text(_DDP_AUTOCAST.format(last="NotImplementedError: a message no row knows"))
    p = run_cli("triage", "--from-text", str(f), timeout=60)
    assert p.stdout.startswith("# Classified: No known error class; raised inside a torch.compile call"), p.stdout
    assert "Error in the program" not in p.stdout and "triage -- <your command>" in p.stdout, p.stdout
    # live tracebacks (the programs run here without the CLI, as a user would paste them)
    # (review of 0.33.181) a plain torch.fx traceback is no compiled call; a PyTorch source checkout's frames are torch's
    fx_only = ('Traceback (most recent call last):\n  File "/home/a/trace_model.py", line 30, in <module>\n'
               '    gm = torch.fx.symbolic_trace(Head())\n  File "/usr/lib/python3.11/site-packages/torch/fx/'
               '_symbolic_trace.py", line 838, in trace\n    (self.create_arg(fn(*args)),),\n  File "/home/a/trace_model.py",'
               ' line 22, in forward\n    return self.lookup[x.shape[1]](x)\nKeyError: Proxy(getitem_1)\n')
    source = ('Traceback (most recent call last):\n  File "/home/a/train.py", line 41, in <module>\n    out = model(x)\n'
              '  File "/home/a/pytorch/torch/_dynamo/eval_frame.py", line 655, in _fn\n    return fn(*args, **kwargs)\n'
              '  File "/home/a/pytorch/torch/_dynamo/variables/dicts.py", line 412, in getitem_const\n'
              '    return self.items[Hashable(key)]\nKeyError: <ConstDictVariable._HashableTracker object at 0x7f>\n')
    # a KeyError in Inductor's scheduler while compiling: a code line naming `compiled_fn` is no runtime error
    sched = source.replace('  File "/home/a/pytorch/torch/_dynamo/variables/dicts.py", line 412, in getitem_const\n'
                           '    return self.items[Hashable(key)]\nKeyError: <ConstDictVariable._HashableTracker object '
                           'at 0x7f>\n',
                           '  File "/home/a/pytorch/torch/_inductor/compile_fx.py", line 812, in fx_codegen_and_compile\n'
                           '    compiled_fn = graph.compile_to_module().call\n  File "/home/a/pytorch/torch/_inductor/'
                           'scheduler.py", line 2101, in fuse_nodes_once\n    node2 = self.name_to_fused_node[buf]\n'
                           "KeyError: 'buf7'\n")
    assert "scheduler.py" in sched
    for text, category in ((fx_only, "user_error"), (source, "unknown_under_compile"), (sched, "inductor_compile_error")):
        f.write_text(text)
        data, p = run_json("triage", "--from-text", str(f), timeout=60)
        (e,) = data["errors"]
        assert e["category"] == category and "Raised in the program's own code" not in e["title"], e
    for prog, category, title in (("raise_inside_compiled.py", "user_error", "Raised in the program's own code"),
                                  ("fx_trace_config_object.py", "fx_graph_argument", "torch.fx could not store")):
        r = subprocess.run([sys.executable, program(prog)], capture_output=True, text=True, timeout=300)
        assert r.returncode == 1 and "Traceback" in r.stderr, r.stderr[-1500:]
        f.write_text(r.stderr)
        data, p = run_json("triage", "--from-text", str(f), timeout=60)
        (e,) = data["errors"]
        assert e["category"] == category and e["title"].startswith(title), e
        assert e["location"]["file"].endswith(prog), e


def test_from_text_stdin_markdown():
    p = subprocess.run([sys.executable, CLI, "triage", "--from-text", "-"], input="RuntimeError: CUDA error: an illegal memory access was encountered\n",
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "cuda_illegal_memory_access" in p.stdout and "bisect" in p.stdout


def test_recorded_multirank_trace_is_compared_not_merged(tmp_path):
    run_cli("triage", "--nproc", "2", "--no-tlparse", "--out", str(tmp_path / "mr"), "--", program("mr_break.py"),
            timeout=600, check=0)
    data, p = run_json("triage", "--out", str(tmp_path / "again"), "--trace", str(tmp_path / "mr" / "trace"), timeout=300)
    assert p.returncode == 0
    assert data["divergence"]["divergent"] and data["divergence"]["graph_breaks"], data["divergence"]
    assert len(data["ranks"]) == 2


def test_break_in_library_code_shows_chain_and_workarounds(triaged):
    """tinylib (a stand-in third-party package under a site-packages dir) logs and branches on data."""
    d = triaged("lib_chain.py")
    by = {(b["stack"][-1]["display"], b["gb_id"]): b for b in d["graph_breaks"]}
    log = by[("tinylib/layers.py", "GB0291")]
    branch = by[("tinylib/layers.py", "GB0170")]
    for b in (log, branch):
        assert b["in_library"] and b["library"] == "tinylib"
        assert (os.path.basename(b["location"]["file"]), b["location"]["line"]) == ("lib_chain.py", 12)
        assert [f["user"] for f in b["stack"]][:2] == [True, True] and b["stack"][-1]["user"] is False
        assert b["workarounds"][0]["source"] == "pytorch"
    assert [(f["function"], f["line"]) for f in branch["stack"][-2:]] == [("forward", 21), ("gate", 9)]
    codes = [w.get("code") or "" for w in branch["workarounds"]]
    assert "tinylib.layers.gate = torch.compiler.disable(tinylib.layers.gate)" in codes[-1] or any(
        "tinylib.layers.gate = torch.compiler.disable(tinylib.layers.gate)" in c for c in codes)
    assert any("ignore_logging_functions.add(logging.Logger.debug)" in (w.get("code") or "") for w in log["workarounds"])


def test_library_workarounds_work(tmp_path):
    """The two lines triage derives for lib_chain.py, applied at start-up without editing any file:
    the logging break is gone and Dynamo no longer traces into tinylib.layers.gate."""
    from cdlib.run import proc
    code = ("import logging, sys, os\n"
            "torch._dynamo.config.ignore_logging_functions.add(logging.Logger.debug)\n"
            "sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(sys.argv[0])), 'site-packages'))\n"
            "import tinylib.layers\n"
            "tinylib.layers.gate = torch.compiler.disable(tinylib.layers.gate)\n")
    env = proc.startup_env(str(tmp_path), [{"code": code}])
    data, p = run_json("triage", "--no-tlparse", "--out", str(tmp_path / "run"), "--", program("lib_chain.py"),
                       env=env, timeout=600)
    assert p.returncode == 0 and data["exit_code"] == 0, p.stderr
    ids = {b["gb_id"] for b in data["graph_breaks"]}
    assert "GB0291" not in ids and "GB0170" not in ids, ids


def test_data_dependent_value_used_as_size_gets_size_recipe(triaged):
    s = sites(triaged("gb_item_size.py"))
    size, branch = s[("gb_item_size.py", 5)], s[("gb_item_size.py", 11)]
    assert size["gb_id"] == branch["gb_id"] == "GB0124"
    assert size["fix"]["recipe_id"] == "construct:size" and "capture_scalar_outputs" in size["fix"]["fix"]
    assert "torch._check" in size["fix"]["fix"] and "torch.cond" not in size["fix"].get("code", "")
    assert branch["fix"]["recipe_id"] == "construct:branch" and "torch.cond" in branch["fix"]["fix"]


def test_recompile_every_cause_grouped(triaged):
    d = triaged("rc_multi.py")
    (f,) = d["recompiles"]
    causes = {c["cause"]: c for c in f["causes"]}
    assert causes["value of `self.top_k`"]["expected"] is False and causes["value of `self.top_k`"]["primary"] == 2
    assert causes["shape of `tokens` dim 1"]["expected"] and causes["value of `self.temperature`"]["expected"]
    md = run_cli("triage", "--trace", d["artifacts"]["trace_dir"], "--out", os.path.join(d["run_dir"], "md"),
                 timeout=300, check=0).stdout
    assert "value of `self.top_k` ×2" in md and "shape of `tokens` dim 1 ×1" in md and "expected: automatic dynamic" in md


def test_a_size_the_program_makes_static_is_named_with_its_line(triaged):
    """Blind A/B batch 11: a scorer compiled with dynamic=True loops over the batch (`for i in
    range(q.size(0))`), so every batch size recompiled up to the limit; the fix text blamed dynamic=False and
    lowerings. The trace's symbolic_shape_specialization event names the line: shown, with the fix for it."""
    d = triaged("rc_size_loop.py")
    f = {r["function"]: r for r in d["recompiles"]}
    c = next(c for c in f["maxsim"]["causes"] if c["cause"] == "shape of `q` dim 0")
    assert not c["expected"] and c["specialized_at"]["line"] == 10, c
    assert c["specialized_reason"] == "range_refined_to_singleton" and "unrolled once per size" in c["fix"], c
    # norms (dynamic=False) recompiles on an argument of the same name: not the loop's doing, its own fix
    (n,) = [c for c in f["norms"]["causes"] if c["cause"] == "shape of `q` dim 0"]
    assert "specialized_at" not in n and "unrolled" not in n["fix"], n
    step = d["next_steps"][0]
    assert "made static at rc_size_loop.py:10" in step["why"], step
    assert step["command"] and " fix --from " in step["command"], step   # norms' cause: config fixes apply
    md = run_cli("triage", "--trace", d["artifacts"]["trace_dir"], "--out", os.path.join(d["run_dir"], "md"),
                 timeout=300, check=0).stdout
    assert "Made static by your code at" in md and "`for i in range(q.size(0)):`" in md, md


def test_a_first_call_with_nothing_to_compute_leaves_nothing_compiled(triaged, tmp_path):
    """Found on a fresh program (stochastic-depth follow-up to blind A/B batch 11): a compiled forward whose
    first call returns early captures no graph, and Dynamo keeps running it eagerly. Triage called it
    "clean" (0 graphs). It says nothing compiled, names the function and the fix; the fix, applied to a
    copy (the first call computes), compiles."""
    d = triaged("empty_first_call.py")
    assert d["stats"]["graphs"] == 0 and d["stats"]["empty_frames"] == ["`forward` (empty_first_call.py:12)"], d["stats"]
    why = d["next_steps"][0]["why"]
    assert why.startswith("Dynamo traced `forward` (empty_first_call.py:12) and captured no graph"), why
    assert len(d["next_steps"]) == 1, d["next_steps"]           # not "compiles cleanly" / perf
    md = run_cli("triage", "--trace", d["artifacts"]["trace_dir"], "--out", os.path.join(d["run_dir"], "md"),
                 timeout=300, check=0).stdout
    assert "triage: nothing compiled: Dynamo captured no graph" in md, md
    fixed = tmp_path / "fixed.py"
    fixed.write_text(open(program("empty_first_call.py")).read().replace("    model(x, True)\n", ""))
    rep, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "r", "--", sys.executable, fixed, timeout=600)
    assert rep["stats"]["graphs"] >= 1 and "empty_frames" not in rep["stats"], rep["stats"]


_OPS = '''import torch


@torch.library.custom_op("tcase::write_rows", mutates_args={MUT})
def write_rows(buf: torch.Tensor, rows: torch.Tensor, pos: torch.Tensor) -> None:
    buf.index_copy_(0, pos, rows)


@write_rows.register_fake
def _(buf, rows, pos):
    return None
'''
_MAIN = '''import sys
import torch
from rows_ops import write_rows


def step(buf, x, pos):
    write_rows(buf, x * 2, pos)
    return buf.sum(0)


eager = step(torch.zeros(8, 4), torch.ones(2, 4), torch.tensor([1, 3]))
compiled = torch.compile(step)(torch.zeros(8, 4), torch.ones(2, 4), torch.tensor([1, 3]))
ok = torch.equal(eager, compiled)
print("match" if ok else "MISMATCH", compiled.tolist())
sys.exit(0 if ok else 1)
'''


@pytest.mark.slow
def test_custom_op_in_an_imported_module_and_a_stale_cache(tmp_path):
    """A custom op that writes in place but declares mutates_args=(), defined in a module the script
    imports, and a bare exit 1 (no traceback into the module): triage names the op's registration (blind
    A/B: it sent the agent to --vs-eager). After the fix, compare warns when the still-failing after run
    reused cached graphs (pytorch#187319: the cache key does not see mutates_args)."""
    (tmp_path / "rows_ops.py").write_text(_OPS.replace("{MUT}", "()"))
    (tmp_path / "main.py").write_text(_MAIN)
    env = {"TORCHINDUCTOR_CACHE_DIR": fresh_cache(tmp_path / "cache")}
    data, p = run_json("triage", "--no-tlparse", "--out", str(tmp_path / "before"), "--", sys.executable, "main.py",
                       cwd=str(tmp_path), env=env, timeout=600)
    (e,) = data["errors"]
    assert e["category"] == "custom_op_mutates_args" and "rows_ops.py" in e["advice"] and "buf" in e["advice"], e
    assert not os.path.exists(tmp_path / "before" / "accuracy_check")
    (tmp_path / "rows_ops.py").write_text(_OPS.replace("{MUT}", '("buf",)'))
    res, p = run_json("compare", str(tmp_path / "before"), "--out", str(tmp_path / "after"), "--", sys.executable,
                      "main.py", cwd=str(tmp_path), env=env, timeout=600)
    if res["after"]["exit_code"] != 0:    # the stale graph was served: say so
        assert res["after"]["cache_hits"] and "TORCHINDUCTOR_FORCE_DISABLE_CACHES=1" in res["note"], res
    env["TORCHINDUCTOR_FORCE_DISABLE_CACHES"] = "1"
    res, p = run_json("compare", str(tmp_path / "before"), "--out", str(tmp_path / "fresh"), "--", sys.executable,
                      "main.py", cwd=str(tmp_path), env=env, timeout=600)
    assert res["after"]["exit_code"] == 0, res


def test_python_value_failure_is_not_measured_for_rounding(tmp_path):
    """Only fails compiled on a None (a compiled function returning a generator loses its return value,
    pytorch#198190): no accuracy check run (rounding cannot make a None), the compiled function named."""
    data, p = run_json("triage", "--no-tlparse", "--out", str(tmp_path / "r"), "--", sys.executable,
                       program("only_compiled_generator_return.py"), timeout=600)
    (e,) = data["errors"]
    assert data["verdict"]["kind"] == "compile_only" and "on a Python value" in e["title"], e
    assert not os.path.exists(tmp_path / "r" / "accuracy_check")
    step = data["next_steps"][0]
    assert "`run` (only_compiled_generator_return.py:14)" in step["why"] and " bisect " in step["command"], step


def test_a_wrapper_bypassed_by_generate_is_named_and_its_fix_compiles(tmp_path):
    """Blind A/B batch 5: `torch.compile(model).generate(...)` never compiles anything. Triage names the
    call and the in-place fix; the fix, applied to a copy, compiles."""
    rep, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "r", "--", sys.executable,
                      program("never_ran_generate.py"), timeout=600)
    assert not rep["used_compile"] and rep["exit_code"] == 0, rep["verdict"]
    first = rep["next_steps"][0]["why"]
    assert "`compiled.generate(...)` at never_ran_generate.py:" in first and "model.compile(" in first, first
    fixed = tmp_path / "fixed.py"
    fixed.write_text(open(program("never_ran_generate.py")).read()
                     .replace("compiled = torch.compile(model)", "model.compile()\ncompiled = model"))
    rep2, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "r2", "--", sys.executable, fixed, timeout=600)
    assert rep2["used_compile"], rep2["next_steps"]
    assert not any("no compiled frame ran" in s["why"] for s in rep2["next_steps"])


def test_a_direct_forward_call_after_module_compile_is_named(tmp_path):
    """Blind A/B batch 7: `encoder.compile()` then `encode()` calls `self.forward(...)`: nothing compiles.
    Triage names the direct call and the fix (call the module); the fix, applied to a copy, compiles."""
    src = ("import torch\n\n\nclass Enc(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
           "        self.lin = torch.nn.Linear(8, 8)\n\n    def forward(self, x):\n        return torch.relu(self.lin(x))\n\n"
           "    def encode(self, x):\n        return self.forward(x)\n\n\nenc = Enc()\nenc.compile()\n"
           "print(enc.encode(torch.randn(4, 8)).sum().item() > -1)\n")
    prog = tmp_path / "encode.py"
    prog.write_text(src)
    rep, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "r", "--", sys.executable, prog, timeout=600)
    assert not rep["used_compile"] and rep["exit_code"] == 0, rep["verdict"]
    first = rep["next_steps"][0]["why"]
    assert "`self.forward(...)` at encode.py:13" in first and "`self(...)`" in first, first
    prog.write_text(src.replace("return self.forward(x)", "return self(x)"))
    rep2, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "r2", "--", sys.executable, prog, timeout=600)
    assert rep2["used_compile"], rep2["next_steps"]


def test_a_program_that_exports_is_not_called_a_compile_that_never_ran(tmp_path):
    """Blind A/B batch 7: a BERT classifier exported in train mode (dropout traced live) fails its parity
    check; triage said only 'torch.compile never ran'. It now names the export call and the export skill,
    with the module-mode fact."""
    prog = tmp_path / "export_serve.py"
    prog.write_text("import torch\nfrom torch.export import export\n\n"
                    "model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Dropout(0.3)).train()\n"
                    "ep = export(model, (torch.randn(2, 8),))\n"
                    "x = torch.randn(2, 8)\nprint('same twice:', torch.equal(ep.module()(x), ep.module()(x)))\n")
    rep, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "r", "--", sys.executable, prog, timeout=600)
    assert not rep["used_compile"] and rep["exit_code"] == 0, rep["verdict"]
    first = rep["next_steps"][0]
    assert first["skill"] == "export" and "`export(...)` at export_serve.py:5" in first["why"], first
    assert "model.eval()" in first["why"] and "never reached torch.compile" not in first["why"]


def test_a_failing_check_of_an_exported_program_names_the_export_and_its_mode(tmp_path):
    """Blind A/B batch 19: a classifier exported right after training (still in train mode) fails its
    exported-vs-eager check; the verdict said "failed before torch.compile ran" and the Next was generic.
    Now the verdict names the export call, and the Next the export skill and the module-mode fact, which
    holds on the installed torch (ep.module().eval() raises; the exported graph keeps dropout)."""
    rep, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "r", "--", sys.executable,
                      program("export_train_mode.py"), timeout=600)
    assert not rep["used_compile"] and rep["exit_code"] == 1, rep["verdict"]
    assert rep["verdict"]["summary"].startswith("torch.compile never ran: the program uses torch.export "
                                                "(export_train_mode.py:19 `torch.export.export(...)`)"), rep["verdict"]
    first = rep["next_steps"][0]
    assert first["skill"] == "export" and "model.eval() before torch.export.export" in first["why"], first
    fact = subprocess.run([sys.executable, "-c",
                           "import torch\nm = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.5))\n"
                           "ep = torch.export.export(m, (torch.randn(2, 4),))\n"
                           "print([str(n.target) for n in ep.graph.nodes if n.op == 'call_function'])\n"
                           "ep.module().eval()"], capture_output=True, text=True, timeout=300)
    assert "aten.dropout.default" in fact.stdout, fact.stdout + fact.stderr[-1000:]
    assert "NotImplementedError: Calling eval() is not supported yet" in fact.stderr, fact.stderr[-1000:]
    # not when the program also compiles, nor for a failure above the export call (review)
    src = open(program("export_train_mode.py")).read()
    for name, text in (("also_compiles.py", src.replace("ep = torch.export", "torch.compile(model)\nep = torch.export")),
                       ("loads_first.py", src.replace("torch.manual_seed(0)\n", "torch.manual_seed(0)\n{}['data']\n", 1))):
        prog = tmp_path / name
        prog.write_text(text)
        r, _ = run_json("triage", "--no-tlparse", "--no-eager-check", "--out", tmp_path / name[:-3], "--",
                        sys.executable, prog, check=0, timeout=600)
        assert "torch.export" not in r["verdict"]["summary"] and r["next_steps"][0]["skill"] != "export", r["verdict"]


def test_a_crash_only_compiled_names_the_programs_fake_kernels_before_bisect(tmp_path):
    """Blind A/B batch 20: a custom op keeps a data-dependent number of indices while its fake kernel declares
    one per input; with none kept, compiled code sized by the fake kernel segfaults where eager passes. The
    Next was bisect; now the fake kernels come first, with new_dynamic_size, and bisect after them."""
    rep, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "r", "--", sys.executable,
                      program("fake_kernel_fixed_length.py"), check=0, timeout=600)
    if rep["exit_code"] == 0:
        pytest.skip("this torch checks the fake kernel's size before indexing (no crash)")
    assert rep["verdict"]["kind"] == "compile_only", rep["verdict"]
    first = rep["next_steps"][0]["why"]
    assert first.startswith("the program registers fake kernels (fake_kernel_fixed_length.py:13 (keep_above))"), first
    assert "new_dynamic_size()" in first and "opcheck" in first, first
    assert any(" bisect " in (s["command"] or "") for s in rep["next_steps"][1:]), rep["next_steps"]


def test_a_data_dependent_number_under_torch_compile_is_not_sent_to_export(tmp_path):
    """Blind A/B batch 6: BatchNorm1d(momentum=None) under fullgraph=True fails on float(num_batches_tracked);
    the triage row is shared with torch.export, whose command and torch._check advice do not apply here."""
    rep, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "r", "--", sys.executable,
                      program("dd_batchnorm_cma.py"), timeout=600)
    assert rep["errors"][0]["category"] == "data_dependent_guard", rep["errors"][0]["category"]
    first = rep["next_steps"][0]
    assert first["skill"] == "trace-dynamo" and "BatchNorm" in first["why"] and not first["command"], first
    assert not any(" export " in (s["command"] or "") for s in rep["next_steps"]), rep["next_steps"]


def test_a_dynamo_crash_on_a_logged_item_is_one_error_and_the_log_recipe(tmp_path):
    """Blind A/B batch 9 (HF GPT-2 monitoring hooks): an f-string with `:.3f` on `.item()` values crashes
    Dynamo on the second call (InternalTorchDynamoError wrapping a ValueError). The trace records the inner
    ValueError too: it was listed a second time as "Error in the program itself" beside the verdict "only
    fails compiled". And the break on the f-string's second line is a logged value (the statement is a
    log.debug call), whose recipe says a logger's arguments are built even at a level that is off."""
    rep, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "r", "--", sys.executable,
                      program("dynamo_fstring_item_log.py"), timeout=600)
    assert rep["verdict"]["kind"] == "compile_only", rep["verdict"]
    assert [e["category"] for e in rep["errors"]] == ["dynamo_internal_error"], [(e["type"], e["category"]) for e in rep["errors"]]
    assert rep["errors"][0]["compile_id"]          # the trace's failed compile is attached to it
    second = [b for b in rep["graph_breaks"] if b["location"]["line"] == 15]
    assert second and second[0]["fix"]["category"] == "printed/logged tensor value", second
    assert "isEnabledFor" in second[0]["fix"]["fix"] and "torch.compiler.disable" in second[0]["fix"]["fix"]


def test_a_dynamo_crash_at_a_user_line_gets_the_one_line_repro_before_minify(tmp_path):
    """An ONNX-converted reshape builds torch.Size from an int64 buffer (blind A/B batch 13, pytorch#182651):
    InternalTorchDynamoError at the user's line. The first step names the line and the repro that needs no
    minifier (that line alone under backend="eager"), minify only after; both claims hold on the installed
    torch: the line alone reproduces under backend="eager", and Python ints work around it."""
    rep, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "r", "--", sys.executable,
                      program("dynamo_size_of_tensor.py"), timeout=600)
    assert [e["category"] for e in rep["errors"]] == ["dynamo_internal_error"], rep["errors"]
    why = rep["next_steps"][0]["why"]
    assert why.startswith("Dynamo crashed tracing your line") and "dynamo_size_of_tensor.py:22" in why \
        and "torch.Size(shape)" in why and 'backend="eager"' in why, why
    alone = subprocess.run([sys.executable, "-c", "import torch\n"
                            "f = lambda x, shape: torch.reshape(x, torch.Size(shape))\n"
                            "torch.compile(f, backend='eager')(torch.randn(2, 3, 4), torch.tensor([2, -1]))"],
                           capture_output=True, text=True, timeout=600)
    assert "InternalTorchDynamoError" in alone.stderr and "FakeTensor" in alone.stderr, alone.stderr[-400:]
    ok = subprocess.run([sys.executable, program("dynamo_size_of_tensor.py")], capture_output=True, text=True,
                        env=dict(os.environ, FIX="ints"), timeout=600)
    assert ok.returncode == 0 and "max diff 0.0e+00" in ok.stdout, ok.stderr[-400:]


def test_a_fake_tensor_kept_by_hooks_during_export_is_named_not_the_line_that_reads_it(tmp_path):
    """Blind A/B batch 52: activation-range hooks stayed attached while torch.export traced; float() on a recorded
    value raised GuardOnDataDependentSymNode (zuf0) in eager code, and the report said "fix your program at" that
    line with the .item() advice. Now: a value kept from the trace, where to look and how (remove the hooks before
    export), which the test runs (FIXED=1 exits 0)."""
    prog = program("export_hooks_keep_fake.py")
    rep, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "r", "--", sys.executable, prog, timeout=600)
    (e,) = rep["errors"]
    assert e["category"] == "data_dependent_guard" and e["inner"].get("escaped"), e
    why = rep["next_steps"][0]["why"]
    src = open(prog).read().splitlines()
    line = next(i for i, ln in enumerate(src, 1) if ln.startswith('print(f"absmax'))
    assert f"export_hooks_keep_fake.py:{line} read a value made while torch.export" in why and \
        "handle.remove()" in why and "is_exporting()" in why, why
    assert ".item()" not in e["advice"], e["advice"]
    ok = subprocess.run([sys.executable, prog], capture_output=True, text=True, env=dict(os.environ, FIXED="1"),
                        timeout=600)
    assert ok.returncode == 0 and "absmax" in ok.stdout, ok.stderr[-400:]
    # batch 59: the kept value reaches json.dumps as a SymFloat (TypeError, no guard): the same lead, not the
    # export advice about constants and shapes
    rep, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "j", "--", sys.executable, prog, timeout=600,
                      env={"READ": "json"})
    (e,) = rep["errors"]
    assert e["type"] == "TypeError" and e["inner"].get("escaped"), e
    why = rep["next_steps"][0]["why"]
    line = next(i for i, ln in enumerate(src, 1) if ln.strip().startswith("print(json.dumps"))
    assert f"export_hooks_keep_fake.py:{line} read a value made while torch.export" in why and \
        "handle.remove()" in why and "constant" not in why, why


def test_escaped_trace_value_needs_no_tracer_on_the_stack():
    from types import SimpleNamespace as L
    from cdlib.decide.error_rows import escaped_trace_value
    user = [L(file="/p/prog.py"), L(file="/v/torch/fx/experimental/sym_node.py")]
    assert escaped_trace_value("data_dependent_guard", "zuf0", user)
    assert not escaped_trace_value("data_dependent_guard", "u0", user[:1] + [L(file="/v/torch/_dynamo/eval_frame.py")])
    assert not escaped_trace_value("data_dependent_guard", "u0", user[:1] + [L(file="/v/torch/export/_trace.py")])
    assert not escaped_trace_value("user_error", "x", user)
    assert escaped_trace_value("user_error", "Object of type SymFloat is not JSON serializable", user)
    assert not escaped_trace_value("user_error", "Object of type SymFloat is not JSON serializable",
                                   user[:1] + [L(file="/v/torch/_dynamo/eval_frame.py")])


def test_a_dynamo_crash_under_vmap_grad_names_the_transform_and_no_disable_workaround(tmp_path):
    """A custom autograd.Function under vmap(grad(...)) inside torch.compile (blind A/B batch 51, pytorch#129845):
    the line alone is no repro and torch.compiler.disable inside the transform fails too. The step names the
    transforms and the is_compiling formula, which the test runs (per-example gradients equal eager's)."""
    rep, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "r", "--", sys.executable,
                      program("functorch_autograd_fn_vmap.py"), timeout=600)
    assert [e["category"] for e in rep["errors"]] == ["dynamo_internal_error"], rep["errors"]
    err, why = rep["errors"][0], rep["next_steps"][0]["why"]
    assert err["inner"]["under"] == ["vmap", "grad"] and "torch.compiler.disable on the function" not in err["advice"]
    assert "under torch.func's vmap(grad(...))" in why and "functorch_autograd_fn_vmap.py:35" in why \
        and "is_compiling()" in why and "torch.compiler.disable is not a workaround" in why, why
    ok = subprocess.run([sys.executable, program("functorch_autograd_fn_vmap.py")], capture_output=True, text=True,
                        env=dict(os.environ, FIX="formula"), timeout=600)
    assert ok.returncode == 0 and "max diff" in ok.stdout, ok.stderr[-400:]
    assert float(ok.stdout.split("max diff")[1]) < 1e-5, ok.stdout


def test_functorch_transforms_read_from_dynamos_user_stack():
    from cdlib.decide.error_rows import functorch_transforms
    msg = ('RuntimeError: You tried to vmap over ApplyTemplate\nfrom user code:\n'
           '   File "/v/torch/_functorch/apis.py", line 246, in wrapped\n    return vmap_impl(\n'
           '  File "/v/torch/_functorch/vmap.py", line 316, in vmap_impl\n    return _flat_vmap(\n'
           '  File "/v/torch/_functorch/eager_transforms.py", line 1541, in grad_impl\n    x\n'
           '  File "/v/torch/_functorch/eager_transforms.py", line 1492, in grad_and_value_impl\n    x\n'
           '  File "/u/act.py", line 44, in forward\n    return F.apply(x)\n')
    assert functorch_transforms(msg) == ["vmap", "grad"]
    assert functorch_transforms(msg.split("from user code:")[0]) == []   # torch's own frames above it: not the user's


_FAKE_OPS = '''import numpy as np
import torch


@torch.library.custom_op("tcase::smooth", mutates_args=())
def smooth(x: torch.Tensor) -> torch.Tensor:
    return torch.from_numpy(np.cumsum(np.ascontiguousarray(x.detach().numpy()), axis=-1) * 0.5)


@smooth.register_fake
def _(x):
    return FAKE
'''
_FAKE_MAIN = '''import torch
from fk_ops import smooth


def step(h):
    return smooth(h.transpose(1, 2)).sum(-1)


torch.manual_seed(0)   # a sum of cumsums: rounding differs compiled and eager, so a seed and an atol (unseeded, it
h = torch.randn(2, 8, 16)   # failed the default atol 1e-8 once in a loaded run)
assert torch.allclose(torch.compile(step)(h), step(h), atol=1e-5)
print("match")
'''


@pytest.mark.slow
def test_a_fake_kernel_with_other_strides_is_named_and_its_stale_cache_measured(tmp_path):
    """Blind A/B batch 11: a numpy-backed custom op whose fake kernel is torch.empty_like(x) on a transposed
    input (the real kernel returns a contiguous tensor): inductor's size/stride assert. Triage said "shape/dtype";
    it now names the strides (real vs fake per dim), the contiguous fake and a non-contiguous opcheck sample, and
    that a warm cache keeps the old graph. That claim is measured here: after the fix, a warm cache still
    fails; with caches off it passes."""
    (tmp_path / "fk_ops.py").write_text(_FAKE_OPS.replace("FAKE", "torch.empty_like(x)"))
    (tmp_path / "main.py").write_text(_FAKE_MAIN)
    env = {"TORCHINDUCTOR_CACHE_DIR": fresh_cache(tmp_path / "cache")}
    data, p = run_json("triage", "--no-tlparse", "--out", str(tmp_path / "before"), "--", sys.executable, "main.py",
                       cwd=str(tmp_path), env=env, timeout=600)
    (e,) = data["errors"]
    assert e["category"] == "custom_op_bad_fake", e
    why = data["next_steps"][0]["why"]
    assert "other strides" in why and "dim 1: real 8 vs fake 1, dim 2: real 1 vs fake 16" in why and "x.new_empty(x.shape)" in why, why
    assert "x.transpose(1, 2)" in why and "TORCHINDUCTOR_FORCE_DISABLE_CACHES=1" in why, why
    (tmp_path / "fk_ops.py").write_text(_FAKE_OPS.replace("FAKE", "x.new_empty(x.shape)"))
    import subprocess
    run = lambda **kw: subprocess.run([sys.executable, "main.py"], cwd=str(tmp_path), capture_output=True,  # noqa: E731
                                      text=True, timeout=600, env=dict(os.environ, **env, **kw))
    stale = run()
    assert stale.returncode != 0 and "stride" in stale.stderr, stale.stdout + stale.stderr[-1500:]
    fresh = run(TORCHINDUCTOR_FORCE_DISABLE_CACHES="1")
    assert fresh.returncode == 0 and "match" in fresh.stdout, fresh.stderr[-1500:]


def test_the_fake_kernel_stride_step_reads_which_side_is_contiguous():
    """Review of batch 11's fix: the stride step assumed the fake copies the input's layout; the reverse (a
    real kernel that keeps a transposed layout, a contiguous fake) got the advice the fake already follows.
    It reads which side is row-major from the strides; a torch (aten) op gets no custom-op step."""
    from types import SimpleNamespace
    from cdlib.decide import custom_op_code
    msg = "expected size {0}==64, stride {1}==128 at dim=1; expected size 128==128, stride {2}==1 at dim=2"
    e = lambda m: SimpleNamespace(inner={}, message=m)   # noqa: E731
    # real contiguous (128, 1), fake transposed (1, 64)
    why = custom_op_code.bad_fake_step(e("expected size 64==64, stride 128==1 at dim=1; expected size 128==128, "
                                   "stride 1==64 at dim=2"), "ns::op")
    assert "return x.new_empty(x.shape) from the fake" in why, why
    # real transposed (1, 64), fake contiguous (128, 1)
    why = custom_op_code.bad_fake_step(e(msg.format(64, 1, 64)), "ns::op")
    assert "return .contiguous() from the real kernel" in why and "x.new_empty(x.shape) from the fake" not in why, why
    assert custom_op_code.bad_fake_step(e(msg.format(64, 1, 64)), "aten::mm") is None
    assert custom_op_code.bad_fake_step(e(msg.format(64, 1, 64)), None) is None


def test_size_pinned_by_float_math_names_the_line_and_integer_arithmetic(tmp_path):
    """n = int(np.ceil(length / patch)) pins the length (guard `(x.size()[1] / 8) == 5.0`; blind A/B batch
    12, PatchTST): each new length recompiles. The cause names that line and integer ceil division; the Next
    is the edit and compare, not `fix` (no flag keeps the size dynamic); and the fix compiles once."""
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3", program("rc_float_ceil.py"),
                    timeout=600)
    (f,) = d["recompiles"]
    (c,) = [c for c in f["causes"] if c["kind"] == "size_arithmetic"]
    assert c["location"]["line"] == 11 and "np.ceil" in c["location"]["code"], c
    assert "(n + k - 1) // k" in c["fix"] and not c["expected"]
    step = d["next_steps"][0]
    assert step["edit_only"] and "rc_float_ceil.py:11" in step["why"] and " compare " in step["why"], step
    src = open(program("rc_float_ceil.py")).read().replace("int(np.ceil(x.shape[1] / patch))",
                                                           "(x.shape[1] + patch - 1) // patch")
    (tmp_path / "fixed.py").write_text(src)
    cmp_, _ = run_json("compare", tmp_path / "t", "--", "python3", tmp_path / "fixed.py", check=0, timeout=600)
    assert cmp_["before"]["recompiles"] == 3 and cmp_["after"]["recompiles"] == 1, cmp_["after"]
    assert cmp_["output"] == "same", cmp_["output"]


def test_a_size_pinned_in_a_fake_kernel_names_its_line_and_the_stale_cache(tmp_path):
    """Blind A/B batch 29: a custom op's fake kernel computed its chunk count with int(math.ceil(T / chunk)), so
    every length recompiled up to the limit under dynamic=True; the report named only the op's call and a generic
    shape fix. torch names the fake kernel's line in parentheses after the guard's: the cause says so, with
    integer ceil division, and that the compile cache must be cleared after the edit (the fixed program with the
    old cache still recompiles on 2.15; with a new one it compiles once)."""
    prog = program("rc_fake_kernel_ceil.py")
    cache = {"TORCHINDUCTOR_CACHE_DIR": fresh_cache(tmp_path / "cache")}
    d, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, env=cache,
                    timeout=600)
    (f,) = d["recompiles"]
    (c,) = [c for c in f["causes"] if not c["expected"]]
    assert c["specialized_at"]["line"] == 21 and "int(math.ceil(" in c["specialized_at"]["code"], c
    assert c["specialized_reason"] == "in the fake kernel chunk_pool" and "(n + k - 1) // k" in c["fix"], c
    assert "clear TORCHINDUCTOR_CACHE_DIR" in c["fix"], c["fix"]

    def graphs(env):
        p = subprocess.run([sys.executable, prog], env={**os.environ, "FIXED": "1", **env}, capture_output=True,
                           text=True, timeout=600)
        assert p.returncode == 0, p.stderr[-2000:]
        return p.stdout.strip().splitlines()[-1]
    from cdlib.decide import knowledge
    if knowledge.installed_torch_version() >= (2, 15):   # the AOTAutograd cache replays the fake kernel's guards
        assert graphs(cache) == "graphs: 5"
    assert graphs({"TORCHINDUCTOR_CACHE_DIR": fresh_cache(tmp_path / "new-cache")}) == "graphs: 1"


def test_part_of_a_compiled_program_that_runs_uncompiled_is_named(tmp_path):
    """Compiled frames ran (the training step), so nothing says "never ran", yet evaluation goes through a
    method called on the torch.compile wrapper and a loss function's torch.compile result is thrown away.
    The report names both lines, with a fix that fits each (a function has no .compile()); the claims hold on
    the installed torch: the wrapper's method compiles no frame, model.compile() + model.predict does."""
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3", program("partly_compiled.py"),
                    timeout=600)
    whys = [s["why"] for s in d["next_steps"] if s["why"].startswith("this part runs uncompiled: ")]
    assert len(whys) == 2, d["next_steps"]
    assert "`torch.compile(smoothed_loss)` at partly_compiled.py:35" in whys[0] and "@torch.compile" in whys[0] \
        and "smoothed_loss.compile()" not in whys[0], whys[0]
    assert "`scorer.predict(...)` at partly_compiled.py:44" in whys[1] and "model.compile(" in whys[1], whys[1]
    check = subprocess.run([sys.executable, "-c", (
        "import torch, torch.nn as nn\nfrom torch._dynamo.utils import counters\n"
        "class M(nn.Module):\n    def __init__(s):\n        super().__init__(); s.l = nn.Linear(4, 4)\n"
        "    def forward(s, x): return s.l(x)\n    def predict(s, x): return s(x).argmax(-1)\n"
        "m = M(); x = torch.randn(2, 4); torch.compile(m).predict(x); a = counters['frames']['total']\n"
        "m.compile(); m.predict(x); print(a, counters['frames']['total'])")],
        capture_output=True, text=True, timeout=600)
    assert check.stdout.split() == ["0", "1"], (check.stdout, check.stderr[-400:])


def test_dynamic_false_is_named_with_its_line_when_sizes_recompile(tmp_path):
    """A function compiled with dynamic=False and called with three lengths: the compile's dynamo_config
    (compilation_metrics) has automatic dynamic off, so the shape cause says so, a second size is not called
    "automatic dynamic" (it does not apply), and the Next names the line; dropping dynamic=False leaves one
    recompile, expected."""
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3", program("rc_dynamic_false.py"),
                    timeout=600)
    (fr,) = d["recompiles"]
    (c,) = fr["causes"]
    assert c["kind"] == "shape" and not c["expected"] and c["static_option"] and "dynamic=False" in c["fix"], c
    assert "compiled with dynamic=False at rc_dynamic_false.py:5" in d["next_steps"][0]["why"], d["next_steps"]
    (tmp_path / "fixed.py").write_text(open(program("rc_dynamic_false.py")).read().replace("(dynamic=False)", ""))
    cmp_, _ = run_json("compare", tmp_path / "t", "--", "python3", tmp_path / "fixed.py", check=0, timeout=600)
    assert cmp_["after"]["recompiles"] == 1, cmp_["after"]
    # the config flag set globally, beside another function's dynamic=False: the flag's line is named
    (tmp_path / "flagged.py").write_text(open(tmp_path / "fixed.py").read().replace(
        "import torch\n", "import torch\ntorch._dynamo.config.automatic_dynamic_shapes = False\n"
        "head = torch.compile(lambda t: t * 2, dynamic=False)\n", 1))
    g, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "g", "--", "python3", tmp_path / "flagged.py",
                    timeout=600)
    assert "automatic_dynamic_shapes = False at flagged.py:" in g["next_steps"][0]["why"], g["next_steps"]


@pytest.mark.slow
def test_hf_generate_with_a_growing_cache_gets_the_static_cache_setting(tmp_path):
    """A tiny Llama's forward compiled with dynamic=False and run through generate(): the default cache
    grows a token per step, so every step recompiles. The cause gets transformers' setting
    (cache_implementation="static") and the Next names the dynamic=False line; with the setting the run has
    one recompile, and it is expected (prefill then decode: the number of keyword arguments changes)."""
    pytest.importorskip("transformers")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3",
                    program("hf_llama_generate.py"), timeout=900)
    causes = {c["cause"]: c for f in d["recompiles"] for c in f["causes"]}
    kv = next(c for k, c in causes.items() if "past_key_values" in k)
    assert not kv["expected"] and 'cache_implementation="static"' in kv["fix"], kv
    why = d["next_steps"][0]["why"]
    assert "dynamic=False at hf_llama_generate.py:14" in why and "a library setting avoids it" in why, why
    ok, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "s", "--", "python3",
                     program("hf_llama_generate.py"), env={"CACHE_IMPL": "static"}, timeout=900)
    assert ok["exit_code"] == 0 and all(c["expected"] for f in ok["recompiles"] for c in f["causes"]), ok["recompiles"]
    assert sum(len(f["recompiles"]) for f in ok["recompiles"]) == 1, ok["recompiles"]
    assert ok["printed_tail"][0].split(" in ")[0] == [ln for ln in d["printed_tail"] if ln.startswith("trial 0")][0] \
        .split(" in ")[0], (ok["printed_tail"], d["printed_tail"])


def test_a_dict_with_other_keys_is_named_as_such_not_as_a_string(tmp_path):
    """A multi-task loss looping over a labels dict whose keys depend on the batch (blind A/B batch 13):
    Dynamo guards `list(dict.keys(labels))[0] == 'topic'`. The cause reads "keys of `labels`" with the
    dict_keys fix, not python_str's (a string the program computes with); with the same keys in the same
    order on every call the function compiles once."""
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3", program("rc_dict_keys.py"),
                    timeout=600)
    causes = [c for f in d["recompiles"] for c in f["causes"]]
    assert any(c["kind"] == "dict_keys" and c["cause"] == "keys of `labels`" for c in causes), causes
    assert not any(c["kind"] == "python_str" for c in causes), causes
    assert "keys of `labels`" in d["next_steps"][0]["why"], d["next_steps"]
    src = open(program("rc_dict_keys.py")).read().replace(
        "SOURCES[step % len(SOURCES)]", "(\"topic\", \"sentiment\", \"intent\")")
    (tmp_path / "fixed.py").write_text(src)
    cmp_, _ = run_json("compare", tmp_path / "t", "--", "python3", tmp_path / "fixed.py", check=0, timeout=600)
    assert cmp_["after"]["recompiles"] == 0, cmp_["after"]


@pytest.mark.slow
def test_a_growing_module_buffer_is_named_with_the_preallocated_fix(tmp_path):
    """Blind A/B batch 42: a KV cache registered as buffers and grown with torch.cat per decode step recompiled on
    every token under dynamic=True (buffers stay static); perf's Fix was the shape kind's (drop dynamic=False,
    maybe_mark_dynamic), which cannot help a buffer. The module_buffer_shape kind names the buffer and the
    preallocated in-place cache, which compiles once."""
    prog = program("rc_buffer_kv_cache.py")
    d, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=600)
    causes = [c for f in d["recompiles"] for c in f["causes"]]
    assert causes and all(c["kind"] == "module_buffer_shape" for c in causes), causes
    md = (tmp_path / "t" / "report.md").read_text()
    assert "index_copy_" in md and "force_parameter_static_shapes" in md and "maybe_mark_dynamic" not in md, md
    cmp_, _ = run_json("compare", tmp_path / "t", "--", sys.executable, prog, "--prealloc", check=0, timeout=600)
    assert cmp_["after"]["recompiles"] == 0 and cmp_["after"]["exit_code"] == 0, cmp_["after"]


def test_one_hot_without_num_classes_gets_its_own_recipe(tmp_path):
    """Blind A/B batch 43: F.one_hot(targets) under fullgraph=True (GB0246) got the data-dependent branch's recipe
    (torch.where / torch.cond) for code with no branch. Its recipe names num_classes from the logits, which runs."""
    prog = program("gb_one_hot_classes.py")
    d, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=600)
    md = (tmp_path / "t" / "report.md").read_text()
    assert "GB0246" in md and "num_classes=logits.shape[-1]" in md and "torch.cond" not in md, md
    fixed = subprocess.run([sys.executable, prog, "--fixed"], capture_output=True, text=True, timeout=600)
    assert fixed.returncode == 0 and "loss" in fixed.stdout, fixed.stderr[-2000:]


def test_a_torch_compile_call_that_raised_and_was_caught_is_named(tmp_path):
    """Blind A/B batch 36: torch.compile(fn, mode=..., options=...) raised inside the program's try/except, which
    logged a warning and ran eagerly; triage said "never reached torch.compile ... run it with --no-compile to
    compile" and perf "0 graphs", Next the kernels. One more run records the raise: the Next names the call's
    line and torch's message (and perf says so); the merged options compile."""
    prog = program("never_ran_compile_raised.py")
    d, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=600)
    first = d["next_steps"][0]
    assert first["why"].startswith("torch.compile was called at never_ran_compile_raised.py:20 `return torch.compile("
                                   "fn, mode=mode, options=options)` and raised RuntimeError: Either mode or options"), first
    assert "list_mode_options" in first["why"] and first.get("decides"), first
    assert not any("--no-compile" in s["why"] for s in d["next_steps"]), d["next_steps"]
    p = run_cli("perf", "--out", tmp_path / "p", "--", sys.executable, prog, timeout=600)
    assert "Nothing was compiled" in p.stdout and "Next: torch.compile was called at never_ran_compile_raised.py:20" \
        in p.stdout and "the kernels" not in p.stdout, p.stdout[-1500:]
    cmp_, _ = run_json("compare", tmp_path / "t", "--", "env", "FIXED=1", sys.executable, prog, check=0, timeout=600)
    assert cmp_["after"]["graphs"] >= 1, cmp_["after"]


def test_a_compiled_optimizer_step_given_new_state_tensors_is_named_as_such(tmp_path):
    """Blind A/B batch 35: a compiled AdamW step recompiled after every checkpoint rollback; the guard
    `___check_obj_id(self.state[list(dict.keys(self.state))[0]][...])` was filed as "keys of self.state" with the
    dict-keys fix. It is an identity check on a state tensor that opt.load_state_dict replaced: the kind says so
    and its fix restores in place; with the state copied into the existing tensors there is no recompile."""
    prog = program("recompile_optimizer_rollback.py")
    d, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=600)
    causes = [c for f in d["recompiles"] for c in f["causes"]]
    assert causes and all(c["kind"] == "optimizer_state_identity" for c in causes), causes
    assert "Restore in place" in causes[0]["fix"] and "load_state_dict" in causes[0]["fix"], causes[0]
    cmp_, _ = run_json("compare", tmp_path / "t", "--", "env", "IN_PLACE=1", sys.executable, prog, check=0,
                       timeout=600)
    assert cmp_["after"]["recompiles"] == 0 and cmp_["verdict"].startswith("better"), cmp_["verdict"]


def test_recompiles_on_a_dim_the_program_marks_dynamic_name_the_lost_mark(tmp_path):
    """Blind A/B batch 35: a collate_fn marked the length of a float64 batch, the loop's .to(dtype=float32) made a
    new tensor without the mark, and dynamic=False compiled a graph per length; the fix text said "drop
    dynamic=False". A marked dim gets no size guard, so the fix now leads with the mark (its line) and the Next
    offers no `fix --from` (an edit); marking the tensor passed in compiles once."""
    prog = program("recompile_mark_dynamic_lost.py")
    d, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=600)
    c = d["recompiles"][0]["causes"][0]
    assert c["cause"] == "shape of `feats` dim 1" and c["fix"].startswith(
        "The program marks this dim dynamic (recompile_mark_dynamic_lost.py:12 `torch._dynamo.mark_dynamic(batch, 1)`)"), c
    first = d["next_steps"][0]
    assert "marks the dim dynamic at recompile_mark_dynamic_lost.py:12" in first["why"], first
    assert "fix --from" not in (first["command"] or ""), first
    cmp_, _ = run_json("compare", tmp_path / "t", "--", "env", "FIXED=1", sys.executable, prog, check=0, timeout=600)
    assert cmp_["after"]["recompiles"] == 0 and cmp_["verdict"].startswith("better"), cmp_["verdict"]


def test_unused_compile_findings_only_where_the_source_makes_them_certain(tmp_path):
    """The source check behind "this part runs uncompiled" (review of this change): a model-running method
    called through the wrapper is named even when its name starts with get_; the wrapper's own .forward is
    compiled (not named); a call before the compile line or in another function's `model` is not the
    wrapper's; a setup method is skipped and does not hide a later real call; a thrown-away compile of a
    bound method is told to rebind, not to call .compile() (which a method does not have)."""
    from cdlib.read.never_ran import findings
    src = tmp_path / "prog.py"
    src.write_text("""import torch
import torch.nn.functional as F
model = build()
baseline = model.predict(x)
model = torch.compile(model)
model.forward(x)
model.reset_parameters()
model.get_image_features(x)
model.predict(x)
torch.compile(model.forward)
torch.compile(F.gelu)


def evaluate(path):
    model = torch.load(path)
    return model.predict(x)
""")
    whys = [w for _, _, w in findings([str(src)], compiled_ran=True)]
    assert len(whys) == 3, whys
    assert whys[0].startswith("`torch.compile(model.forward)` at prog.py:10") and "rebind it" in whys[0] \
        and "model.forward.compile()" not in whys[0], whys[0]
    assert whys[1].startswith("`torch.compile(F.gelu)` at prog.py:11"), whys[1]
    assert whys[2].startswith("`model.get_image_features(...)` at prog.py:8"), whys[2]
    # an attribute bound in __init__ is the wrapper in every method of the class
    attr = tmp_path / "runner.py"
    attr.write_text("import torch\n\n\nclass Runner:\n    def __init__(self, model):\n"
                    "        self.model = torch.compile(model)\n\n    def run(self, x):\n"
                    "        return self.model.generate(x)\n")
    (w,) = [w for _, _, w in findings([str(attr)], compiled_ran=True)]
    assert w.startswith("`self.model.generate(...)` at runner.py:9"), w


def test_a_fallback_that_quotes_fullgraph_no_compiled_frames_is_explained(tmp_path):
    """Blind A/B batch 23: with TORCH_COMPILE_DISABLE=1, torch 2.14+ runs a fullgraph function, then raises "found no
    compiled frames"; the user's fallback caught it, warned and ran the in-place step again (a double step that made
    the "eager" baseline look better). The program's own warning quotes torch's error: the report shows it with the
    row that explains it, once, and the row's claim holds: the update ran twice per call."""
    import torch
    if not hasattr(torch._dynamo.eval_frame, "set_fullgraph_compiled_frame_count") and \
            "found no compiled frames" not in open(torch._dynamo.eval_frame.__file__).read():
        pytest.skip("this torch does not check fullgraph=True for compiled frames (2.9)")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "env", "TORCH_COMPILE_DISABLE=1",
                    sys.executable, program("fullgraph_disable_fallback.py"), timeout=600)
    assert d["exit_code"] == 0, p.stderr[-2000:]
    (w,) = [w for w in d["torch_warnings"] if w["row"] == "fullgraph_no_compiled_frames"]
    assert w["by"] == "program" and "found no compiled frames" in w["warning"] and "runs it twice" in w["advice"]
    md = open(tmp_path / "t" / "report.md").read()
    assert "The program warns (quoting torch's error): UserWarning: compiled update failed" in md, md
    out = open(tmp_path / "t" / "target.stdout").read()
    assert "w after 3 steps: 0.40" in out, out   # 3 steps of 0.1, each applied twice
    ok = subprocess.run([sys.executable, program("fullgraph_disable_fallback.py")], capture_output=True, text=True,
                        timeout=600)
    assert "w after 3 steps: 0.70" in ok.stdout, ok.stdout + ok.stderr[-1000:]


def test_a_pytest_gate_that_fails_eagerly_too_prints_the_same(tmp_path):
    """Blind A/B batch 23: a pytest CI gate comparing two models with different weights fails without
    torch.compile too; pytest's report of the compiled run carried hundreds of torch DEBUG log records
    (torch.__trace) that the eager run has not, and --vs-eager said the compiled numbers differ, with the
    accuracy check as a Next. Those lines are not the program's output: the same output, both fail."""
    d, p = run_json("triage", "--vs-eager", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, "-m",
                    "pytest", "-q", "-p", "no:cacheprovider", program("pytest_parity_gate.py"), timeout=600)
    assert d["verdict"]["kind"] == "fails_eager_too", d["verdict"]
    assert not d["vs_eager"]["differ"] and "both runs fail" in d["vs_eager"]["verdict"], d["vs_eager"]
    assert not any(" accuracy " in (s["command"] or "") for s in d["next_steps"]), d["next_steps"]


def test_inductors_complex_operator_warning_is_a_speed_note(tmp_path):
    """Blind A/B batch 65: beside a silent as_strided miscompile the report repeated Inductor's "does not support code
    generation for complex operators" warning, read as a lead to the rfft. Its row says it is about speed (the ops
    stay ATen kernels), and the program's compiled result matches eager. A fresh cache: the warning is raised while
    lowering, which a cache hit skips."""
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable,
                    program("complex_fft_band_energy.py"), timeout=600,
                    env={"TORCHINDUCTOR_CACHE_DIR": fresh_cache(tmp_path / "cache")})
    (w,) = [w for w in d["torch_warnings"] if w["row"] == "inductor_complex_fallback"]
    assert "speed only" in w["advice"] and "no lead to compiled results that differ" in w["advice"], w
    out = (tmp_path / "t" / "target.stdout").read_text()
    assert float(out.split("= ")[1]) < 1e-4, out


def test_torch_warning_in_a_clean_run_is_shown_with_its_row(tmp_path):
    """A Library.define op that returns a view of its input (blind A/B batch 12, vllm#44130): the run exits
    0 and torch only warns; in CI (CI=true, 2.15) the same run raises. The report shows torch's warning with
    the row that explains it (the arm found it only by reading target.stderr), and the row's claims hold
    on the installed torch: CI=true makes it an error, a clone fixes it."""
    # CI="" as on a user's machine: CI sets CI=true, where torch's default makes this an error (checked below)
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3", program("custom_op_alias.py"),
                    env={"CI": ""}, timeout=600)
    assert d["exit_code"] == 0
    (w,) = [w for w in d["torch_warnings"] if w["row"] == "custom_op_output_aliases_input"]
    assert "may not alias any inputs" in w["warning"] and 'bool(os.getenv("CI"))' in w["advice"]
    md = open(tmp_path / "t" / "report.md").read()
    assert "PyTorch warns: UserWarning:" in md and "[custom_op_output_aliases_input]" in md
    env = dict(os.environ, CI="true")
    ci = subprocess.run([sys.executable, program("custom_op_alias.py")], capture_output=True, text=True, env=env,
                        timeout=600)
    assert ci.returncode != 0 and "may not alias any inputs" in ci.stderr, ci.stderr[-400:]
    fixed = open(program("custom_op_alias.py")).read().replace("torch.narrow(y, 0, 0, n)", "torch.narrow(y, 0, 0, n).clone()")
    (tmp_path / "fixed.py").write_text(fixed)
    ok = subprocess.run([sys.executable, str(tmp_path / "fixed.py")], capture_output=True, text=True, env=env, timeout=600)
    assert ok.returncode == 0 and "alias" not in ok.stderr, ok.stderr[-400:]


@pytest.mark.slow
def test_deberta_fullgraph_names_the_library_setting(tmp_path):
    """A tiny DeBERTa-v2 classifier under fullgraph=True with labels (blind A/B batch 12): the data-dependent
    error is inside transformers' legacy loss path. The Next names the config setting (problem_type), not the
    generic 'keep the value a tensor' advice that fits only the user's own code; the setting compiles; and
    torch's error text after the traceback is not shown as what the program printed."""
    pytest.importorskip("transformers")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3",
                    program("hf_deberta_fullgraph.py"), timeout=900)
    assert d["errors"][0]["category"] == "data_dependent_guard", d["errors"][0]
    step = d["next_steps"][0]
    assert step["why"].startswith("a library setting avoids it:") and 'problem_type="single_label_classification"' \
        in step["why"], step
    assert not any("from user code" in ln or "TORCHDYNAMO_VERBOSE" in ln for ln in d["printed_tail"]), d["printed_tail"]
    env = dict(os.environ, PROBLEM_TYPE="single_label_classification")
    ok = subprocess.run([sys.executable, program("hf_deberta_fullgraph.py")], capture_output=True, text=True, env=env,
                        timeout=900)
    assert ok.returncode == 0 and ok.stdout.startswith("loss "), ok.stderr[-500:]


def test_a_function_compiled_again_after_a_reset_is_named_not_clean(tmp_path):
    """Blind A/B batch 26: a server called torch._dynamo.reset() on every checkpoint reload; the forward compiled
    from scratch each time (compile id 0/0 again: no recompile reason), seconds per reload, and triage said
    "clean". Now the report names the function, how many times, and the reset call; loading the new weights in
    place compiles once and is clean."""
    d, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable,
                    program("reset_on_reload.py"), timeout=600)
    ca = d["compiled_again"]
    assert d["status"] == "issues" and ca["function"] == "forward" and ca["times"] == 3, d
    assert ca["resets"] == ["reset_on_reload.py:30 `torch._dynamo.reset()`"], ca
    assert d["next_steps"][0]["why"].startswith("forward was compiled from scratch 3 times"), d["next_steps"]
    d2, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "t2", "--", sys.executable,
                     program("reset_on_reload.py"), env={"INPLACE": "1"}, timeout=600)
    assert d2["status"] == "clean" and d2["compiled_again"] is None and len(d2["graphs"]) == 1, d2


@pytest.mark.slow
def test_a_core_op_shape_error_only_compiled_compares_the_traced_shapes_before_minify(tmp_path):
    """Blind A/B batch 26: a streaming model's deque(maxlen) lost its maxlen while Dynamo traced the append (an open
    bug), so `ctx + pos` raised on fake tensors only compiled; the row said the op's fake kernel disagrees and the
    Next was minify. Now the Next names the op and its traced shapes and says to compare them with eager's first
    (the Python code that built them), with no minify command; the tensor window runs compiled."""
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable,
                    program("deque_maxlen_traced.py"), check=None, timeout=600)
    if d["exit_code"] == 0:
        pytest.skip("this torch traces the deque's maxlen: the program no longer fails")
    assert d["verdict"]["kind"] == "compile_only" and d["errors"][0]["category"] == "fake_tensor_error", d["errors"]
    step = d["next_steps"][0]
    assert step["why"].startswith("`add` got inputs (float32[2,20,16], float32[1,16,16])") and step["command"] is None, step
    assert "collections.deque's maxlen" in step["why"] and d["errors"][0]["next_command"] is None, step
    ok = subprocess.run([sys.executable, program("deque_maxlen_traced.py")], capture_output=True, text=True,
                        env=dict(os.environ, FIXED="1"), timeout=600)
    assert ok.returncode == 0 and "chunk 2:" in ok.stdout, ok.stderr[-500:]


@pytest.mark.slow
def test_mixtral_eager_experts_under_fullgraph_names_the_library_setting(tmp_path):
    """Blind A/B batch 25: a tiny Mixtral whose config asks for the "eager" experts, compiled with fullgraph=True:
    transformers' expert loop over `expert_hit` (a nonzero) is a data-dependent error. The Next named only the
    generic causes (.item(), BatchNorm); now it names the setting, experts_implementation, and that compiles."""
    pytest.importorskip("transformers")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable,
                    program("hf_mixtral_eager_experts.py"), timeout=900)
    assert d["errors"][0]["category"] == "data_dependent_guard", d["errors"][0]
    step = d["next_steps"][0]
    assert step["why"].startswith("a library setting avoids it:") and 'experts_implementation="grouped_mm"' \
        in step["why"], step
    ok = subprocess.run([sys.executable, program("hf_mixtral_eager_experts.py")], capture_output=True, text=True,
                        env=dict(os.environ, EXPERTS="grouped_mm"), timeout=900)
    assert ok.returncode == 0 and ok.stdout.startswith("loss "), ok.stderr[-500:]


def test_printed_tail_shows_results_before_logging_and_no_error_text():
    """The report's tail of what the program printed (review of batch 12's change): stdout's result lines are
    not pushed out by stderr logging; a progress bar is one line; a failed run's chained traceback and torch's
    text after it are left out; a traceback the program logged before its own failure line is not a cut."""
    from cdlib.decide import printed
    tail, n = printed.tail("epoch 0 loss 1.0\n" * 3 + "final acc 0.9\n",
                           " 10%|#  |\r100%|###|\n" + "INFO:train:ckpt\n" * 8)
    assert "final acc 0.9" in tail and sum(ln.startswith("[stderr] ") for ln in tail) == 2, tail
    assert not any("10%" in ln for ln in tail) and n == 4 + 1 + 8
    chained = ("step 3\nTraceback (most recent call last):\n  File \"a.py\", line 1\nValueError: inner\n\n"
               "The above exception was the direct cause of the following exception:\n\n"
               "Traceback (most recent call last):\n  File \"a.py\", line 2\nRuntimeError: outer msg\n\n"
               "from user code:\n   x = f(y)\n")
    assert printed.tail("", chained, "outer msg")[0] == ["[stderr] step 3"]
    logged = "Traceback (most recent call last):\n  File \"a.py\"\nKeyError: k\nFAIL: checksum mismatch\n"
    assert printed.tail("", logged, "FAIL: checksum mismatch")[0] == ["[stderr] FAIL: checksum mismatch"]


def test_a_float_carried_across_a_graph_break_sends_to_that_break(tmp_path):
    """A running total `+= t.item()` in a compiled training step (a fresh program): the .item() breaks the
    graph and the float carried into the resumed function (`___stack2`) recompiles every step under
    inductor. The cause reads "value carried across the graph break", the Next's first step is that
    break (not the backward break ranked above it) and says the recompiles go with it; keeping the total
    a tensor leaves no recompile."""
    prog = program("rc_item_across_break.py")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3", prog, timeout=600)
    line = next(i for i, s in enumerate(open(prog), 1) if ".item()" in s and "stats" in s)
    causes = [c for f in d["recompiles"] for c in f["causes"] if not c["expected"]]
    assert causes and all(c["kind"] == "graph_break_value" for c in causes), causes
    assert causes[0]["cause"].startswith("value carried across the graph break"), causes
    first = d["next_steps"][0]["why"]
    assert first.startswith(f"fix graph break at rc_item_across_break.py:{line} "), d["next_steps"]
    assert any(f"graph break at line {line}: fixing that break stops them" in s["why"] for s in d["next_steps"])
    src = open(prog).read().replace(".mean().item()", ".mean().detach()").replace(
        'stats = {"acc": 0.0}', 'stats = {"acc": torch.zeros(())}')
    (tmp_path / "fixed.py").write_text(src)
    cmp_, _ = run_json("compare", tmp_path / "t", "--", "python3", tmp_path / "fixed.py", check=0, timeout=600)
    assert cmp_["after"]["recompiles"] == 0, cmp_["after"]


def test_an_expected_recompile_after_the_warm_up_is_named_as_the_first_requests_compile(tmp_path):
    """Blind A/B batch 14: a latency benchmark warmed up at one length; the one recompile torch expects
    landed on the first timed request. The report keeps it "expected" but its Next says the compile is paid
    by that call and how to move it into the warm-up (mark the dim dynamic); doing so leaves no recompile."""
    prog = program("rc_warmup_one_length.py")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3", prog, timeout=600)
    assert d["recompiles"] and all(f["expected_only"] for f in d["recompiles"]), d["recompiles"]
    first = d["next_steps"][0]["why"]
    assert first.startswith("the recompile is expected (shape of `ids` dim 1), but it is a compile"), d["next_steps"]
    assert "torch._dynamo.mark_dynamic(t, 1) on the tensor t passed as `ids`" in first
    src = open(prog).read().replace("warmup = torch.randint(0, 1000, (1, 32))",
                                    "warmup = torch.randint(0, 1000, (1, 32))\ntorch._dynamo.mark_dynamic(warmup, 1)")
    (tmp_path / "fixed.py").write_text(src)
    cmp_, _ = run_json("compare", tmp_path / "t", "--", "python3", tmp_path / "fixed.py", check=0, timeout=600)
    assert cmp_["after"]["recompiles"] == 0, cmp_["after"]


@pytest.mark.slow
def test_regional_compile_of_hf_layers_recompiling_on_the_kv_cache_gets_use_cache_false(tmp_path):
    """Blind A/B batch 14: every decoder layer of a transformers model compiled on its own, called as a
    scorer with the default use_cache=True. Each layer's cache slot is its own guard (`layers[i].
    is_initialized`), so the shared code recompiles per layer to the limit. The eight causes show as one
    with a count, and the Next names the library setting; with use_cache=False the limit is gone."""
    pytest.importorskip("transformers")
    prog = program("hf_regional_layers.py")
    d, p = run_json("triage", "--out", tmp_path / "t", "--", "python3", prog, timeout=900)
    assert any(f["limit_hit"] for f in d["recompiles"]), d["recompiles"]
    nxt = d["next_steps"][0]["why"]
    assert "layers[i].is_initialized` (one per index, " in nxt and "use_cache=False" in nxt, d["next_steps"]
    md = open(tmp_path / "t" / "report.md").read()
    assert "more like it, the same but for an index" in md and md.count("is_initialized == False") == 1, md
    src = open(prog).read().replace("attention_mask=torch.ones_like(ids))",
                                    "attention_mask=torch.ones_like(ids), use_cache=False)")
    (tmp_path / "fixed.py").write_text(src)
    cmp_, _ = run_json("compare", tmp_path / "t", "--", "python3", tmp_path / "fixed.py", check=0, timeout=900)
    assert cmp_["after"]["recompiles"] <= 1 and not cmp_["after"].get("limit_hit"), cmp_["after"]


def test_a_gate_that_prints_the_limit_error_it_caught_is_classified_by_it(tmp_path):
    """Blind A/B batch 14: a parity gate compiles one block class for many configs (fullgraph=True),
    catches each config's error and prints it, and exits 1 with no traceback. The configs' graphs share
    one cache (per code object, not per model), so the ninth hits the limit. The failure is classified by
    the FailOnRecompileLimitHit the program printed (no accuracy-check run, no bisect), the Next names
    torch._dynamo.reset() before each model, and doing so passes the gate."""
    prog = program("rc_gate_many_configs.py")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3", prog, check=0, timeout=600)
    e = d["errors"][0]
    assert e["category"] == "recompile_limit" and "caught and printed: " in e["message"], e
    assert not (tmp_path / "t" / "accuracy_check").exists()
    nxt = " ".join(s["why"] + " " + (s["command"] or "") for s in d["next_steps"])
    assert "torch._dynamo.reset() before each model" in nxt and not re.search(r"\b(bisect|accuracy) ", nxt), nxt
    src = open(prog).read().replace("    torch.manual_seed(0)\n    m = Block", "    torch._dynamo.reset()\n    torch.manual_seed(0)\n    m = Block")
    assert "torch._dynamo.reset()" in src
    (tmp_path / "fixed.py").write_text(src)
    cmp_, _ = run_json("compare", tmp_path / "t", "--", "python3", tmp_path / "fixed.py", check=0, timeout=600)
    assert cmp_["after"]["exit_code"] == 0 and cmp_["after"]["recompiles"] == 0, cmp_["after"]


def test_a_cpp_compile_error_shows_the_compilers_lines_and_a_workaround_that_keeps_inductor(tmp_path):
    """Blind A/B batch 14: an open Inductor CPU bug (pytorch#194706: one bf16 reduction stored twice, the
    generated C++ declares a variable twice). The report said only "C++ compile error"; both arms grepped
    the output and read the generated file. Now the error carries g++'s lines with the generated code and
    the workaround that keeps Inductor (cpp.simdlen = 1), which the test applies: it compiles."""
    prog = program("inductor_bf16_dup_store.py")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3", prog, check=0, timeout=600)
    if d["exit_code"] == 0:
        pytest.skip("this torch compiles the duplicated bf16 store (the bug is fixed)")
    e = d["errors"][0]
    diags = (e.get("inner") or {}).get("compiler_errors") or []
    assert diags and "conflicting declaration" in diags[0]["message"], e
    assert diags[0]["code"] and "at_BFloat16_tmp_acc0_vec" in diags[0]["code"] and diags[0].get("note_line")
    assert "cpp.simdlen = 1" in e["advice"], e["advice"]
    md = open(tmp_path / "t" / "report.md").read()
    assert "C++ compiler: " in md and "error: conflicting declaration" in md and "Generated kernel: " in md
    fixed = tmp_path / "fixed.py"
    fixed.write_text("import torch._inductor.config\ntorch._inductor.config.cpp.simdlen = 1\n" + open(prog).read())
    r = subprocess.run([sys.executable, str(fixed)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "compiled:" in r.stdout, r.stderr[-2000:]


def test_a_random_op_given_a_generator_gets_the_draw_outside_recipe(tmp_path):
    """Blind A/B batch 14: torch.randint/randn(..., generator=g) inside the compiled function (a DDPM
    loss): GB0055 "Failed to convert args/kwargs to proxy". The break (and the fullgraph error) get the
    generator recipe (draw outside, pass the tensors in), not the generic disable/nonstrict_trace text;
    the recipe's edit compiles as one graph under fullgraph=True."""
    prog = program("gb_generator.py")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3", prog, timeout=600)
    [b] = [b for b in d["graph_breaks"] if "generator=" in (b["location"].get("code") or "")][:1]
    assert b["fix"]["recipe_id"] == "construct:generator" and "Draw those tensors outside" in b["fix"]["fix"], b
    d2, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "fg", "--", "python3", prog, "--fullgraph",
                     check=0, timeout=600)
    assert d2["exit_code"] != 0
    assert any(x["fix"].get("recipe_id") == "construct:generator" for x in d2["graph_breaks"]), d2["graph_breaks"]
    src = open(prog).read().replace(
        "def loss_fn(x0):\n    t = torch.randint(0, 100, (x0.shape[0], 1), generator=gen)\n    noise = torch.randn(x0.shape, generator=gen)\n",
        "def loss_fn(x0, t, noise):\n").replace(
        "    loss = step(x0)\n",
        "    loss = step(x0, torch.randint(0, 100, (x0.shape[0], 1), generator=gen), torch.randn(x0.shape, generator=gen))\n")
    assert "def loss_fn(x0, t, noise)" in src
    (tmp_path / "fixed.py").write_text(src)
    cmp_, _ = run_json("compare", tmp_path / "fg", "--", "python3", tmp_path / "fixed.py", "--fullgraph", check=0, timeout=600)
    assert cmp_["after"]["exit_code"] == 0 and cmp_["after"]["graph_break_sites"] == 0, cmp_["after"]


def test_a_carried_float_guard_is_read_in_both_forms():
    """torch 2.11 prints the guard on a float carried across a break as `___as_tensor(___stack2).item() ==
    0.09375` (seen on the GPU machine), 2.14+ as `___stack2 == 0.09375`: both are the graph_break_value kind."""
    from cdlib.decide import knowledge
    from cdlib.decide.guard_failures import guard_cause
    for g in ("___stack2 == 0.0", "___as_tensor(___stack2).item() == 0.09375"):
        k = knowledge.guard_kind(g)["kind"]
        assert k == "graph_break_value" and guard_cause(g, k) == "value carried across the graph break (`___stack2`)"
    assert knowledge.guard_kind("L['lr'] == 0.5")["kind"] == "python_float"
    # an int or a bool carried across a break is not this kind (review: one recompile, then dynamic)
    assert knowledge.guard_kind("___stack2 == 0")["kind"] == "python_int"
    assert knowledge.guard_kind("___stack1 == True")["kind"] == "python_bool"
    # the generator recipe reads a call formatted over several lines
    rec = knowledge.construct_recipe("GB0055", "noise = torch.randn(\n    x0.shape,\n    generator=gen,\n)\nreturn noise",
                                     "Failed to convert args/kwargs to proxy")
    assert rec and rec["recipe_id"] == "construct:generator", rec


def test_mark_dynamic_made_static_under_torch_compile_is_not_an_export_error(tmp_path):
    """Blind A/B batch 15: a BERT trainer marked the batch dim of input_ids dynamic but not of labels; the
    loss tied them and torch.compile raised ConstraintViolationError, which triage filed as "torch.export
    failed" and sent to the export command. It is its own row now: torch's sentence, the line where the
    sizes met, and the fix (mark the other input too), which the test applies."""
    prog = program("mark_dynamic_labels.py")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3", prog, check=0, timeout=600)
    e = d["errors"][0]
    assert e["category"] == "mark_dynamic_specialized", e
    assert e["message"].startswith("You marked L['x'].size()[0] as dynamic but your code specialized it"), e["message"]
    line = next(i for i, s in enumerate(open(prog), 1) if "F.cross_entropy" in s)
    assert e["location"]["line"] == line, e["location"]
    nxt = " ".join(s["why"] + " " + (s["command"] or "") for s in d["next_steps"])
    assert "mark that input's dim too" in nxt and not re.search(r"\bexport\b|\baccuracy ", nxt), nxt
    cmp_, _ = run_json("compare", tmp_path / "t", "--", "python3", prog, "--mark-labels", check=0, timeout=600)
    assert cmp_["after"]["exit_code"] == 0, cmp_["after"]


def test_a_custom_ops_fake_kernel_that_raises_is_the_users_not_torchs(tmp_path):
    """Blind A/B batch 15: a fake kernel without the op's default for eps raises TypeError when Dynamo calls
    it; the break (GB0112, empty explanation) was labelled "in library code (torch)" with a workaround that
    disables CustomOpDef.__call__. Now the fake's TypeError is the Why, the break is the user's, and the
    recipe says to match the op's signature; the fixed fake gives no break. Also checked here: a default
    left out of the call or passed explicitly never reaches the fake (the recipe's claim)."""
    prog = program("custom_op_fake_default.py")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3", prog, timeout=600)
    [b] = [b for b in d["graph_breaks"] if b["gb_id"] == "GB0112"]
    assert not b["in_library"] and "missing 1 required positional argument: 'eps'" in b["explanation"], b
    assert b["fix"]["recipe_id"] == "GB0112" and "defaults included" in b["fix"]["fix"]
    assert not any("CustomOpDef" in (w.get("text") or "") + (w.get("code") or "") for w in b["workarounds"]), b["workarounds"]
    cmp_, _ = run_json("compare", tmp_path / "t", "--", "python3", prog, env={"FIX": "1"}, check=0, timeout=600)
    assert cmp_["after"]["exit_code"] == 0 and cmp_["after"]["graph_break_sites"] == 0, cmp_["after"]
    probe = """
import torch
seen = []
@torch.library.custom_op("cdprobe::f", mutates_args=())
def f(x: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    return x + eps
@f.register_fake
def _(*args, **kwargs):
    seen.append((len(args), sorted(kwargs)))
    return torch.empty_like(args[0])
from torch._subclasses.fake_tensor import FakeTensorMode
with FakeTensorMode():
    x = torch.empty(2)
    f(x); f(x, 1e-5); f(x, eps=1e-5); f(x, 1e-6)
print(seen)
"""
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip().splitlines()[-1] == "[(1, []), (1, []), (1, []), (2, [])]", r.stdout


def test_causes_grouped_by_index_keep_every_line_that_made_them_static():
    """Review of batch 14's grouping: causes that differ only by an index show once, and when the program
    made them static at different lines, each line is named (the first cause's line alone hid the others)."""
    from types import SimpleNamespace
    from cdlib.report import FunctionRecompiles, Location
    from cdlib.show.views_dynamo import recompiles_md

    def cause(i, line):
        return {"cause": f"shape of `xs[{i}]` dim 0", "kind": "shape", "count": 1, "primary": 1, "expected": False,
                "why": "", "fix": "edit the line", "guard": f"len(xs[{i}]) == 3", "compile_ids": [f"0/{i + 1}"],
                "location": None, "specialized_at": Location("/p/train.py", line)}
    f = FunctionRecompiles("step", Location("/p/train.py", 3), 0, 4, recompiles=[object()] * 3,
                           causes=[cause(0, 10), cause(1, 12), cause(2, 10)])
    md = "\n".join(recompiles_md(SimpleNamespace(recompiles=[f]), "/p"))
    assert md.count("shape of `xs[") == 1 and "and 2 more like it, the same but for an index (2 recompiles)" in md, md
    assert "Made static by your code at train.py:10, train.py:12" in md, md


def test_recompile_header_says_which_functions_are_pieces_after_a_graph_break():
    """Blind A/B batch 19 (rotary cache): the rest of forward after a graph break is a frame of its own, and
    the header counted it as one more function; it now says how many of them are such pieces."""
    from types import SimpleNamespace
    from cdlib.report import FunctionRecompiles, Location
    from cdlib.show.views_dynamo import recompiles_md
    cause = {"cause": "`seq_len`", "kind": "int", "count": 1, "primary": 1, "expected": False, "why": "",
             "fix": "mark it dynamic", "guard": "L['seq_len'] == 8", "compile_ids": ["0/1"], "location": None}
    fs = [FunctionRecompiles(name, Location("/p/rope.py", line), 0, 2, recompiles=[object()], causes=[cause])
          for name, line in (("forward", 10), ("forward (resumed after the graph break at line 14)", 14))]
    md = "\n".join(recompiles_md(SimpleNamespace(recompiles=fs), "/p"))
    assert "(2 in 2 functions, 1 of them the rest of a function after a graph break)" in md, md
    md = "\n".join(recompiles_md(SimpleNamespace(recompiles=fs[:1]), "/p"))
    assert "(1 in 1 function)" in md, md


def test_installed_library_files_are_named_from_their_package():
    """Batch 18's Llama case: a recompile cause at transformers/utils/output_capturing.py was shown with the
    venv's whole site-packages path, and a custom op's error quoted torch's module repr whose path filled the
    clipped message. Both are named from the package now, as every other library location is."""
    from types import SimpleNamespace
    from cdlib.cmdline import clip
    from cdlib.report import FunctionRecompiles, Location
    from cdlib.show.views_dynamo import recompiles_md
    site = "/root/.cache/venv-1.build/lib/python3.11/site-packages"
    cause = {"cause": "shape of `kwargs['input_ids']` dim 0", "kind": "shape", "count": 1, "primary": 1,
             "expected": False, "why": "", "fix": "", "guard": "2 <= kwargs['input_ids'].size()[0]",
             "compile_ids": ["0/1"], "location": Location(f"{site}/transformers/utils/output_capturing.py", 332)}
    f = FunctionRecompiles("wrapper", Location("/p/serve.py", 3), 0, 2, recompiles=[object()], causes=[cause])
    md = "\n".join(recompiles_md(SimpleNamespace(recompiles=[f]), "/p"))
    assert "at transformers/utils/output_capturing.py:332" in md and "site-packages" not in md, md
    msg = clip(f"first_half (with implementation in <module 'torch._library.custom_ops' from "
               f"'{site}/torch/_library/custom_ops.py'>): The output of this custom operator must not alias", 160)
    assert "from 'torch/_library/custom_ops.py'>): The output of this custom operator" in msg, msg
    assert clip("at /home/u/proj/train.py:4") == "at /home/u/proj/train.py:4"     # the user's own files stay whole
    # the review's cases: only a quoted absolute path without spaces, and one install, is shortened
    for keep in (f"python3 {site}/myproj/train.py", ".venv/lib/python3.11/site-packages/torch/x.py",
                 "'/home/John Smith/venv/lib/python3.11/site-packages/torch/x.py'", "~/venv/lib/site-packages/t/x.py",
                 "https://example.com/pypi/site-packages/torch.whl",
                 "'/opt/v/lib/site-packages/x.py' vs '/opt/w/lib/site-packages/x.py'"):
        assert clip(keep) == keep, keep


def test_compiled_optimizer_step_with_an_lr_scheduler_breaks_by_design(tmp_path):
    """A fresh program on PyTorch's compiled-optimizer recipe: both breaks are torch's own (optimizer.py's
    deliberate graph_break around the step; the LR scheduler's wrapper of step is on Dynamo's skip list, a
    GB0007 at the user's `opt.step()` line). The Next sent the user to fix the GB0007 at their line; now
    both are labelled torch.optim's, nothing to fix, and the setup text (lr as a tensor) removes the one
    lr recompile (compare)."""
    prog = program("opt_step_lr_scheduler.py")
    d, _ = run_json("triage", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=600)
    cats = {b["gb_id"]: b["category"] for b in d["graph_breaks"]}
    assert cats.get("GB0007") == "optimizer internals (expected)" and cats.get("GB0025") == cats["GB0007"], cats
    assert all(b["in_library"] for b in d["graph_breaks"]), d["graph_breaks"]
    (step,) = [s for s in d["next_steps"] if "graph break" in s["why"]]
    assert step["why"].startswith("nothing of yours to fix in the graph breaks: they are torch.optim"), step
    md = open(tmp_path / "t" / "report.md").read()
    assert "lr=torch.tensor(1e-3)" in md and ":None" not in md, md
    assert sum(len(f["recompiles"]) for f in d["recompiles"]) == 1, d["recompiles"]
    fixed = tmp_path / "fixed.py"
    fixed.write_text(open(prog).read().replace('os.environ.get("LR_TENSOR") == "1"', "True"))
    cmp_, _ = run_json("compare", tmp_path / "t", "--", sys.executable, fixed, check=0, timeout=600)
    assert cmp_["after"]["exit_code"] == 0 and cmp_["after"]["recompiles"] == 0, cmp_["after"]


def test_review_of_batch_16_rules_on_small_inputs(tmp_path, monkeypatch):
    """The independent review of batch 16's changes: each rule on the inputs it misread."""
    import re as re_
    from cdlib.cmdline import scripts_of
    from cdlib.decide import knowledge
    from cdlib.decide.analyze import compile_switches
    from cdlib.decide.analyze_dynamo import _OPTIMIZER_STEP_RE
    from cdlib.decide.guard_failures import parse_guard_failure
    from cdlib.read import never_ran
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    for f in ("a.py", "b.py", "sub/c.py"):
        (tmp_path / f).write_text("")
    # a shell string's scripts, in order: `;`, `&&` without spaces, -lc, env, cd
    assert scripts_of(["bash", "-c", "python a.py; python b.py"]) == ["a.py", "b.py"]
    assert scripts_of(["bash", "-c", "python a.py&&python b.py"]) == ["a.py", "b.py"]
    assert scripts_of(["/usr/bin/env", "bash", "-lc", "cd sub && python c.py"]) == ["sub/c.py"]
    assert scripts_of(["env", "A=1", "python", "b.py", "--x"]) == ["b.py"]
    # the program's own on/off switches only: not --compile-mode, not torch's variables, not an assignment
    (tmp_path / "a.py").write_text('import argparse, os\np = argparse.ArgumentParser()\np.add_argument("--compile-mode")\n'
                                   'p.add_argument("--no-compile", action="store_true")\n'
                                   'os.environ["TORCHINDUCTOR_COMPILE_THREADS"] = "1"\nos.environ["MY_COMPILE"] = "0"\n'
                                   'use = os.environ.get("USE_COMPILE", "1")\n')
    assert compile_switches(["python", "a.py"]) == ["--no-compile", "USE_COMPILE"]
    # is_compiling(): a guarded store or early return counts, a guarded assert or log does not
    (c,) = [c for c in knowledge.load("semantics")["classes"] if c["id"] == "is_compiling_branch"]
    rx = re_.compile(c["detect"][0]["source_traced"])
    assert rx.search("    if not torch.compiler.is_compiling():\n        self.norms.append(h.norm())\n")
    assert rx.search("        if torch.compiler.is_compiling():\n            return\n")
    assert not rx.search("    if not torch.compiler.is_compiling():\n        assert torch.isfinite(x).all()\n")
    assert not rx.search("    if not torch.compiler.is_compiling():\n        logger.info('x')\n")
    # an optimizer's step wrapped by a scheduler is torch's; a scheduler's own method called there is not
    assert [bool(_OPTIMIZER_STEP_RE.match(x)) for x in ("Adam.step", "SGD.step", "LambdaLR.step",
                                                         "ReduceLROnPlateau.step", "LRScheduler.get_last_lr")] == \
        [True, True, False, False, False]
    # torch's `guard on "name"` names only a raw source; identity and type keep their cause
    g = parse_guard_failure("0/0: ___check_obj_id(G['inner'].__closure__[0].cell_contents, 1)  # a.py:3 in f "
                            "(HINT: guard on \"fn\")")
    assert g.cause.startswith("identity of") and g.hint is None, (g.cause, g.hint)
    # compile lines: torch.compile and a module's .compile(), not re.compile(pattern)
    (tmp_path / "b.py").write_text("import re, torch\nrx = re.compile('a')\nm = torch.compile(f)\nnet.compile()\n")
    assert [ln for _, ln, _ in never_ran.compile_calls(["b.py"])] == [3, 4]
    # a dynamic dim's lower bound failed: a size of 0 or 1 arrived (batch 17: labelled automatic dynamic)
    from cdlib.decide.analyze_recompiles import _expected
    assert _expected("shape", "2 <= kwargs['attention_mask'].size()[0]", 1, False).startswith("0/1 specialization")
    assert _expected("shape", "2 <= args[0].size()[0] <= 4096", 1, False).startswith("0/1 specialization")
    assert _expected("shape", "tensor 'x' size mismatch at index 0. expected 8, actual 5", 1, False).startswith(
        "automatic dynamic")


def test_an_index_out_of_bounds_is_one_failure_however_each_layer_words_it(tmp_path):
    """Blind A/B batch 18: -100 padding in the input ids. Compiled, Inductor's generated bounds check raises
    ("index out of bounds: 0 <= tmp2 < 12L", a RuntimeError from a .cpp kernel); without torch.compile the
    embedding raises IndexError ("index out of range in self") at the same line. That is the user's bug, not
    "fails differently" with minify as the Next."""
    from cdlib.decide import verdict
    def sig(t, m, func="forward"):
        return {"type": t, "message": m, "norm": m, "location": None, "function": ("/p/model.py", func)}
    kernel = "kernel, /c/x.main.cpp:24, index out of bounds: 0 <= tmp2 < 12L"
    assert verdict.same_failure(sig("RuntimeError", kernel), sig("IndexError", "index out of range in self"))
    # an out-of-range index elsewhere in the eager run (another function) is another failure
    assert not verdict.same_failure(sig("RuntimeError", kernel), sig("IndexError", "index out of range in self", "main"))
    assert not verdict.same_failure(sig("RuntimeError", kernel), sig("IndexError", "list index out of range"))
    assert not verdict.same_failure(sig("RuntimeError", "CUDA error: device-side assert triggered"),
                                    sig("IndexError", "index out of range in self"))
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "run", "--", sys.executable,
                    program("pad_ids_out_of_range.py"), timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    v = d["verdict"]
    assert v["eager"]["type"] == "IndexError" and v["eager"]["location"].endswith("pad_ids_out_of_range.py:20"), v
    (first, *_) = d["next_steps"]
    assert "IndexError: index out of range in self" in first["why"] and first["command"] is None, first
    if d["signal"]:
        # torch 2.11's CPU kernel checks no bounds there and segfaults: a different failure, yet the eager one
        # at the program's line comes first (the compiled crash may be the same bug)
        assert v["kind"] == "different_failure_eager" and "fix the failure without torch.compile first" in first["why"]
    else:
        assert v["kind"] == "fails_eager_too" and v["location"].endswith("pad_ids_out_of_range.py:20"), v
        assert "no compiler bisect" in first["why"], first
        assert not any(" minify " in (s.get("command") or "") or " bisect " in (s.get("command") or "")
                       for s in d["next_steps"]), d["next_steps"]


def test_a_cause_that_only_failed_against_older_graphs_is_shown_as_then(tmp_path):
    """Blind A/B batch 18: a per-request torch.set_num_threads recompiled a Llama scorer 8 times; a batch-size
    guard that failed only against an older graph was listed beside it as "×0" and read as noise (it recompiled
    by itself once the thread count was fixed). The thread count is its own kind, with its fix."""
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "run", "--", sys.executable,
                    program("rc_threads_then_shape.py"), timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    (f,) = d["recompiles"]
    kinds = {c["kind"]: c for c in f["causes"]}
    assert kinds["num_threads"]["primary"] == 2 and kinds["shape"]["primary"] == 0, f["causes"]
    assert "Set the thread count once at startup" in kinds["num_threads"]["fix"]
    md = (tmp_path / "run" / "report.md").read_text()
    assert "thread count (torch.set_num_threads) ×2" in md
    assert "  - then shape of `x` dim 0 (failed too, against 1 older graph" in md and "×0" not in md, md
    assert "expect it to recompile once the cause above is fixed" in md and "a newer entry already accepts" not in md


def test_a_break_inside_a_try_block_names_the_block(tmp_path):
    """Blind A/B batch 21: int(lengths.max()) inside a try/except made Dynamo skip the whole forward (0 graphs);
    the report said "graph break in a loop / unrecoverable" and its recipe pushed capture_scalar_outputs. It now
    names the try block and says to move the line out of it first."""
    data, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "r", "--", "python3", program("gb_in_try_block.py"),
                       timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    (b,) = data["graph_breaks"]
    assert b["fix"]["skipped_in"] == {"kind": "try", "line": 14}, b["fix"]
    first = data["next_steps"][0]["why"]
    assert "inside the `try` block at line 14" in first and "move the line out" in first, first
    md = (tmp_path / "r" / "report.md").read_text()
    assert "the break is inside the `try` block at line 14" in md, md


def test_a_break_in_a_helper_called_inside_a_try_names_the_callers_block(tmp_path):
    """Review of batch 21: a break in a helper that forward calls from inside its try skipped forward too, and
    the report said "graph break in a loop / unrecoverable": the helper's own lines have no block. The caller's
    try is named, with the call to move out; the serving loop around model(...) is not compiled and not named."""
    data, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "r", "--", "python3", program("gb_in_try_helper.py"),
                       timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    (b,) = data["graph_breaks"]
    assert b["fix"]["skipped_in"] == {"kind": "try", "line": 20, "file": "gb_in_try_helper.py", "function": "forward",
                                      "call": 21}, b["fix"]
    first = data["next_steps"][0]["why"]
    assert "inside the `try` block at gb_in_try_helper.py:20 (around the call at line 21, in forward)" in first, first
    assert "move the call out" in first, first
    md = (tmp_path / "r" / "report.md").read_text()
    assert "the break is inside the `try` block at gb_in_try_helper.py:20" in md, md


def test_enclosing_block_is_the_innermost_of_the_function():
    from cdlib.decide.analyze_dynamo import enclosing_block
    prog = program("gb_in_try_block.py")
    assert enclosing_block(prog, 15) == {"kind": "try", "line": 14}
    assert enclosing_block(prog, 18) is None          # after the try, in the same function
    assert enclosing_block(prog, 26) is None          # a module-level loop: not a compiled function's block


def test_enclosing_block_is_the_outermost_and_skips_grad_mode_blocks(tmp_path):
    """Review: a break inside `with torch.no_grad()` inside a loop named the with block (Dynamo resumes inside
    no_grad; moving the line out of it still left it in the loop): the outermost block counts, grad-mode and
    autocast blocks do not."""
    from cdlib.decide.analyze_dynamo import enclosing_block
    src = tmp_path / "m.py"
    src.write_text("import torch\n\ndef f(xs):\n    out = []\n    for x in xs:\n        with torch.no_grad():\n"
                   "            n = int(x.sum())\n        out.append(n)\n    with torch.no_grad():\n"
                   "        m = int(xs[0].sum())\n    return out, m\n")
    assert enclosing_block(str(src), 7) == {"kind": "loop", "line": 5}
    assert enclosing_block(str(src), 10) is None


def test_a_failure_only_with_the_warm_compile_cache_is_measured_and_named(tmp_path):
    """Blind A/B batch 24: a custom op's output dtype came from a global set by an environment variable;
    a warm cache from a run with the flag off served a graph that checks for float32, and torch's message
    (and this report's row) blamed the fake kernel. A run that fails only compiled and loaded graphs from
    the cache runs once more with an empty throwaway cache: it passes, so the cache is named, not the
    compiler or the fake kernel. The user's cache is not touched."""
    prog = program("warm_cache_global_dtype.py")
    cache = tmp_path / "user-cache"
    env = {"TORCHINDUCTOR_CACHE_DIR": str(cache)}
    p = subprocess.run([sys.executable, prog], env={**os.environ, **env}, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0 and "float32" in p.stdout, p.stderr[-2000:]
    before = sorted(str(f.relative_to(cache)) for f in cache.rglob("*"))
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog,
                    env={**env, "HALF_OUT": "1"}, timeout=600)
    err = d["errors"][0]
    assert err["category"] == "warm_cache_only" and d["verdict"]["cold_cache"] == "passes", (err, d["verdict"])
    assert d["next_steps"][0]["decides"] and "op argument" in d["next_steps"][0]["why"], d["next_steps"]
    assert not (tmp_path / "t" / "cold_cache").exists()   # the throwaway cache is gone
    assert sorted(str(f.relative_to(cache)) for f in cache.rglob("*")) == before   # the failing run only read it


def test_a_ddp_optimizer_crash_is_torchs_and_optimize_ddp_off_decides(tmp_path):
    """Blind A/B batch 24: BackendCompilerFailed with backend='compile_fn' under DDP is torch's DDPOptimizer
    (torch/_dynamo/backends/distributed.py), not "your own backend": a float attribute made dynamic crosses
    the DDP split. The Next says so and names the one run that decides (optimize_ddp = False), which holds."""
    prog = program("ddp_float_attr_split.py")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=600)
    assert d["errors"] and d["errors"][0]["inner"]["backend"] == "compile_fn", d["errors"]
    first = d["next_steps"][0]
    assert first["why"].startswith("torch's DDP optimizer raised AttributeError") and first["decides"], first
    assert "optimize_ddp = False" in first["why"]
    assert not any("your own backend" in s["why"] for s in d["next_steps"]), d["next_steps"]
    p = subprocess.run([sys.executable, prog, "--no-split"], capture_output=True, text=True, timeout=600,
                       env={**os.environ, "TORCHINDUCTOR_CACHE_DIR": fresh_cache(tmp_path / "c")})
    assert p.returncode == 0 and re.search(r"^loss ", p.stdout, re.M), p.stderr[-2000:]   # (2.9's gloo prints too)


def test_a_scan_that_torchs_eager_switch_breaks_is_not_sure_and_the_read_is_inductors(tmp_path):
    """Blind A/B batch 24: an SSM's scan. Compiled, Inductor's scan-to-while_loop pass reads the loop index with
    .item() (InductorError, DataDependentOutputException); with compiling switched off by torch the scan still
    traces its step function and fails on the outside parameter, so the eager check said "fails differently"
    where the program without torch.compile runs. Now: not sure, and Next names Inductor's own read, whose
    switch (capture_scalar_outputs) gives the uncompiled program's numbers."""
    prog = program("scan_closure_eager_check.py")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=600)
    if d["exit_code"] == 0:
        pytest.skip("this torch compiles the scan")
    if d["verdict"]["kind"] != "not_sure":   # torch's switch ran the scan: nothing to judge here
        assert d["verdict"]["kind"] == "compile_only", d["verdict"]
    else:
        assert "higher-order ops" in d["verdict"]["summary"], d["verdict"]
    first = d["next_steps"][0]
    assert first["why"].startswith("Inductor raised it while compiling") and first["decides"], first
    plain = subprocess.run([sys.executable, prog, "--no-compile"], capture_output=True, text=True, timeout=600)
    fixed = subprocess.run([sys.executable, "-c", "import runpy, sys, torch; torch._dynamo.config.capture_scalar_outputs"
                            f" = True; sys.argv = [{str(prog)!r}]; runpy.run_path(sys.argv[0], run_name='__main__')"],
                           capture_output=True, text=True, timeout=600,
                           env={**os.environ, "TORCHINDUCTOR_CACHE_DIR": fresh_cache(tmp_path / "c")})
    assert plain.returncode == fixed.returncode == 0 and plain.stdout == fixed.stdout, (plain.stdout, fixed.stderr[-1500:])


@pytest.mark.parametrize("bug", [False, True], ids=["dropout_only", "dropout_and_relu_bug"])
def test_random_numbers_are_named_only_when_fallback_random_gives_eagers_output(bug, tmp_path):
    """Blind A/B batch 24: compiled numbers that differ from eager in a program with dropout got the by-design
    class compiled_rng as Next 1, where an Inductor bug made the gradients 256x too small. One more compiled
    run with fallback_random=True decides: eager's output then keeps the class; a difference that stays (here
    PyTorch's injected ReLU bug) drops it."""
    args = [sys.executable, program("rng_beside_miscompile.py")] + (["--relu-bug"] if bug else [])
    # a cold cache of its own: the class reads Inductor's code, which a warm cache's hit may not log (seen on 2.11)
    d, p = run_json("triage", "--vs-eager", "--no-tlparse", "--out", tmp_path / "t", "--", *args, timeout=600,
                    env={"TORCHINDUCTOR_CACHE_DIR": fresh_cache(tmp_path / "cache")})
    assert d["vs_eager"]["differ"], d["vs_eager"]
    ids = [f["id"] for f in d["semantics"]]
    if bug:
        assert "compiled_rng" not in ids and "random ops do not explain it" in d["vs_eager"]["verdict"], d["vs_eager"]
        assert not any("[compiled_rng]" in s["why"] for s in d["next_steps"]), d["next_steps"]
    else:
        assert ids == ["compiled_rng"] and "the random numbers explain it" in d["vs_eager"]["verdict"], d["vs_eager"]
        assert d["next_steps"][0]["why"].startswith("[compiled_rng]"), d["next_steps"]


@pytest.mark.slow
def test_llama_dynamic_rope_under_fullgraph_names_regional_compilation(tmp_path):
    """Blind A/B batch 27: a Llama with rope_type "dynamic" compiled with fullgraph=True; transformers' rotary update
    branches on the longest position seen (GB0170 in modeling_rope_utils.py). The report offered torch's generic
    branchless advice and `fix` tried disabling a function the decorator's closure holds; both arms rewrote the
    rotary embedding. Now the library row names regional compilation (the layers with fullgraph=True), and that
    runs with eager's scores."""
    pytest.importorskip("transformers")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable,
                    program("hf_llama_dynamic_rope.py"), timeout=900)
    assert d["errors"][0]["category"] == "graph_break_fullgraph", d["errors"][0]
    md = (tmp_path / "t" / "report.md").read_text()
    assert "layer.compile(fullgraph=True)" in md and "dynamic_rope_update" in md, md
    assert any("a compile layout avoids it:" in s["why"] and "layer.compile(fullgraph=True)" in s["why"]
               for s in d["next_steps"]), d["next_steps"]
    runs = [subprocess.run([sys.executable, program("hf_llama_dynamic_rope.py"), *a], capture_output=True, text=True,
                           env=dict(os.environ, REGIONAL="1"), timeout=900) for a in ([], ["--no-compile"])]
    assert all(r.returncode == 0 for r in runs) and runs[0].stdout == runs[1].stdout, [r.stderr[-500:] for r in runs]


def test_an_eager_run_that_got_further_is_a_second_problem_not_the_first(tmp_path):
    """Blind A/B batch 32: the compiled run stopped at a graph break under fullgraph=True; without torch.compile
    the program ran on and failed later in its own code. The verdict says that run got further and the Route puts
    the compiled failure first (it said "fix the eager one first")."""
    tri, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3",
                      program("fullgraph_then_eager_index_error.py"), timeout=600)
    v = tri["verdict"]
    assert v["kind"] == "different_failure_eager" and v["eager_further"] == 6, v
    assert "that run got further (6 more printed line(s))" in v["summary"]
    md = open(os.path.join(tri["run_dir"], "report.md")).read()
    assert "Route: the compiled failure first" in md and "fix the eager one first" not in md
    assert tri["errors"][0]["category"] == "graph_break_fullgraph"


def test_a_triton_op_compiled_on_cpu_is_its_body_not_inductor(tmp_path):
    """Blind A/B batch 37: a torch.library.triton_op with register_kernel("cpu"), compiled on a CPU machine, fails
    with TritonUnavailableError inside Inductor; the report said "Inductor failed to compile the graph" and offered
    backend="aot_eager", which fails too. The class is the op's body (traced whatever the device), the Next names
    the triton_op's line and the device branch, and no minify or bisect is offered."""
    pytest.importorskip("triton")
    prog = program("triton_op_cpu_fallback.py")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3", prog, timeout=600)
    assert d["verdict"]["kind"] == "compile_only"
    e = d["errors"][0]
    assert e["category"] == "triton_kernel_on_cpu" and e["side"] == "custom_op", e
    line = next(i for i, ln in enumerate(open(prog), 1) if ln.startswith("@triton_op("))
    [s] = d["next_steps"]
    assert f"triton_op_cpu_fallback.py:{line}" in s["why"] and "branch on the device" in s["why"], s
    assert s["command"] is None and not any("minify" in (x["command"] or "") or "bisect" in (x["command"] or "")
                                            for x in d["next_steps"])


def test_a_captured_read_that_inductor_cannot_guard_names_the_programs_line(tmp_path):
    """Blind A/B batch 37: capture_scalar_outputs = True (the graph-break hint's setting) and a slice length read
    with int(mask.sum(1).max()) in forward; Inductor's bmm lowering raises GuardOnDataDependentSymNode Eq(u1, 1).
    The Next said the read was in an Inductor pass and to set capture_scalar_outputs, which the program had done;
    now it names the program's read from the Dynamo graph and keeping the size out of the compiled code."""
    prog = program("dd_captured_slice.py")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3", prog, timeout=600)
    assert d["errors"][0]["category"] == "data_dependent_guard" and d["verdict"]["kind"] == "compile_only"
    line = next(i for i, ln in enumerate(open(prog), 1) if "longest = int(" in ln)
    s = d["next_steps"][0]
    assert f"dd_captured_slice.py:{line}" in s["why"] and "before the compiled call" in s["why"], s
    assert "Inductor pass" not in s["why"] and s["command"] is None


def test_one_switch_of_a_bool_flag_is_an_expected_recompile(tmp_path):
    """Blind A/B batch 37: a `log_stats` flag first True at a logging step recompiles once; compare listed it as a
    recompile to stop. One switch of a bool is one graph per value: expected, with no fix step."""
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3", program("rc_flag_once.py"),
                    timeout=600)
    [f] = d["recompiles"]
    [c] = f["causes"]
    assert c["kind"] == "python_bool" and c["expected"] and "one graph per value" in c["why"], c
    assert f["expected_only"] and not any("log_stats" in s["why"] and "stop" in s["why"] for s in d["next_steps"])


def test_a_custom_jvp_under_forward_ad_is_named_when_compiled_output_differs(tmp_path):
    """Blind A/B batch 37: a custom autograd.Function whose jvp keeps sqrt's derivative finite at 0, used through
    torch.func.jvp in a compiled loss: Dynamo differentiates the Function's forward instead (pytorch#192985), and
    the loss is NaN compiled. The --vs-eager Next names the Function, the open bug and the plain-op rewrite."""
    prog = program("custom_jvp_dropped.py")
    d, p = run_json("triage", "--vs-eager", "--no-tlparse", "--out", tmp_path / "t", "--", "python3", prog, timeout=600)
    if not d["vs_eager"]["differ"]:
        pytest.skip("this torch keeps the custom jvp under torch.compile (pytorch#192985 fixed)")
    line = next(i for i, ln in enumerate(open(prog), 1) if ln.startswith("class SafeSqrt"))
    first = d["next_steps"][0]["why"]
    assert f"`SafeSqrt` (custom_jvp_dropped.py:{line})" in first and "pytorch#192985" in first, d["next_steps"]


def test_a_size_used_as_a_dict_key_gets_the_cache_fix(tmp_path):
    """Blind A/B batch 37: a position table cached in a dict keyed by x.shape[1]; the shape cause's fix talked of
    Python loops and batched ops. A size made static by a dict-key test names the cache and its tensor-op fix."""
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3", program("rc_dict_cache_len.py"),
                    timeout=600)
    causes = [c for f in d["recompiles"] for c in f["causes"] if c["kind"] == "shape" and c.get("specialized_at")]
    assert causes, d["recompiles"]
    assert "as a dict key" in causes[0]["fix"] and "self.table[:n]" in causes[0]["fix"], causes[0]


def test_sigfpe_only_compiled_is_an_unchecked_integer_division(tmp_path):
    """Blind A/B batch 38: int64 torch.div(..., rounding_mode="trunc") by a zero count; eager raises a catchable
    ZeroDivisionError that the worker rejects, the compiled kernel divides unchecked and the process dies of SIGFPE.
    The Next was a bisect for a native crash; now the class names the integer division and checking the divisor."""
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3",
                    program("int_div_zero_worker.py"), timeout=600)
    assert d["signal"] == "SIGFPE" and d["verdict"]["kind"] == "compile_only", (d["signal"], d["verdict"])
    e = d["errors"][0]
    assert e["category"] == "integer_division_by_zero" and e["side"] == "user", e
    first = d["next_steps"][0]
    assert "check the divisor before the compiled call" in first["why"] and first["command"] is None
    assert not any("bisect" in (s["command"] or "") for s in d["next_steps"])


def test_a_custom_op_returning_a_python_float_is_named_when_output_differs(tmp_path):
    """Blind A/B batch 38: an int8 simulation's scale op declared `-> float`, its fake returning 1.0: the compiled
    graph keeps 1.0 and drops the op's result (Dynamo alone too); the generic Dynamo-side advice did not name it.
    The --vs-eager Next names the op and the 0-d tensor fix."""
    prog = program("custom_op_float_scale.py")
    d, p = run_json("triage", "--vs-eager", "--no-tlparse", "--out", tmp_path / "t", "--", "python3", prog, timeout=600)
    assert d["vs_eager"]["differ"], d["vs_eager"]
    line = next(i for i, ln in enumerate(open(prog), 1) if ln.startswith("def percentile_scale"))
    first = d["next_steps"][0]["why"]
    assert f"`cdtest::percentile_scale` (custom_op_float_scale.py:{line})" in first and "0-d tensor" in first, first


def test_module_backward_hooks_of_the_programs_own_are_not_library_breaks(tmp_path):
    """Blind A/B batch 38: a gradient monitor registered full backward hooks on BERT's layers; the break (GB0083) is
    reported inside the library that calls the hooked module, and triage said "in library code, not yours" with a
    torch.compiler.disable workaround. The program's own registration makes it the user's, with the GB0083 recipe."""
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3",
                    program("module_backward_hook_monitor.py"), timeout=600)
    [b] = [b for b in d["graph_breaks"] if b["gb_id"] == "GB0083"]
    assert not b["in_library"] and b["fix"]["recipe_id"] == "GB0083", b
    assert "BackwardState requires CompiledAutograd" in b["fix"]["fix"] and "output + probe" in b["fix"]["fix"]


def test_a_slice_bound_recompile_is_expected(tmp_path):
    """Blind A/B batch 38: a length dim made dynamic, then a request longer than the `ids[:, :256]` slice bound.
    The range guard (`2 <= ids.size()[1] <= 255`) is its own cause, expected once, beside the automatic-dynamic
    mismatch; no "stop the recompiles" Next for a program that is fine."""
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3", program("rc_slice_bound.py"),
                    timeout=600)
    [f] = d["recompiles"]
    assert f["expected_only"], f["causes"]
    rng = [c for c in f["causes"] if c["guard"].startswith("2 <= ")]
    assert len(rng) == 1 and "a size above 255" in rng[0]["why"], f["causes"]
    assert rng[0]["location"]["code"].strip() == "ids = ids[:, :self.window]", rng[0]
    assert not any("stop the recompiles" in s["why"] for s in d["next_steps"]), d["next_steps"]


def test_a_comprehension_frame_after_a_break_goes_with_that_break(tmp_path):
    """Fresh check after blind A/B batch 38: backward hooks on a tiny Llama's layers (GB0083); transformers'
    output-capturing wrapper then runs eagerly and, on Python 3.11, its dict comprehension is a frame of its own that
    Dynamo cannot start (GB9493, 'dict_keyiterator'). That break gets the comprehension note, no library setting
    (the output_hidden_states note does not fit), and no Next of its own."""
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3",
                    program("hf_llama_layer_grad_monitor.py"), timeout=900)
    comp = [b for b in d["graph_breaks"] if b["fix"].get("recipe_id") == "comprehension_frame"]
    if not comp:
        pytest.skip("no comprehension frame here (Python 3.12+ inlines comprehensions, or another transformers)")
    assert not comp[0]["workarounds"] and "goes away with the break before it" in comp[0]["fix"]["fix"], comp[0]
    assert any(b["gb_id"] == "GB0083" for b in d["graph_breaks"])
    assert not any("GB9493" in s["why"] for s in d["next_steps"]), d["next_steps"]


@pytest.mark.parametrize("fixed", [False, True])
def test_data_access_in_a_custom_ops_traced_backward_is_named(fixed, tmp_path):
    """Blind A/B batch 39: a custom op's register_autograd backward calls .numpy(); compiled training raises
    ".numpy() is not supported for tensor subclasses" inside backend 'inductor' and the Next was a bisect. The row
    traced_data_access names the line and the fix (the numpy backward as a custom op of its own), and the fix
    holds: the same program with it trains compiled."""
    args = ["--fixed"] if fixed else []
    # a cache of its own: the compile caches' key does not see a custom op's register_autograd, so the other
    # variant's graph would be served from a shared cache (pytorch#187319)
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3",
                    program("custom_op_numpy_backward.py"), *args, timeout=600,
                    env={"TORCHINDUCTOR_CACHE_DIR": fresh_cache(tmp_path / "cache")})
    if fixed:
        assert d["exit_code"] == 0 and not d["errors"], d["errors"]
        return
    e = d["errors"][0]
    assert e["category"] == "traced_data_access" and e["location"]["line"], e
    first = d["next_steps"][0]
    assert "into a custom op of its own" in first["why"] and not first["command"], d["next_steps"]
    assert not any(" bisect" in (s["command"] or "") for s in d["next_steps"]), d["next_steps"]


def test_breaks_and_failed_recompiles_of_an_error_that_fails_eagerly_too_get_no_next(tmp_path):
    """Blind A/B batch 65: torch.compile(torch.func.grad(f)) over a model calling a register_autograd custom op fails
    with or without torch.compile ("must override the setup_context staticmethod"). Next 2-4 were the fullgraph
    error, the same error's GB0149 break and a recompile whose compile failed: none is a step of its own. The breaks
    say the program's error raised them; the fix (torch.autograd.grad, FIXED=1) runs compiled."""
    prog = program("func_grad_custom_op.py")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=600)
    assert d["verdict"]["kind"] == "fails_eager_too", d["verdict"]
    assert len(d["next_steps"]) == 1 and d["next_steps"][0]["why"].startswith("fix your program at "), d["next_steps"]
    assert d["graph_breaks"] and all(b["fix"].get("explained_by_eager") for b in d["graph_breaks"]), d["graph_breaks"]
    md = (tmp_path / "t" / "report.md").read_text()
    assert "fixing that error removes this break" in md and "patch upstream" not in md, md
    r = subprocess.run([sys.executable, prog], env=dict(os.environ, FIXED="1"), capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0 and "book delta" in r.stdout, r.stderr[-1500:]


def test_a_counter_on_an_active_torch_function_mode_is_its_own_recompile_kind(tmp_path):
    """Blind A/B batch 64: a serving gate counts ops in a TorchFunctionMode around each request; Dynamo traces its
    __torch_function__ and guards `___get_torch_function_mode_stack_at(0).ops_seen == N`, a recompile per request.
    perf/triage called it global_state ("set it once before compiling"), a fix for flags such as autocast. Now it is
    function_mode_state with the early return while tracing; that fix (FIXED=1) compiles once."""
    prog = program("function_mode_counter_recompiles.py")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=600)
    (fn,) = d["recompiles"]
    (c,) = fn["causes"]
    assert c["kind"] == "function_mode_state" and c["location"]["line"] == 23 and fn["limit_hit"], fn
    assert "torch.compiler.is_compiling()" in c["fix"] and "Set it once before compiling" not in c["fix"], c["fix"]
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "f", "--", sys.executable, prog, timeout=600,
                    env={"FIXED": "1"})
    assert d["exit_code"] == 0 and not d["recompiles"] and d["stats"]["graphs"] == 1, d["stats"]


def test_a_module_built_inside_the_compiled_forward_is_the_programs_line(tmp_path):
    """Blind A/B batch 64: a QK-norm helper returns `nn.LayerNorm(d)(t)`, a module built on every call inside the
    compiled forward (fullgraph=True); GB0264 breaks in LayerNorm's __init__, and the report said "In library code
    (torch), not yours" with a fix "to torch: for a patch upstream". Now the break is the program's line, with the
    build-once / functional fix; that fix (FIXED=1) compiles in one graph and matches eager."""
    prog = program("module_built_in_forward.py")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=600)
    (b,) = d["graph_breaks"]
    assert b["gb_id"] == "GB0264" and not b["in_library"] and b["location"]["line"] == 35, b
    assert b["fix"]["recipe_id"] == "module_built_in_compiled" and "F.layer_norm" in b["fix"]["fix"], b["fix"]
    assert "nn.LayerNorm" in b["fix"]["fix"] and "cannot convert to traceable" in b["fix"]["fix"], b["fix"]
    md = (tmp_path / "t" / "report.md").read_text()
    assert "not yours" not in md and "patch upstream" not in md, md
    r = subprocess.run([sys.executable, prog], env=dict(os.environ, FIXED="1"), capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0 and "max |compiled - eager|" in r.stdout, r.stderr[-1500:]
    # (review of 0.33.182) the program's own module class built in forward: its forward line, not the nn.Linear line
    # of its __init__; a module built once and stored: build it in __init__, no functional form
    for variant, line, key, module in (("proj", 30, "module_built_in_compiled", "builds Scale "),
                                       ("lazy", 33, "module_built_lazily", "builds nn.LayerNorm ")):
        d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / variant, "--", sys.executable, prog,
                        timeout=600, env={"VARIANT": variant})
        (b,) = d["graph_breaks"]
        assert b["location"]["line"] == line and b["fix"]["recipe_id"] == key and module in b["fix"]["fix"], b
        assert ("F.layer_norm" in b["fix"]["fix"]) == (variant != "lazy"), b["fix"]["fix"]
    # a library that builds the module: the library's break, not the program's line
    lib = tmp_path / "lib" / "site-packages" / "normlib"
    lib.mkdir(parents=True)
    (lib / "__init__.py").write_text("import torch.nn as nn\n\n\ndef normalize(t):\n    return nn.LayerNorm(t.shape[-1])(t)\n")
    user = tmp_path / "uses_normlib.py"
    user.write_text("import torch\nimport normlib\n\n\n@torch.compile(fullgraph=True)\ndef f(x):\n"
                    "    return normlib.normalize(x) * 2\n\n\nprint(f(torch.randn(4, 8)).shape)\n")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "libr", "--", sys.executable, user, timeout=600,
                    env={"PYTHONPATH": str(lib.parent)})
    (b,) = d["graph_breaks"]
    assert b["in_library"] and b["library"] == "normlib" and b["fix"].get("recipe_id") != "module_built_in_compiled", b


def test_data_access_in_the_programs_own_traced_code_is_not_sent_to_a_custom_op(tmp_path):
    """Blind A/B batch 64: an RMSNorm's alignment check, x.data_ptr() % 16, runs on the CPU path of a model that
    torch.export traces; torch's message says to wrap a custom kernel in a custom op and the Next said the same.
    No custom op is in the program: the Next names the line and skipping it while tracing (or moving it into the
    kernel's branch), with no bisect; that fix (FIXED=1) exports and matches eager."""
    prog = program("export_data_ptr_alignment.py")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=600)
    e, first = d["errors"][0], d["next_steps"][0]
    assert e["category"] == "traced_data_access" and e["location"]["line"] == 16, e
    assert "export_data_ptr_alignment.py:16 reads a tensor's data" in first["why"], first
    assert "torch.compiler.is_compiling()" in first["why"] and "no custom op is involved" in first["why"], first
    assert "called from the traced formula" not in first["why"] and not first["command"], d["next_steps"]
    assert not any(" bisect" in (s["command"] or "") for s in d["next_steps"]), d["next_steps"]
    r = subprocess.run([sys.executable, prog], env=dict(os.environ, FIXED="1"), capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0 and "export ok, max |exported - eager| = 0.00e+00" in r.stdout, r.stderr[-1500:]
    # (review of 0.33.181) the data handed to the program's own kernel (ctypes.memmove writes the output): custom op
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "k", "--", sys.executable,
                    program("export_ctypes_kernel.py"), timeout=600)
    first = d["next_steps"][0]["why"]
    assert "passes a tensor's data to `ctypes.memmove`" in first and "custom op" in first, first
    assert "is_compiling" not in first, first


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["as_written", "--shape-fake"])
def test_autograd_in_a_custom_ops_kernels_is_named(variant, tmp_path):
    """Blind A/B batch 40: a custom op computes forces with torch.func.vjp, in its fake kernel too. Compiled, the
    fake kernel raises on fake tensors; with a shape-only fake kernel, the real kernel raises under compiled code's
    first-call aliasing check ("Cannot access storage of TensorWrapper"). Both were "minify" Nexts. Now the first
    names the fake kernel's line and says the real kernel fails next; the second names autograd in the kernel, with
    no minify or bisect; and the written-out gradient (--fixed) runs compiled."""
    args = [] if variant == "as_written" else [variant]
    if args:
        import torch._functorch.config as functorch_config
        if not hasattr(functorch_config, "check_custom_op_aliasing"):
            pytest.skip("this torch runs no first-call aliasing check of custom ops")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3",
                    program("custom_op_autograd_kernel.py"), *args, timeout=600)
    e, first = d["errors"][0], d["next_steps"][0]
    assert d["verdict"]["kind"] == "compile_only", d["verdict"]
    assert not any(s["command"] and re.search(r" (minify|bisect)\b", s["command"]) for s in d["next_steps"]), d["next_steps"]
    assert not e["next_command"], e
    if not args:
        line = next(i for i, ln in enumerate(open(program("custom_op_autograd_kernel.py")), 1)
                    if "register_fake" in ln) + 1
        assert e["category"] == "fake_tensor_error", e
        assert f"potential::energy_forces (custom_op_autograd_kernel.py:{line})" in first["why"], first
        assert "it fails next" in first["why"], first
        return
    assert e["category"] == "custom_op_kernel_autograd" and e["side"] == "custom_op", e
    assert "check_custom_op_aliasing = False" in first["why"], first
    fixed = subprocess.run([sys.executable, program("custom_op_autograd_kernel.py"), "--fixed"], capture_output=True,
                           text=True, timeout=600, env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert fixed.returncode == 0 and "E after 3 steps" in fixed.stdout, fixed.stderr[-2000:]


def test_an_explain_gate_is_not_cleared_by_the_eager_run(tmp_path):
    """Blind A/B batch 39: a CI gate counts graph breaks with torch._dynamo.explain, which traces under any compile
    stance, so triage's run without torch.compile fails the same way. The verdict does not call it the program's bug
    with torch.compile not the cause: it names the explain call, and the Next starts with the graph break."""
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3",
                    program("explain_gate_breaks.py"), timeout=600)
    v = d["verdict"]
    line = next(i for i, ln in enumerate(open(program("explain_gate_breaks.py")), 1) if "_dynamo.explain(" in ln)
    assert v["kind"] == "not_sure" and v["explain_call"] == f"explain_gate_breaks.py:{line}", v
    assert d["next_steps"][0]["why"].startswith("fix graph break at explain_gate_breaks.py:"), d["next_steps"]
    # the fixed gate prints other counts than the eager check did, but those were explain's (Dynamo's) too: no
    # "unlike what the program printed without torch.compile" (blind A/B batch 66)
    c, p = run_json("compare", tmp_path / "t", "--out", tmp_path / "c", "--", "python3",
                    program("explain_gate_breaks.py"), "--fixed", timeout=600)
    assert c["after"]["exit_code"] == 0 and c["unlike_eager"] is None and "unlike" not in c["verdict"], c["verdict"]


@pytest.mark.parametrize("named", [False, True])
def test_pickling_a_compiled_function_gets_its_row(named, tmp_path):
    """Blind A/B batch 39: spawn DataLoader workers pickle a Dataset that holds `fast = torch.compile(fn)`: "Can't
    pickle <function fn>: it's not the same object as module.fn". The row names the copied name, and its fix (a
    module-level name of the compiled function's own) holds."""
    args = ["--named"] if named else []
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3",
                    program("pickle_compiled_featurizer.py"), *args, timeout=600)
    if named:
        assert d["exit_code"] == 0 and not d["errors"], d["errors"]
        return
    e = d["errors"][0]
    assert e["category"] == "pickle_compiled_function" and e["side"] == "user", e
    assert not any("bisect" in (s["command"] or "") for s in d["next_steps"]), d["next_steps"]


@pytest.mark.parametrize("bool_mask", [False, True])
def test_a_warning_on_a_deprecated_input_gets_the_warn_recipe(bool_mask, tmp_path):
    """Blind A/B batch 39: a block warns (DeprecationWarning) on float masks and the data builds float masks, so
    warnings.warn breaks the graph on every call (fullgraph fails). The break's recipe says the warning marks a path
    taken because of the input, and to pass what the code expects; with the bool mask the program compiles whole."""
    args = ["--bool"] if bool_mask else []
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3",
                    program("gb_deprecated_mask_warn.py"), *args, timeout=600)
    if bool_mask:
        assert d["exit_code"] == 0 and not d["graph_breaks"], d["graph_breaks"]
        return
    [b] = d["graph_breaks"]
    assert b["fix"]["recipe_id"] == "construct:warn" and "give it what it expects" in b["fix"]["fix"], b["fix"]


@pytest.mark.parametrize("fixed", [False, True])
def test_a_custom_ops_dtype_mismatch_names_the_real_kernels_numpy_result(fixed, tmp_path):
    """Blind A/B batch 41: a custom op's real kernel returns np.interp's float64, its fake kernel float32; the Next
    said to make the fake kernel return the real kernel's dtype (the wrong side: the float64 was unintended). Now it
    names both dtypes and the cast in the real kernel; with that cast the program compiles."""
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3",
                    program("custom_op_numpy_dtype.py"), *(["--fixed"] if fixed else []), timeout=600,
                    env={"TORCHINDUCTOR_CACHE_DIR": fresh_cache(tmp_path / "cache")})
    if fixed:
        assert d["exit_code"] == 0 and not d["errors"], d["errors"]
        return
    assert d["errors"][0]["category"] == "custom_op_bad_fake", d["errors"]
    first = d["next_steps"][0]["why"]
    assert first.startswith("churn_demo::recency's real kernel returned torch.float64 where its fake kernel declares "
                            "torch.float32") and "to(dtype=x.dtype" in first, first


@pytest.mark.slow
def test_a_run_that_fails_only_without_torch_compile_gets_that_failure_first(tmp_path):
    """Blind A/B batch 40: a keep probability on an unclamped schedule reaches 1.0625; eager's bernoulli rejects it,
    the compiled one (rand < p) does not check. --vs-eager's first Next was the accuracy run (numbers differ by random
    draws); now it is the eager failure with its line and what compiled code skips; clamped, eager runs too."""
    d, p = run_json("triage", "--vs-eager", "--no-tlparse", "--out", tmp_path / "t", "--", "python3",
                    program("eager_only_bernoulli.py"), timeout=600)
    assert d["exit_code"] == 0 and d["vs_eager"]["eager_exit_code"] == 1, d["vs_eager"]
    first = d["next_steps"][0]
    line = next(i for i, ln in enumerate(open(program("eager_only_bernoulli.py")), 1) if "torch.bernoulli(" in ln)
    assert first["why"].startswith(f"the run without torch.compile failed at eager_only_bernoulli.py:{line}: "
                                   "RuntimeError: Expected p_in"), first
    assert "compiled code may skip" in first["why"] and not first["command"], first
    clamped = subprocess.run([sys.executable, program("eager_only_bernoulli.py"), "--clamp"], capture_output=True,
                             text=True, timeout=300, env=dict(os.environ, TORCH_COMPILE_DISABLE="1", OMP_NUM_THREADS="1"))
    assert clamped.returncode == 0 and "epoch 5" in clamped.stdout, clamped.stderr[-2000:]


@pytest.mark.parametrize("use_math", [False, True])
def test_a_constructor_reading_traced_values_is_named_without_minify(use_math, tmp_path):
    """Blind A/B batch 40: np.cos/np.sin of a Python float, traced as 0-d tensors, fed to the legacy torch.Tensor(list)
    constructor: "data is not allocated yet" while tracing, and the Next was minify. Now the Next says the op needs
    values tracing lacks and names math.cos / torch.stack; with math.cos the program compiles."""
    args = ["--math"] if use_math else []
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3",
                    program("fake_numpy_rotation.py"), *args, timeout=600)
    if use_math:
        assert d["exit_code"] == 0 and not d["errors"] and not d["graph_breaks"], d["errors"]
        return
    e, first = d["errors"][0], d["next_steps"][0]
    assert e["category"] == "fake_tensor_error" and not e["next_command"], e
    line = next(i for i, ln in enumerate(open(program("fake_numpy_rotation.py")), 1) if "torch.Tensor([" in ln)
    assert first["why"].startswith("`torch.Tensor(...)` at ") and f"fake_numpy_rotation.py:{line}" in first["why"] \
        and "math.cos" in first["why"], first
    assert not any(s["command"] and " minify" in s["command"] for s in d["next_steps"]), d["next_steps"]


@pytest.mark.slow
@pytest.mark.parametrize("fixed", [False, True])
def test_a_float_pinned_by_an_op_that_takes_a_number_is_named(fixed, tmp_path):
    """Blind A/B batch 40: a masking ratio on a schedule feeds torch.full_like's fill value; the float is dynamic
    after its first change, but full_like takes only a Python number, so every step recompiled. The guard's line is
    the `if ratio > 0:` before it and the fix said to pass a 0-d tensor (which that branch would break on). Now the
    cause names the full_like line and the tensor-arithmetic fix; with it, one expected recompile."""
    args = ["--fixed"] if fixed else []
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3",
                    program("rc_float_full_like.py"), *args, timeout=600)
    [fr] = d["recompiles"]
    [c] = fr["causes"]
    assert c["kind"] == "python_float", c
    if fixed:
        assert c["expected"] and c["count"] == 1, c
        return
    assert not c["expected"] and c["count"] >= 4, c
    line = next(i for i, ln in enumerate(open(program("rc_float_full_like.py")), 1) if "torch.full_like(" in ln)
    assert c["specialized_at"]["line"] == line and "torch.full_like" in c["specialized_reason"], c
    assert "tensor arithmetic" in c["fix"] and "unless Python code branches on it" in c["fix"], c


@pytest.mark.parametrize("torch_ops", [False, True])
def test_a_numpy_function_torch_numpy_lacks_gets_its_own_recipe(torch_ops, tmp_path):
    """Blind A/B batch 40: np.nanmedian in a model's robust scaling breaks the graph (GB0294: no such function in
    torch._numpy). The recipe was GB0293's "trace_numpy was set to False", which the program never did; now it says
    torch._numpy lacks the function and names the torch op (and its median convention); with it, one graph."""
    args = ["--torch"] if torch_ops else []
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3",
                    program("gb_numpy_nanmedian.py"), *args, timeout=600)
    assert d["exit_code"] == 0, d["errors"]
    if torch_ops:
        assert not d["graph_breaks"], d["graph_breaks"]
        return
    [b] = d["graph_breaks"]
    assert b["fix"]["recipe_id"] == "GB0294" and "torch.nanmedian" in b["fix"]["fix"], b["fix"]
    assert "trace_numpy was set" not in b["fix"]["fix"], b["fix"]


def test_an_ill_conditioned_gate_is_rounding_with_the_math_named(tmp_path):
    """Blind A/B batch 39's review: a gate on a float32 std_mean over ~1e5 values with a 0.4 spread; the printed
    comparison `max|compiled-eager| = ...` (no space after max) was read as not comparing numbers, and the Next
    guessed at a later call. It is an output check; compiled is as close to fp64 as eager, and the gate advice
    names the ill-conditioned step (eager thousands of eps from fp64)."""
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3",
                    program("acc_offset_std_gate.py"), timeout=900)
    acc = d["verdict"]["accuracy"]
    if acc["verdict"] == "noise":   # compiled more than 3x further from fp64 here: the ill-conditioned noise verdict
        assert acc["summary"].startswith("not a measured miscompile"), acc
        return
    assert acc["verdict"] == "rounding" and "ill-conditioned" in acc["gate"], acc


@pytest.mark.slow
def test_a_miscompile_verdict_needs_an_accurate_eager(tmp_path):
    """Blind A/B batch 39 (ae_microbaro_parity_gate): torch's check found compiled 4x further from fp64 than eager,
    but eager itself was ~1e4 eps off (float32 std_mean over ~101325 Pa): "measured miscompile, bisect" was the
    Next. Eager that far from fp64 makes it an ill-conditioned computation: no miscompile verdict, no bisect."""
    case = os.path.join(ROOT, "evals", "blind_cases", "ae_microbaro_parity_gate")
    work = tmp_path / "w"
    shutil.copytree(case, work, ignore=shutil.ignore_patterns("case.yaml"))
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3", str(work / "parity_gate.py"),
                    timeout=900)
    acc = d["verdict"]["accuracy"]
    assert acc["verdict"] in ("noise", "rounding"), acc
    assert not any("bisect" in (s["command"] or "") for s in d["next_steps"]), d["next_steps"]


@pytest.mark.parametrize("no_cache", [False, True])
def test_an_export_returning_a_cache_object_gets_its_row(no_cache, tmp_path):
    """Blind A/B batch 39: a causal LM exported for scoring returned a DynamicCache (use_cache on): "Found <class ...>
    in output, which is not a known type"; the Next was the export command on a factory. The row says to turn the
    cache off or return the tensors needed, and that fix exports."""
    args = ["--no-cache"] if no_cache else []
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3",
                    program("export_output_cache_object.py"), *args, timeout=600)
    if no_cache:   # batch 38's review: an export without dynamic_shapes gets the fixed shapes first
        assert d["exit_code"] == 0 and not d["errors"], d["errors"]
        assert "first the shapes: the export at export_output_cache_object.py:" in d["next_steps"][0]["why"], \
            d["next_steps"]
        return
    e = d["errors"][0]
    assert e["category"] == "export_output_not_pytree" and e["side"] == "user", e
    assert "use_cache" in d["next_steps"][0]["why"], d["next_steps"]


def test_a_standard_library_call_on_a_tensor_is_the_programs_line_not_a_library_break(tmp_path):
    """Blind A/B batch 44: copy.deepcopy(patches.detach()) under fullgraph=True breaks inside copy.py (GB4198); triage
    said "In library code (copy), not yours", "a patch upstream", and offered copy.deepcopy =
    torch.compiler.disable(copy.deepcopy), which still splits the graph (fullgraph still fails). The standard
    library is not the user's to patch: the break is the program's line, with PyTorch's hint; .clone() passes."""
    prog = program("gb_deepcopy_fullgraph.py")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=600)
    [b] = [b for b in d["graph_breaks"] if b["gb_id"] == "GB4198"]
    assert not b["in_library"] and b["location"]["file"].endswith("gb_deepcopy_fullgraph.py"), b
    assert not any("torch.compiler.disable(copy.deepcopy)" in (w.get("code") or "") for w in b["workarounds"]), b
    md = open(tmp_path / "t" / "report.md").read()
    assert "In library code (copy)" not in md and "patch upstream" not in md, md
    fixed = subprocess.run([sys.executable, prog], env=dict(os.environ, CLONE="1"), capture_output=True, text=True,
                           timeout=300)
    assert fixed.returncode == 0 and "loss " in fixed.stdout, fixed.stderr[-1500:]


def test_a_size_an_int_only_op_makes_static_is_not_an_expected_recompile(tmp_path):
    """Blind A/B batch 45: torch.linspace(-1, 1, steps=h) in a CoordConv under dynamic=True; a short run's two
    recompiles (one per dim) were labelled "expected: automatic dynamic (once)" with a warm-up Next, beside "Made
    static by your code". The program's line keeps the dim static, so every new size compiles again: the cause is
    not expected and its fix names linspace's int steps and the arange form, which compiles once."""
    prog = program("rc_linspace_coords.py")
    d, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=600)
    [f] = d["recompiles"]
    shape = [c for c in f["causes"] if c["kind"] == "shape"]
    assert shape and not any(c["expected"] for c in shape) and not f["expected_only"], f["causes"]
    assert all("torch.linspace, which takes it as a plain Python int" in c["fix"] for c in shape), shape
    why = d["next_steps"][0]["why"]
    assert why.startswith("stop the recompiles") and "one recompile per dim in this run, and each further size adds " \
        "another" in why, d["next_steps"]
    fixed, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "f", "--", sys.executable, prog,
                        env={"ARANGE": "1"}, timeout=600)
    assert sum(len(x["recompiles"]) for x in fixed["recompiles"]) <= 1, fixed["recompiles"]


def test_a_size_pinned_by_float_math_names_that_line_not_the_branch_after_it(tmp_path):
    """Blind A/B batch 46: a subsampling front end under dynamic=True computes its output length as
    int(np.ceil(T / 4)); Dynamo guards the float T / 4 to its exact value (Eq(IntTrueDiv(s, 4), 72.0)), and the
    `if pad:` after it is where the size is then called static. The report named only `if pad:` with the loop
    advice; now it names the np.ceil line with the guard and integer ceil division, which compiles once."""
    prog = program("rc_np_ceil_len.py")
    d, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=600)
    [f] = d["recompiles"]
    [c] = [c for c in f["causes"] if c["kind"] == "shape"]
    line = next(i for i, t in enumerate(open(prog), 1) if "return int(np.ceil(n_frames / self.stride))" in t)
    assert c["specialized_at"]["line"] == line, c
    assert "Eq(IntTrueDiv(" in c["specialized_reason"] and "range_refined_to_singleton" in c["specialized_reason"], c
    assert "(n + k - 1) // k" in c["fix"] and "A Python loop over it" not in c["fix"], c["fix"]
    assert f"rc_np_ceil_len.py:{c['specialized_at']['line']}" in d["next_steps"][0]["why"], d["next_steps"]
    fixed, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "f", "--", sys.executable, prog,
                        env={"FIXED": "1"}, timeout=600)
    assert not fixed["recompiles"] and len(fixed["graphs"]) == 1, (fixed["recompiles"], fixed["graphs"])


def test_a_compiled_run_that_raises_is_not_compared_line_by_line_and_retain_grad_gets_its_recipe(tmp_path):
    """Blind A/B batch 46: under fullgraph=True, fmap.retain_grad() inside forward raises (GB0108) and the run
    without torch.compile trains; with --vs-eager the report compared the error's text with eager's output, ran
    Dynamo alone and said "the difference is in how Dynamo ran the program's Python". Now the comparison says the
    compiled run stopped at its error (no Dynamo-alone run, no such step) and GB0108's recipe names the zero probe,
    which gives one graph (PROBE=1)."""
    prog = program("gb_retain_grad_cam.py")
    d, _ = run_json("triage", "--vs-eager", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog,
                    timeout=600)
    assert d["vs_eager"]["compiled_stopped"] and "the difference is that error" in d["vs_eager"]["verdict"], d["vs_eager"]
    assert not (tmp_path / "t" / "dynamo_alone").exists()
    assert not any("how Dynamo ran" in s["why"] for s in d["next_steps"]), d["next_steps"]
    [b] = d["graph_breaks"]
    assert b["gb_id"] == "GB0108" and "`fmap = fmap + probe`" in b["fix"]["fix"], b["fix"]
    fixed, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "f", "--", sys.executable, prog,
                        env={"PROBE": "1"}, timeout=600)
    assert fixed["exit_code"] == 0 and not fixed["graph_breaks"] and len(fixed["graphs"]) == 1, fixed["graphs"]


def test_a_float_guard_on_a_ratio_of_two_sizes_is_not_named_as_the_pinning_line(tmp_path):
    """Review of batch 46's float-math rule: `if ref.shape[-1] / x.shape[-1] == 2.0:` adds Eq(IntTrueDiv(s1, s0),
    2.0), which pins only the ratio; the Hann window of a Python-int length (and the product with it) is what makes
    the length static. The report does not name the ratio check, nor give the float-math advice."""
    prog = program("rc_ratio_hann.py")
    d, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=600)
    made = [c for f in d["recompiles"] for c in f["causes"] if c.get("specialized_at")]
    assert made, d["recompiles"]
    ratio = next(i for i, t in enumerate(open(prog), 1) if "ref.shape[-1] / x.shape[-1] == 2.0" in t)
    assert all(c["specialized_at"]["line"] > ratio and "(n + k - 1) // k" not in c["fix"] for c in made), made


def test_a_float_scale_factor_gets_the_integer_size_fix_not_tensor_arithmetic(tmp_path):
    """Blind A/B batch 46: a per-request float passed as F.interpolate's scale_factor recompiled for every DPI; the
    fix said to compute that step with tensor arithmetic on the float, which cannot help where the float decides a
    size (the plugin arm's first edit kept 4 recompiles). The fix now names integer sizes (size=), which compile
    once (INT_SIZE=1)."""
    prog = program("rc_interp_scale.py")
    d, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=600)
    [c] = [c for f in d["recompiles"] for c in f["causes"] if c["kind"] == "python_float"]
    assert "decides the output's size" in c["fix"] and "tensor arithmetic" not in c["fix"], c["fix"]
    fixed, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "f", "--", sys.executable, prog,
                        env={"INT_SIZE": "1"}, timeout=600)
    assert not fixed["recompiles"] and len(fixed["graphs"]) == 1, (fixed["recompiles"], fixed["graphs"])


def test_under_fullgraph_a_compiler_disable_patch_is_not_offered_as_a_way_around(tmp_path):
    """Blind A/B batch 47: fork_rng inside a step compiled with fullgraph=True breaks at torch.get_rng_state; the
    report offered `torch.random.fork_rng = torch.compiler.disable(torch.random.fork_rng)`, which still breaks the
    graph and so fails under fullgraph ("Skip calling torch.compiler.disable()d function"). Under fullgraph no such
    patch is offered; without fullgraph it still is (there it runs)."""
    prog = program("gb_fork_rng_fullgraph.py")
    d, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=600)
    assert d["errors"][0]["category"] == "graph_break_fullgraph", d["errors"]
    assert d["graph_breaks"] and not any("torch.compiler.disable(" in (w.get("code") or "")
                                         for b in d["graph_breaks"] for w in b["workarounds"]), d["graph_breaks"]
    loose, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "l", "--", sys.executable, prog,
                        env={"FULLGRAPH": "0"}, timeout=600)
    assert loose["exit_code"] == 0 and any("torch.compiler.disable(" in (w.get("code") or "")
                                           for b in loose["graph_breaks"] for w in b["workarounds"]), loose["graph_breaks"]


def test_a_custom_op_writing_its_input_with_empty_mutates_args_is_named_before_bisect(tmp_path):
    """Blind A/B batch 47: a custom op normalized its input's rows in place through NumPy with mutates_args=(); the
    compiled graph read the input before the op, and the Next was bisect. The program's op is now named with its
    argument and the declaration fix (the caches ignore mutates_args: a fresh cache), which matches eager (an edited
    copy).
    An op that writes only a clone is not named."""
    from cdlib.decide.custom_op_source import undeclared_mutations
    prog = program("custom_op_undeclared_mutation.py")
    d, _ = run_json("triage", "--vs-eager", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog,
                    env={"TORCHINDUCTOR_CACHE_DIR": fresh_cache(tmp_path / "c1")}, timeout=600)
    why = " ".join(s["why"] for s in d["next_steps"])
    assert "`cdtest::normalize_rows_inplace` (custom_op_undeclared_mutation.py:" in why and "appears to write `x`" in why, why
    assert 'mutates_args=("x",)' in why, why
    edited = tmp_path / "fixed.py"
    edited.write_text(open(prog).read().replace('mutates_args=()', 'mutates_args=("x",)'))
    fixed = subprocess.run([sys.executable, edited], capture_output=True, text=True, timeout=600,
                           env=dict(os.environ, TORCHINDUCTOR_CACHE_DIR=fresh_cache(tmp_path / "c2")))
    m = re.search(r"eager (\S+) compiled (\S+)", fixed.stdout)
    assert fixed.returncode == 0 and m and m.group(1) == m.group(2), fixed.stdout + fixed.stderr[-1500:]
    clone = tmp_path / "clone_op.py"
    clone.write_text('import torch\n@torch.library.custom_op("t::f", mutates_args=())\n'
                     'def f(x: torch.Tensor) -> torch.Tensor:\n    y = x.clone()\n    y.add_(1)\n    y[0] = 0\n'
                     '    return y\n')
    assert undeclared_mutations([str(clone)]) == [] and undeclared_mutations([prog])[0][3] == "x"
    # the review's shapes (custom_op_mutation_shapes.py): fp_* write no input (a rebound clone or array, a list, a
    # nested helper's parameter); miss_* write x through .cpu().numpy(), an index or a transpose
    named = {name for _, _, name, _ in undeclared_mutations([program("custom_op_mutation_shapes.py")])}
    assert not {n for n in named if n.startswith("t::fp_")}, named
    assert {"t::miss_cpu_numpy", "t::miss_index_view", "t::miss_transpose"} <= named, named


def test_saved_tensors_hooks_in_compiled_code_get_the_graphmodule_recipe(tmp_path):
    """Blind A/B batch 47: bf16 activation compression with saved_tensors_hooks entered inside a block's forward under
    fullgraph=True; the Fix said nonstrict_trace or "move it out", and both arms read torch's source for 12-13 calls
    to find that hooks entered around the compiled call as fx GraphModules are built into the graphs."""
    d, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable,
                    program("gb_saved_tensors_hooks.py"), timeout=600)
    fixes = [b["fix"] for b in d["graph_breaks"]]
    assert any(f.get("recipe_id") == "construct:saved_tensors_hooks" and "torch.fx.GraphModule" in f["fix"]
               for f in fixes), fixes


def test_a_size_made_static_by_inductors_conv_backward_is_named_not_left_without_a_line(tmp_path):
    """Blind A/B batch 47: a TextCNN trained under dynamic=True on CPU still compiled per length once its own
    max_pool1d(h, h.size(2)) was fixed: Inductor's convolution_backward_lowering fixes the grad-input strides as ints.
    The report named no line and the generic shape fix; the plugin arm parsed the trace itself. Now the lowering is
    named with its ways around; the unfold + einsum form (UNFOLD=1) compiles once."""
    prog = program("rc_conv1d_backward_len.py")
    env = {"TORCHINDUCTOR_CACHE_DIR": fresh_cache(tmp_path / "c1")}
    d, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, env=env, timeout=600)
    [c] = [c for f in d["recompiles"] for c in f["causes"] if c["kind"] == "shape"]
    assert c["lowering_at"]["function"] == "convolution_backward_lowering" and not c["expected"], c
    assert "not your code" in c["fix"] and "unfold" in c["fix"], c["fix"]
    md = (tmp_path / "t" / "report.md").read_text()
    assert "Made static inside Inductor: `convolution_backward_lowering`" in md, md
    fixed, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "f", "--", sys.executable, prog,
                        env={"UNFOLD": "1", "TORCHINDUCTOR_CACHE_DIR": fresh_cache(tmp_path / "c2")}, timeout=600)
    assert not fixed["recompiles"] and len(fixed["graphs"]) == 1, (fixed["recompiles"], fixed["graphs"])


def test_a_recompile_stopped_by_fail_on_recompile_names_its_guard_and_duck_sizing(tmp_path):
    """Blind A/B batch 48: an EEG tagger under dynamic=True, warmed up on 64 samples with 64 channels, served under
    set_stance("fail_on_recompile"); the report said "names the failed guard and its fix" and showed neither (no
    recompile_reasons artifact for a stopped recompile). Now the error's guard is a recompile of its own, made static
    at the program's nn.Linear call by duck sizing (the two dims shared one symbol), and mark_dynamic fixes it."""
    prog = program("rc_duck_warmup.py")
    data, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "r", "--", sys.executable, prog, timeout=600)
    assert data["errors"][0]["category"] == "recompile_error", data["errors"][0]
    (fr,) = data["recompiles"]
    (c,) = fr["causes"]
    assert c["kind"] == "shape" and not c["expected"] and c["specialized_at"]["line"] == 19, c
    assert c["fix"].startswith("duck sizing") and "mark_dynamic(x, 2)" in c["fix"], c["fix"]
    fixed = subprocess.run([sys.executable, prog], env=dict(os.environ, FIXED="1"), capture_output=True, text=True,
                           timeout=600)
    assert fixed.returncode == 0 and "request of 448 samples" in fixed.stdout, fixed.stderr[-2000:]


def test_a_python_kernel_for_an_aten_op_that_reads_data_is_named_not_the_model_line(tmp_path):
    """Blind A/B batch 48: a project routed aten::tanh on CPU through a NumPy kernel (Library("aten", "IMPL").impl
    ("tanh", fn, "AutogradCPU")); torch.compile ran it on fake tensors and the Next said to move "the data access at"
    the model's nn.Tanh line into a custom op. Now the override (file:line, kernel) is named with pytorch#139707, and
    keeping the NumPy call in a custom op with a fake kernel (FIXED=1) runs compiled with eager's numbers."""
    prog = program("aten_override_numpy.py")
    data, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "r", "--", sys.executable, prog, timeout=600)
    e = data["errors"][0]
    assert e["category"] == "traced_data_access", e
    why = data["next_steps"][0]["why"]
    assert "`_sigmoid_cpu` for PyTorch's aten::sigmoid (aten_override_numpy.py:30" in why and "139707" in why, why
    fixed = subprocess.run([sys.executable, prog], env=dict(os.environ, FIXED="1"), capture_output=True, text=True,
                           timeout=600)
    assert fixed.returncode == 0 and "max|compiled - eager| = 0.00e+00" in fixed.stdout, fixed.stderr[-2000:]


def test_aten_overrides_are_the_aten_librarys_impls_only(tmp_path):
    """Review of 0.33.98: an impl on the program's own library (mylib.impl("gelu", ...)) was read as an aten override
    whenever the file named Library("aten"; the qualified name ("aten::tanh") and the decorator form were missed."""
    from cdlib.decide import custom_op_source
    src = tmp_path / "ovr.py"
    src.write_text('import torch\naten = torch.library.Library("aten", "IMPL")\n'
                   'mylib = torch.library.Library("mylib", "DEF")\nmylib.define("gelu(Tensor x) -> Tensor")\n'
                   'mylib.impl("gelu", lambda x: x, "CPU")\naten.impl("aten::tanh", lambda x: x, "AutogradCPU")\n'
                   '@torch.library.impl("aten::sigmoid", "AutogradCPU")\ndef sig(x):\n    return x\n')
    found = sorted((op, line, kernel) for _, line, op, kernel in custom_op_source.aten_overrides([str(src)]))
    assert found == [("sigmoid", 7, "sig"), ("tanh", 6, "lambda x: x")], found


def test_a_transformer_encoders_causal_mask_check_under_fullgraph_names_is_causal(tmp_path):
    """Blind A/B batch 48: nn.TransformerEncoder given a causal mask and no is_causal under fullgraph=True; its
    _detect_is_causal_mask turns a mask comparison into a Python bool ("Could not guard on data-dependent expression"
    in multi_head_attention_forward), and the report had only the generic data-dependent row. Now the row says to
    pass is_causal=True (FIXED=1 compiles as one graph), and the error's stack is not the program's printed output."""
    prog = program("gb_transformer_is_causal.py")
    data, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "r", "--", sys.executable, prog, timeout=600)
    e = data["errors"][0]
    assert e["category"] == "transformer_is_causal_detect" and "is_causal=True" in e["advice"], e
    assert not any("User Stack" in ln or "^^^" in ln for ln in data["printed_tail"]), data["printed_tail"]
    fixed = subprocess.run([sys.executable, prog], env=dict(os.environ, FIXED="1"), capture_output=True, text=True,
                           timeout=600)
    assert fixed.returncode == 0 and "loss " in fixed.stdout, fixed.stderr[-2000:]


def test_a_dispatch_key_guard_names_inference_mode_against_no_grad():
    """Blind A/B batch 49: a warm-up under inference_mode, requests under no_grad: "dispatch key set mismatch" got
    the generic tensor-metadata fix."""
    from cdlib.decide import knowledge
    k = knowledge.guard_kind("tensor 'ids' dispatch key set mismatch. expected DispatchKeySet(CPU, BackendSelect), "
                             "actual DispatchKeySet(CPU, BackendSelect, ADInplaceOrView, AutogradCPU)")
    assert k["kind"] == "dispatch_keys" and "inference_mode" in k["fix"], k
    # the inference_mode advice only where the sets differ by the keys inference_mode drops (review of 0.33.101: a
    # conj() view got it); a Conjugate key gets resolve_conj, any other key the generic metadata fix
    from cdlib.decide.guard_failures import parse_guard_failure
    keys = "tensor 'x' dispatch key set mismatch. expected DispatchKeySet(CPU, BackendSelect, ADInplaceOrView, " \
           "AutogradCPU), actual DispatchKeySet({})"
    for actual, kind in (("CPU, BackendSelect", "dispatch_keys"),
                         ("CPU, BackendSelect, Conjugate, ADInplaceOrView, AutogradCPU", "conj_neg"),
                         ("CPU, BackendSelect, Python, ADInplaceOrView, AutogradCPU", "tensor_metadata")):
        g = parse_guard_failure("0/1: " + keys.format(actual))
        assert g.kind == kind and (kind != "conj_neg" or "resolve_conj" in knowledge.guard_kind_by_id(kind)["fix"]), g


def test_an_int_that_indexes_a_module_list_gets_the_selection_fix(tmp_path):
    """Blind A/B batch 49: a per-request site id picking self.heads[site_id] (an nn.ModuleList) in a compiled forward
    recompiled per site until the limit; the int's Fix said it "becomes dynamic after its first change". Now the
    container index is named with compiling the shared part only (FIXED=1: no recompile)."""
    prog = program("rc_modulelist_index.py")
    data, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "r", "--", sys.executable, prog, timeout=600)
    (c,) = [c for f in data["recompiles"] for c in f["causes"] if c["kind"] == "python_int"]
    assert c["fix"].startswith("`site` indexes a Python container") and not c["expected"], c
    fixed, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "f", "--", sys.executable, prog,
                        env={"FIXED": "1"}, timeout=600)
    assert not any(f["recompiles"] for f in fixed["recompiles"]), fixed["recompiles"]


def test_an_int_that_indexes_a_tensor_under_dynamic_false_is_named_as_dynamic_false(tmp_path):
    """Review of 0.33.102: a buffer row picked by a slot number (self.bias_table[slot]) under dynamic=False got the
    container advice ("dynamic=True does not change that"): false for a tensor, where dynamic=True compiles one
    graph. Now the int's fix names dynamic=False, and with dynamic=True nothing recompiles."""
    prog = program("rc_tensor_row_index.py")
    data, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "r", "--", sys.executable, prog, timeout=600)
    (c,) = [c for f in data["recompiles"] for c in f["causes"] if c["kind"] == "python_int"]
    assert "dynamic=False" in c["fix"] and "indexes a Python container" not in c["fix"], c
    dyn, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "d", "--", sys.executable, prog,
                      env={"DYNAMIC": "1"}, timeout=600)
    assert not any(f["recompiles"] for f in dyn["recompiles"]), dyn["recompiles"]


def test_a_size_a_torch_function_reads_as_an_int_names_it_and_the_programs_call(tmp_path):
    """Blind A/B batch 50: nn.MaxPool1d under dynamic=True (F.max_pool1d reads the length as an int): a graph per
    length, and the report gave the generic shape fix ("drop dynamic=False", "a lowering that specializes it"). Now
    the torch frame and the program's calling line are named with an equivalent that keeps the size symbolic, and
    that equivalent (FIXED=1) compiles one graph."""
    prog = program("rc_maxpool1d_length.py")
    data, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "r", "--", sys.executable, prog, timeout=600)
    (c,) = [c for f in data["recompiles"] for c in f["causes"] if c["kind"] == "shape"]
    assert c["specialized_at"]["line"] == 15 and not c["expected"], c   # the program's own F.max_pool1d call
    assert c["fix"].startswith("torch's `F.max_pool1d`") and "F.max_pool2d on x.unsqueeze(-2)" in c["fix"], c
    # through nn.MaxPool1d (a torch frame innermost, the program's call outside it): the torch frame is named
    from cdlib.decide.specializations import torch_op_specializations
    from cdlib.read import trace as tracemod
    tr = tracemod.parse(str(tmp_path / "r" / "trace"))
    assert not [k for k in torch_op_specializations(tr) if k[2:] == ("x", 2)]   # here the program's line is innermost
    fixed, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "f", "--", sys.executable, prog,
                        env={"FIXED": "1"}, timeout=600)
    assert not any(f["recompiles"] for f in fixed["recompiles"]), fixed["recompiles"]


def test_a_builtin_over_a_generator_in_a_library_gets_its_own_recipe_not_the_print_one(tmp_path):
    """Blind A/B batch 51: kl_divergence's first call dispatches with min(<generator>) (GB0059); the report showed
    GB0059's print/logging recipe (reorderable_logging_functions). Now the generator variant names the list / closed
    form fix, and the closed form (CLOSED=1) prints the same KL with no break."""
    prog = program("gb_kl_first_call.py")
    data, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "r", "--", sys.executable, prog, timeout=600)
    (b,) = data["graph_breaks"]
    assert b["gb_id"] == "GB0059" and "over a generator" in b["fix"]["fix"] and not b["fix"].get("code"), b["fix"]
    closed, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "c", "--", sys.executable, prog,
                         env={"CLOSED": "1"}, timeout=600)
    assert not closed["graph_breaks"] and closed["printed_tail"] == data["printed_tail"], closed["printed_tail"]


def test_a_sinusoidal_position_table_grown_in_forward_gets_the_config_setting():
    """Blind A/B batch 51: an M2M100 padded to 128 tokens with max_position_embeddings=64; the table was rebuilt in
    forward (make_weights -> nn.Buffer), an error under fullgraph=True that PyTorch called "likely a Dynamo bug".
    The break's chain line (transformers' own source, 5.23) gets the max_position_embeddings setting."""
    from cdlib.decide import knowledge
    chain = ("Unsupported python_type() call\n"
             "self.make_weights(max_pos + self.offset, self.embedding_dim, self.padding_idx)\n"
             "self.weights = nn.Buffer(emb_weights, persistent=False)")
    (s,) = knowledge.library_settings("transformers", chain)
    assert "max_position_embeddings" in s["setting"] and "longest padded length" in s["setting"], s


def test_a_size_passed_to_math_log_names_the_tensor_op(tmp_path):
    """Blind A/B batch 51: log_n = math.log(T) under dynamic=True; the report named the line with the fix text for a
    Python loop over the size. Now math.log's own fix (a 0-d tensor op), and that fix (FIXED=1) compiles one graph."""
    prog = program("rc_math_log_length.py")
    data, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "r", "--", sys.executable, prog, timeout=600)
    (c,) = [c for f in data["recompiles"] for c in f["causes"] if c["kind"] == "shape"]
    assert c["specialized_at"]["line"] == 22 and c["fix"].startswith("dynamic=True") and "math.log()" in c["fix"], c
    fixed, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "f", "--", sys.executable, prog,
                        env={"FIXED": "1"}, timeout=600)
    assert not any(f["recompiles"] for f in fixed["recompiles"]), fixed["recompiles"]


def test_a_size_formatted_into_a_profiler_label_names_the_string_not_duck_sizing(tmp_path):
    """Blind A/B batch 52: record_function(f"...[T={T}]") under dynamic=True; input_ids and attention_mask share the
    length, and the fix text was duck sizing with mark_dynamic (which raises there). Now the string's own fix; a fixed
    label (FIXED=1) compiles one graph (the program prints its graph count)."""
    prog = program("dyn_size_in_label.py")
    data, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "r", "--", sys.executable, prog, timeout=600)
    (c,) = [c for f in data["recompiles"] for c in f["causes"] if c["kind"] == "shape"]
    assert c["specialized_at"]["line"] == 23 and "formats the size into an f-string" in c["fix"], c
    assert "duck" not in c["fix"] and "mark_dynamic(" not in c["fix"], c["fix"]
    ok = subprocess.run([sys.executable, prog], capture_output=True, text=True, env=dict(os.environ, FIXED="1"),
                        timeout=600)
    assert ok.returncode == 0 and "graphs 1" in ok.stdout, ok.stdout + ok.stderr[-400:]


def test_a_last_position_indexed_by_the_length_names_the_index_not_duck_sizing(tmp_path):
    """Blind A/B batch 61 (fa): `last = x[:, T - 1]` under dynamic=True on three inputs that always share the length;
    the fix text was duck sizing with mark_dynamic, which cannot help (later compiles pin the same dim again at its
    new size). Now the index's own fix; x[:, -1] (FIXED=1) compiles one graph. The rc_duck_warmup test keeps the
    duck-sizing case, whose other size stays put."""
    prog = program("dyn_last_position_index.py")
    data, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "r", "--", sys.executable, prog, timeout=600)
    (c,) = [c for f in data["recompiles"] for c in f["causes"] if c["kind"] == "shape"]
    assert "x[:, T - 1]" in c["specialized_at"]["code"], c
    assert "indexes a tensor with a number computed from the size (`T - 1`)" in c["fix"] and "x[:, -1]" in c["fix"], c
    assert "duck" not in c["fix"] and "mark_dynamic(" not in c["fix"], c["fix"]
    ok = subprocess.run([sys.executable, prog], capture_output=True, text=True, env=dict(os.environ, FIXED="1"),
                        timeout=600)
    assert ok.returncode == 0 and "graphs 1" in ok.stdout, ok.stdout + ok.stderr[-400:]
    # review of 0.33.165: a loop's own index, a Python list indexed by the size and a slice are not this fix
    from cdlib.decide.analyze_recompiles import _size_index
    assert _size_index("y = x[..., T // 2]") == "T // 2"
    for code in ("steps = [x[:, t + 1] - x[:, t] for t in range(T - 1)]", "g = self.gains[T - 1]", "y = x[:, :T - 1]"):
        assert _size_index(code) is None, code


def test_an_observed_exception_break_of_the_programs_own_error_gets_no_step_of_its_own(tmp_path):
    """Blind A/B batch 63 (fi): a forward-only attention helper raised under an eval loop with autograd on, compiled
    and eagerly; Dynamo's GB0088 "Observed exception" break at the same call got its own Next (compiler.disable on the
    library wrapper). The program's error is the one step; no_grad (FIXED=1) runs."""
    prog = program("observed_exception_eager_too.py")
    d, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, check=0, timeout=600)
    assert d["verdict"]["kind"] == "fails_eager_too" and [b["gb_id"] for b in d["graph_breaks"]] == ["GB0088"], d["verdict"]
    assert d["next_steps"][0]["why"].startswith("fix your program at ") and "NotImplementedError" in d["next_steps"][0]["why"], d["next_steps"]
    assert not any("graph break" in s["why"] for s in d["next_steps"]), d["next_steps"]
    ok = subprocess.run([sys.executable, prog], capture_output=True, text=True, env=dict(os.environ, FIXED="1"),
                        timeout=600)
    assert ok.returncode == 0 and "mean score" in ok.stdout, ok.stderr[-800:]


def test_weight_normed_blocks_compiled_one_by_one_name_the_parametrize_class(tmp_path):
    """Blind A/B batch 52: regional compilation of weight_norm'ed conv blocks; each block's conv has a class of its
    own (torch.nn.utils.parametrize), so the type guard failed per block and the fix spoke of argument types and
    classes made in a function. Now its own kind, whose fold (FOLD=1) leaves one graph for every block."""
    prog = program("rc_weight_norm_blocks.py")
    data, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "r", "--", sys.executable, prog, timeout=600)
    kinds = {c["kind"] for f in data["recompiles"] for c in f["causes"]}
    assert kinds == {"parametrized_module_type"}, data["recompiles"]
    md = (tmp_path / "r" / "report.md").read_text()
    assert 'remove_parametrizations(m, "weight", leave_parametrized=True)' in md and "…" not in md.split("Fix: ")[1].split("\n")[0], md
    ok = subprocess.run([sys.executable, prog], capture_output=True, text=True, env=dict(os.environ, FOLD="1"),
                        timeout=600)
    assert ok.returncode == 0 and "graphs 1 " in ok.stdout, ok.stdout + ok.stderr[-400:]


def test_a_recompile_limit_set_on_another_thread_is_named(tmp_path):
    """Blind A/B batch 53: recompile_limit raised at import (main thread), the model compiled on a ThreadPoolExecutor
    thread, which saw the default 8 (torch 2.15's config overrides are per thread); the report said to drop
    dynamic=False. Now Next 1 names the setting, the limit hit and the fix, which the test runs (FIXED=1: the pool's
    initializer sets it)."""
    prog = program("rc_limit_set_on_main_thread.py")
    rep, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "r", "--", sys.executable, prog, timeout=600)
    why = rep["next_steps"][0]["why"]
    assert why.startswith("rc_limit_set_on_main_thread.py:15 sets recompile_limit = 16, but the limit hit is 8") \
        and "initializer=" in why and "recompile_limit=16" in why, why
    ok = subprocess.run([sys.executable, prog], capture_output=True, text=True, env=dict(os.environ, FIXED="1"),
                        timeout=600)
    assert ok.returncode == 0 and "served 10 lengths" in ok.stdout, ok.stderr[-400:]


def test_inference_mode_inside_a_compiled_forward_gets_its_row_not_bisect(tmp_path):
    """Blind A/B batch 53: @torch.inference_mode() on a compiled BERT forward; AOTAutograd's "Cannot set version_counter
    for inference tensor" was sent to the accuracy run and bisect. Now its row and fix first; the fix (FIXED=1:
    inference mode around the compiled call) runs."""
    prog = program("inference_mode_in_compiled_forward.py")
    rep, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "r", "--", sys.executable, prog, timeout=600)
    assert rep["errors"][0]["category"] == "inference_mode_inside_compile", rep["errors"]
    assert rep["next_steps"][0]["why"].startswith("Inference mode is turned on inside the code torch.compile traces")
    assert not any(re.search(r" (bisect|accuracy|minify) ", s["command"] or "") for s in rep["next_steps"])
    ok = subprocess.run([sys.executable, prog], capture_output=True, text=True, env=dict(os.environ, FIXED="1"),
                        timeout=600)
    assert ok.returncode == 0 and "out (2, 10, 16)" in ok.stdout, ok.stderr[-400:]


def test_a_tensor_indexed_by_an_int_is_found_in_the_graph_as_a_local_attribute_or_global():
    """Review of 0.33.110: a module-level table (placeholder g_bias_table_) was read as a container."""
    from types import SimpleNamespace
    from cdlib.decide.analyze_recompiles import _tensor_in_graph

    class Tr:
        def __init__(self, payload):
            self.e = [SimpleNamespace(meta={"frame_id": 0}, payload=payload)]

        def of(self, kind):
            return self.e
    for placeholder, expr in (("l_self_buffers_bias_table_", "self.bias_table"), ("g_bias_table_", "BIAS_TABLE"),
                              ("l_self_table_", "self.table"), ("l_table_", "table")):
        assert _tensor_in_graph(Tr(f"def forward(self, {placeholder}: f32[16, 8]):"), 0, expr), placeholder
    mods = "def forward(self, l_self_modules_heads_modules_0_parameters_weight_: f32[2, 8]):"
    assert not _tensor_in_graph(Tr(mods), 0, "self.heads")


def test_a_lowering_missing_on_cpu_whose_message_names_the_mode_is_not_sent_to_bisect(tmp_path):
    """Blind A/B batch 54: associative_scan(combine_mode="pointwise") compiled on CPU; Inductor raises "not
    supported on cpu. Try to use combine_mode='generic'" and the report sent it to minify/bisect with aot_eager as
    the workaround. Now its row: PyTorch's message is the fix, no bisect; the fix (FIXED=1: mode from the device) runs."""
    prog = program("scan_pointwise_cpu.py")
    rep, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "r", "--", sys.executable, prog, timeout=600)
    err = rep["errors"][0]
    assert err["category"] == "lowering_unsupported_on_device", rep["errors"]
    assert "Try to use combine_mode='generic'" in err["message"], err["message"]
    assert not any(re.search(r" (bisect|accuracy|minify) ", s["command"] or "") for s in rep["next_steps"])
    ok = subprocess.run([sys.executable, prog], capture_output=True, text=True, env=dict(os.environ, FIXED="1"),
                        timeout=600, cwd=tmp_path)
    assert ok.returncode == 0 and "total [12.0, 16.0]" in ok.stdout, ok.stderr[-400:]


def test_a_break_inside_torch_on_the_newest_release_offers_no_upgrade_but_moving_the_call(tmp_path):
    """Blind A/B batch 55 (dq): nn.init.trunc_normal_ under fullgraph=True; torch 2.15 made it a resampling loop that
    branches on `mask.any()`. The report offered "A newer torch may trace this" on the newest release, where the loop
    was added. On the newest release no upgrade is offered; the program's call is named to move out of the compiled
    function (a compiler.disable'd call still breaks fullgraph) or to replace; INVCDF=1 (branch-free) passes."""
    from cdlib.run.torch_versions import TESTED, release_tuple
    import torch
    prog = program("gb_trunc_normal_fullgraph.py")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=600)
    inside = [b for b in d["graph_breaks"] if b["stack"] and b["stack"][-1]["file"].replace("\\", "/").endswith("torch/nn/init.py")]
    if not inside:
        pytest.skip(f"torch {torch.__version__}: trunc_normal_ traces here (the loop came in 2.15)")
    [b] = inside
    texts = [w["text"] for w in b["workarounds"]]
    line = next(i for i, ln in enumerate(open(prog), 1) if "nn.init.trunc_normal_(" in ln)
    assert any(t.startswith(f"Where the inputs of the call at gb_trunc_normal_fullgraph.py:{line} do not come from "
                            "the graph") and "make that call outside the compiled function" in t for t in texts), texts
    newest = release_tuple(torch.__version__) >= release_tuple(TESTED[-1])
    assert any("A newer torch may trace this" in t for t in texts) == (not newest), texts
    assert not any("torch.compiler.disable(" in (w.get("code") or "") for w in b["workarounds"]), b["workarounds"]
    fixed = subprocess.run([sys.executable, prog], env=dict(os.environ, INVCDF="1"), capture_output=True, text=True,
                           timeout=300)
    assert fixed.returncode == 0 and "step 1 loss" in fixed.stdout, fixed.stderr[-1500:]


def test_pytorchs_own_op_without_a_fake_kernel_is_named_with_the_dynamic_recompile_that_hit_it(tmp_path):
    """Blind A/B batch 55 (dz): Dirichlet(alpha).rsample() in a fullgraph=True loss; the short last batch made the batch
    dim dynamic and aten._sample_dirichlet, which has no fake kernel, failed in that recompile. The report called it a
    custom op and said register_fake. Now: PyTorch's own operator, static shapes only, the recompile that made the
    size symbolic, and the static-shape fixes; FIXED=1 (dynamic=False) trains."""
    prog = program("aten_no_fake_dynamic_batch.py")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    e = d["errors"][0]
    assert e["category"] == "aten_op_no_fake" and e["side"] == "user", e
    assert e["title"].startswith("PyTorch's own operator `aten._sample_dirichlet` has no fake (meta) kernel")
    why = d["next_steps"][0]["why"]
    assert "is the recompile for shape of `x` dim 0" in why and "dynamic=False" in why and "not a custom op" in why, why
    assert not any(" bisect " in (s["command"] or "") or " minify " in (s["command"] or "") for s in d["next_steps"])
    fixed = subprocess.run([sys.executable, prog], env=dict(os.environ, FIXED="1"), capture_output=True, text=True,
                           timeout=300)
    assert fixed.returncode == 0 and "batch 3 grad" in fixed.stdout, fixed.stderr[-1500:]


def test_an_inductor_lowering_guarding_on_a_mask_index_size_is_not_sent_to_capture_scalar_outputs(tmp_path):
    """Blind A/B batch 57 (ef): BART's eos pooling `h[mask, :].view(B, -1, D)[:, -1, :]` under fullgraph=True; Inductor's
    select lowering could not guard on the unbacked size (GuardOnDataDependentSymNode). The Next said an Inductor pass
    read a value and to set capture_scalar_outputs (or fullgraph=True, already set). Now it names a data-dependent
    size from a mask index and the fixed-shape rewrite, which FIXED=1 applies."""
    prog = program("mask_index_select_lowering.py")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    first = d["next_steps"][0]
    assert first["why"].startswith("Inductor raised it while compiling (GuardOnDataDependentSymNode") and \
        "boolean-mask index" in first["why"] and "capture_scalar_outputs does not change that" in first["why"], first
    # the op's own line, from the lowering's "Found from" stack (the traceback names only the compiled call)
    line = next(i for i, ln in enumerate(open(prog).read().splitlines(), 1) if "return h[mask, :].view" in ln)
    lw = d["errors"][0]["inner"]["lowered"]
    assert (lw["target"], lw["file"], lw["line"]) == ("aten.select.int", "mask_index_select_lowering.py", line), lw
    assert f"Here: aten.select.int traced from mask_index_select_lowering.py:{line}" in first["why"], first
    fixed = subprocess.run([sys.executable, prog], env=dict(os.environ, FIXED="1"), capture_output=True, text=True,
                           timeout=300)
    assert fixed.returncode == 0 and "pooled (4, 8)" in fixed.stdout, fixed.stderr[-1500:]


def test_a_shape_error_inside_a_transformers_model_names_its_traced_mask_first(tmp_path):
    """Blind A/B batch 58 (ek): a Nystromformer compiled on unpadded blocks failed with a broadcast error in its
    landmark attention only compiled: transformers drops an all-ones mask in eager and builds it in full while
    tracing. The Next listed deques, in-place ops and aliasing. Now the traced mask comes first; FIXED=1 (a 4D
    additive key mask) runs compiled."""
    pytest.importorskip("transformers")
    prog = program("hf_nystrom_traced_mask.py")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=900)
    assert p.returncode == 0, p.stderr[-2000:]
    assert d["verdict"]["kind"] == "compile_only", d["verdict"]
    why = d["next_steps"][0]["why"]
    assert why.startswith("`add` got inputs") and "The op is in a transformers model" in why and \
        why.index("transformers model") < why.index("collections.deque"), why
    fixed = subprocess.run([sys.executable, prog], env=dict(os.environ, FIXED="1"), capture_output=True, text=True,
                           timeout=600)
    assert fixed.returncode == 0 and "logits (2, 3)" in fixed.stdout, fixed.stderr[-1500:]


def test_a_view_failing_on_fake_strides_names_the_layout_and_reshape_not_minify(tmp_path):
    """Blind A/B batch 58 (ei): BatchNorm1d on a transposed input, then .view: eager CPU returns a contiguous tensor,
    the fake kernel keeps the input's strides, and the view fails while tracing. The Next was minify. Now: the
    strides, the fake kernel's layout, reshape; FIXED=1 (reshape) runs compiled."""
    prog = program("fake_view_strides_bn.py")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert d["verdict"]["kind"] == "compile_only" and d["errors"][0]["category"] == "fake_tensor_error", d["errors"]
    first = d["next_steps"][0]
    assert first["why"].startswith("The .view at ") and "fake_view_strides_bn.py:23 works in eager" in first["why"] and \
        "strides (96, 1, 3)" in first["why"] and ".reshape(...)" in first["why"] and not first["command"], first
    assert "minify" not in (tmp_path / "t" / "report.md").read_text().split("## Next", 1)[1]
    fixed = subprocess.run([sys.executable, prog], env=dict(os.environ, FIXED="1"), capture_output=True, text=True,
                           timeout=300)
    assert fixed.returncode == 0 and "encoded (12, 16)" in fixed.stdout, fixed.stderr[-1500:]


def test_batched_grad_through_a_compiled_backward_is_named_not_bisected(tmp_path):
    """Blind A/B batch 59 (er): autograd.grad(..., is_grads_batched=True) through a compiled model ran vmap over the
    backward torch.compile generated ("Batching rule not implemented for aten::mm.out"); the Next was minify and
    bisect. Now row batched_grad_compiled_backward with the uncompiled-module fix, no extra run; FIXED=1 passes."""
    prog = program("batched_grad_compiled_backward.py")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    e = d["errors"][0]
    assert e["category"] == "batched_grad_compiled_backward" and d["verdict"]["kind"] == "compile_only", e
    why = d["next_steps"][0]["why"]
    assert "uncompiled module" in why and not d["next_steps"][0]["command"], d["next_steps"][0]
    assert "cold_cache" not in d["verdict"] and "accuracy" not in d["verdict"], d["verdict"]
    fixed = subprocess.run([sys.executable, prog], env=dict(os.environ, FIXED="1"), capture_output=True, text=True,
                           timeout=300)
    assert fixed.returncode == 0 and "jacobian (3, 16, 12)" in fixed.stdout, fixed.stderr[-1500:]


@pytest.mark.parametrize("name,absent", [
    # a range in a compiled predict() that never profiles: the failure is Inductor's random numbers, not the ranges
    ("review_onset_prof.py", "profiler_ranges_dropped"),
    # an exported graph's node.meta sizes are symbolic by design (no hook kept them): not the hooks lead
    ("review_ep_json.py", "handle.remove()"),
    # an autograd.Function's forward with a break is compiled as frames of its own, not run eagerly whole
    ("review_fn_break.py", "The break is inside the function passed to"),
])
def test_the_session_s_new_leads_stay_out_of_programs_they_do_not_fit(tmp_path, name, absent):
    """Independent review of 0.33.145-0.33.156: three programs where a new lead would have been wrong (a profiler class
    on a parity assert, a "hooks kept a traced value" lead on a symbolic export size, "the whole call ran eagerly" on
    an autograd.Function). None of them may show it."""
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, program(name), check=None,
                    timeout=600)
    md = (tmp_path / "t" / "report.md").read_text()
    assert absent not in md, md


def test_a_while_loop_fed_one_tensor_twice_is_named_not_bisected(tmp_path):
    """Blind A/B batch 60 (ev, pytorch#191582): torch.while_loop's carried state started from the logits its body also
    read from the enclosing function; Dynamo lifted them as one more input and the alias check raised "cond_fn might
    be aliasing the input or the output!" inside the backend. The Next was bisect. Now row hop_input_alias with the
    copy; FIXED=1 (h0.clone()) runs compiled, equal to eager."""
    prog = program("while_loop_closure_alias.py")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert d["errors"][0]["category"] == "hop_input_alias" and d["verdict"]["kind"] == "compile_only", d["errors"]
    first = d["next_steps"][0]
    assert "h0.clone()" in first["why"] and not first["command"] and "bisect --" not in \
        (tmp_path / "t" / "report.md").read_text(), first
    fixed = subprocess.run([sys.executable, prog], env=dict(os.environ, FIXED="1"), capture_output=True, text=True,
                           timeout=300)
    assert fixed.returncode == 0 and "max |compiled - eager| 0.00e+00" in fixed.stdout, fixed.stderr[-1500:]


def test_a_loop_over_split_windows_recompiling_per_count_gets_the_padding_fix(tmp_path):
    """Blind A/B batch 60 (es): a Python loop over x.split(32) windows under dynamic=True recompiled once per window
    count; the shape kind's fix (drop dynamic=False, 0/1 sizes) did not fit. Now kind size_count with the pad-and-
    reshape fix, for the guard as a ceil-division or as a band; FIXED=1 compiles one graph."""
    from cdlib.decide import knowledge
    assert knowledge.guard_kind("66 <= L['event_ids'].size()[1] <= 96")["kind"] == "size_count"
    prog = program("split_windows_recompile.py")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    md = (tmp_path / "t" / "report.md").read_text()
    assert "[size_count]" in md and "pad to a multiple of k and reshape" in md, md
    f, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "f", "--", sys.executable, prog, timeout=600,
                    env={"FIXED": "1"})
    assert f["stats"]["graphs"] == 1 and not f["recompiles"], (f["stats"], f["recompiles"])


def test_a_gate_on_compile_counts_gets_the_recompiles_not_an_accuracy_run_or_bisect(tmp_path):
    """Blind A/B batch 66: a CI gate failed because a contact-map loss compiled 3 graphs for 3 crop lengths
    (torch.triu_indices makes the length static). Only the compiled run fails, so triage ran torch's accuracy check
    (nothing to measure under backend="eager") and its Next 1 was bisect; the cause was Next 2. Now the failing
    line that counts graphs routes to what it counts: no accuracy run, no bisect, the recompile's line next; the
    fix (an arange mask) passes the gate."""
    prog = program("recompile_budget_gate.py")
    d, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, check=0, timeout=600)
    assert d["verdict"]["kind"] == "compile_only" and d["verdict"].get("compile_counts"), d["verdict"]
    assert "accuracy" not in d["verdict"] and not (tmp_path / "t" / "accuracy_check").exists()
    steps = d["next_steps"]
    assert steps[0]["why"].startswith("The failing check counts what torch.compile did"), steps
    line = next(i for i, ln in enumerate(open(prog), 1) if "i, j = torch.triu_indices(" in ln)
    assert f"made static at recompile_budget_gate.py:{line}" in steps[1]["why"], steps
    assert not any(re.search(r" (bisect|accuracy) ", s["command"] or "") for s in steps), steps
    md = (tmp_path / "t" / "report.md").read_text()
    assert "Route: a check of what torch.compile did" in md and "rounding or a miscompile" not in md, md
    fixed = subprocess.run([sys.executable, prog], env=dict(os.environ, FIXED="1"), capture_output=True, text=True,
                           timeout=300)
    assert fixed.returncode == 0 and "compiled graphs: 1" in fixed.stdout, fixed.stderr[-1500:]


def test_near_misses_of_the_compile_count_route_and_the_assert_and_version_classes(tmp_path):
    """Review of batch 66's rules: a numeric check that mentions a recompile is no compile-count check; a compile budget
    beside a harmless _version read (backend="eager") or an unrelated `except AssertionError` is the budget, not a
    by-design class; an assertRaises(AssertionError) test of a compiled assert is the assert class."""
    from types import SimpleNamespace
    from cdlib.decide import verdict
    rep = SimpleNamespace(recompiles=[1], graph_breaks=[])

    def counts(msg):
        return verdict.compile_count_failure(SimpleNamespace(message=msg), rep)
    assert counts("FAIL: 3 graphs compiled for 3 batch sizes (budget 1)")
    assert not counts("FAIL: compiled logits drift after recompile for new batch size: max abs diff 0.5")
    assert not counts("a recompile happened")
    for name, kind in (("near_version_log_budget.py", "counts"), ("near_assert_unrelated_budget.py", "counts"),
                       ("near_assert_raises_unittest.py", "assert_raises_runtime_error")):
        d, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / name, "--", sys.executable, program(name),
                        check=0, timeout=600)
        found = [f["id"] for f in d["semantics"] if f.get("explains_error")]
        if kind == "counts":
            assert d["verdict"].get("compile_counts") and not found, (name, d["verdict"], found)
            assert d["next_steps"][0]["why"].startswith("The failing check counts"), d["next_steps"]
        else:
            assert found == [kind] and d["next_steps"][0]["why"].startswith(f"[{kind}]"), (found, d["next_steps"])
