"""fix and compare on real programs: every config fix is verified by a real re-run of the
unmodified program, and compare matches graph breaks across an edit that shifts lines."""
import json
import os
import re
import sys

import pytest

from conftest import program, run_cli, run_json


@pytest.fixture(scope="module")
def multi(tmp_path_factory):
    """One `fix` run on fx_multi.py (six findings, each with a config fix): baseline, control,
    one trial per candidate and the combined run."""
    out = tmp_path_factory.mktemp("fix") / "run"
    res, p = run_json("fix", "--out", out, "--", "python", program("fx_multi.py"), timeout=1200)
    assert p.returncode == 0, p.stderr[-3000:]
    return res, p


def _fix(res, fid):
    return next(x for x in res["fixes"] if x["id"] == fid)


@pytest.mark.slow
def test_each_config_fix_is_verified_with_numbers(multi):
    res, p = multi
    assert res["deterministic"] is True
    assert res["baseline"]["graph_break_sites"] == 4 and res["baseline"]["recompiles"] == 3
    # rows' one batch-size change is a recompile torch expects (automatic dynamic): not a finding
    assert res["findings"] == 5 and res["findings_with_verified_fix"] == 5
    breaks = {"capture_scalar_outputs": "s = x.sum().item()", "capture_dynamic_output_shape_ops": "torch.nonzero",
              "ignore_logging_function": "logger.warning", "reorderable_print": 'print("printed")'}
    for fid, line in breaks.items():   # each removes exactly its own break, program output unchanged
        x = _fix(res, fid)
        assert x["label"] == "verified (measured)", x
        assert x["effect"]["graph_break_sites"] == [4, 3] and x["effect"]["recompiles"] == [3, 3], x
        assert x["effect"]["output"] == "same" and x["effect"]["exit"] == ["exit 0", "exit 0"]
        assert line in x["findings"][0]
        assert x["trial_dir"].startswith(res["run_dir"] + os.sep) and os.path.isfile(os.path.join(x["trial_dir"], "report.json"))
    assert "logging.Logger.warning" in _fix(res, "ignore_logging_function")["code"]   # from PyTorch's hint
    x = _fix(res, "allow_unspec_int_on_nn_module")
    assert x["label"] == "verified (measured)", x
    assert x["effect"]["recompiles"] == [3, 2] and x["effect"]["graph_break_sites"] == [4, 4], x
    assert x["effect"]["unexpected_recompiles"] == [2, 1]      # Counter's step: once more when it first changes
    assert not {"dynamic_source", "dynamic_everywhere"} & {f["id"] for f in res["fixes"]}
    rc = res["recommended"]
    # left: one recompile of forward (the int's first change) and rows' expected one
    assert rc["measured_together"] and rc["effect"]["graph_break_sites"] == [4, 0] and rc["effect"]["recompiles"] == [3, 2]
    assert rc["effect"]["output"] == "same" and not rc["effect"]["fails"]
    assert len(rc["members"]) == 5
    assert "capture_scalar_outputs = True" in rc["code"] and "allow_unspec_int_on_nn_module = True" in rc["code"]
    assert res["code_changes"] == []
    assert re.search(r"\[\d+/\d+\] \w+: breaks 4→\d, recompiles 3→\d", p.stderr)   # progress lines

    # compare: the baseline against the combined run (no new run)
    cmp_, _ = run_json("compare", res["baseline"]["run_dir"], rc["trial_dir"], check=0)
    # the logging fix drops logger.warning's line (on stderr) in compiled code: compare, which reads what the
    # program printed on both streams, says so; fix's trials compare stdout and call the output the same
    assert cmp_["verdict"] == "better; output changed"
    assert "logger" in (cmp_["output_diff"]["before"] + cmp_["output_diff"]["after"]).lower() \
        or "[stderr]" in cmp_["output_diff"]["before"], cmp_["output_diff"]
    assert len(cmp_["graph_breaks"]["fixed"]) == 4 and not cmp_["graph_breaks"]["still"] and not cmp_["graph_breaks"]["new"]
    assert cmp_["before"]["recompiles"] == 3 and cmp_["after"]["recompiles"] == 2 and cmp_["output"] == "changed"
    assert {r["function"]: (r["before"], r["after"]) for r in cmp_["recompiles"]} == {"forward": (2, 1), "rows": (1, 1)}
    (rows,) = [r for r in cmp_["recompiles"] if r["function"] == "rows"]
    assert rows["causes_after"][0]["kind"] == "shape, expected" and rows["causes_after"][0]["count"] == 1


@pytest.mark.slow
def test_compare_on_an_edited_copy(multi, tmp_path):
    """Edit the .item() break away in a copy and shift every line down; compare runs triage on the copy."""
    res, _ = multi
    src = open(program("fx_multi.py")).read()
    edited = "# edited copy\n# two lines added above\n" + src.replace("s = x.sum().item()", "s = x.sum()") \
        .replace("    return x.cos()", "    torch._dynamo.graph_break()\n    return x.cos()")
    (tmp_path / "fx_multi.py").write_text(edited)
    cmp_, p = run_json("compare", res["baseline"]["run_dir"], "--out", tmp_path / "cmp", "--",
                       "python", tmp_path / "fx_multi.py", check=0)
    g = cmp_["graph_breaks"]
    assert [x.split(" — ")[0] for x in g["fixed"]] == ["fx_multi.py:11 `s = x.sum().item()              # GB0124 -> capture_scalar_outputs`"]
    assert len(g["still"]) == 3                      # matched although every line moved by 2
    assert any(":25 `logger.warning" in x["after"] and ":23 `logger.warning" in x["before"] for x in g["still"])
    assert len(g["new"]) == 1 and "graph_break()" in g["new"][0]
    assert cmp_["verdict"].startswith("mixed") and cmp_["output"] == "same"
    assert cmp_["after"]["exit_code"] == 0 and cmp_["after"]["recompiles"] == 3
    assert os.path.isfile(tmp_path / "cmp" / "after" / "report.json")
    # the after run's last printed lines: its stdout's last line, then the logger's stderr line (logging)
    ap = cmp_["after_printed"]
    assert ap["lines"] >= 7 and any(ln.startswith("rows [") for ln in ap["tail"]), ap
    assert ap["tail"][-1].startswith("[stderr] ") and "logged" in ap["tail"][-1], ap


@pytest.mark.slow
def test_failing_fix_and_nondeterministic_program(tmp_path):
    res, p = run_json("fix", "--out", tmp_path / "run", "--", "python", program("fx_fragile.py"), check=0, timeout=900)
    assert res["deterministic"] is False
    assert p.stderr.count("differs between two plain runs") == 1
    bad = _fix(res, "capture_dynamic_output_shape_ops")
    assert bad["label"] == "measured: makes the program FAIL"
    assert bad["effect"]["exit"] == ["exit 0", "exit 1"] and bad["effect"]["graph_break_sites"] == [2, 0]
    assert bad["effect"]["error"]["type"] == "GuardOnDataDependentSymNode"
    assert bad["effect"]["output"].startswith("not compared")
    good = _fix(res, "capture_scalar_outputs")
    assert good["label"] == "verified (measured)" and good["effect"]["graph_break_sites"] == [2, 1]
    assert res["recommended"]["members"] == ["capture_scalar_outputs"]
    assert [c["config_fixes_tried"] for c in res["code_changes"]] == [["capture_dynamic_output_shape_ops (measured: makes the program FAIL)"]]


def test_bad_input_is_one_line(tmp_path):
    for args in (["compare", tmp_path], ["compare", tmp_path, tmp_path], ["fix"], ["fix", "--from", tmp_path],
                 ["fix", "--max-fixes", "0", "--", "python", program("gb_item.py")]):
        p = run_cli(*args, timeout=60)
        assert p.returncode == 2, (args, p.stderr)
        assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr


def test_every_config_in_fixes_yaml_exists_on_this_torch():
    """The candidates are data; every config they set must be a real setting of the installed torch."""
    import yaml
    from conftest import ROOT, resolve_dotted
    rows = yaml.safe_load(open(os.path.join(ROOT, "knowledge", "fixes.yaml")))["candidates"]
    keys = {k for r in rows for st in r["steps"] for k in (st.get("config") or {})}
    assert "torch.compiler.config.dynamic_sources" in keys and len(keys) >= 8
    for k in keys:
        mod, _, attr = k.rpartition(".")
        if attr == "{name}":     # the name PyTorch's own hint gives (pytorch_hint_config_*): the module is real
            assert resolve_dotted(mod) is not None, k
            continue
        assert hasattr(resolve_dotted(mod), attr), k


@pytest.mark.slow
def test_fix_that_changes_output_is_not_recommended(tmp_path):
    """gb_loop.py: reorderable print removes the break, but the prints of the helper are lost."""
    res, _ = run_json("fix", "--out", tmp_path / "run", "--", "python", program("gb_loop.py"), check=0, timeout=900)
    assert res["deterministic"] is True
    x = _fix(res, "reorderable_print")
    assert x["label"] == "measured: changes the program's output"
    assert x["effect"]["graph_break_sites"] == [1, 0] and x["effect"]["output"] == "changed"
    assert x["effect"]["output_diff"]["before"] == "value 0"
    assert res["recommended"] is None and res["findings_with_verified_fix"] == 0
    assert res["code_changes"][0]["at"].endswith("gb_loop.py:6")   # the print in the helper


def test_fix_that_only_moves_the_break_and_expected_recompiles(tmp_path):
    """capture_scalar_outputs on `.item()` + `if`: the .item() break goes, the `if` breaks instead;
    reported as moved (no gain), the edit is the next step. A one-time requires_grad recompile is not
    a finding."""
    res, p = run_json("fix", "--out", tmp_path / "run", "--", "python", program("fx_item_branch.py"), check=0,
                      timeout=900)
    assert p.returncode == 0, p.stderr[-2000:]
    x = _fix(res, "capture_scalar_outputs")
    assert x["label"].startswith("measured: moves the break")
    moved = x["effect"]["breaks_moved"]
    assert "scale = x.abs().mean().item()" in moved["fixed"][0] and "if scale > 10" in moved["new"][0]
    assert res["recommended"] is None and res["status"] == "no-verified-fix"
    base = json.load(open(os.path.join(res["baseline"]["run_dir"], "report.json")))
    (rc,) = base["recompiles"]      # Block.forward: raw input first, then an activation that requires grad
    assert rc["function"] == "forward" and rc["expected_only"] and rc["causes"][0]["kind"] == "requires_grad"
    assert not any("requires_grad" in c["finding"] for c in res["code_changes"])
    assert [c["at"].rsplit(":", 1)[1] for c in res["code_changes"]] == ["26"]
    md = (tmp_path / "run" / "report.md").read_text()
    assert "but breaks at fx_item_branch.py:27 `if scale > 10:`" in md
    assert "Next: no config fix was verified; make the code edit above" in md


def test_compare_says_why_output_can_change_without_a_fix(tmp_path):
    """Two plain runs of an unseeded program: output 'changed' although nothing was edited; the view
    says that unseeded random inputs do that (an agent misread it as a regression)."""
    for tag in ("a", "b"):
        _, p = run_json("triage", "--no-tlparse", "--out", tmp_path / tag, "--", program("unseeded.py"))
        assert p.returncode == 0, p.stderr[-2000:]
    p = run_cli("compare", tmp_path / "a", tmp_path / "b")
    assert "output: changed" in p.stdout and "random inputs without a seed" in p.stdout
    assert "torch._inductor.config.fallback_random = True" in p.stdout   # seeded, but compiled RNG differs


def test_pytorchs_own_config_hint_is_a_candidate():
    """Blind A/B batch 20: "Change `torch._dynamo.config.trace_autograd_ops` to `True`" was listed under
    "needs a code change" and never tried. A hint naming a Dynamo switch is a candidate, with its value; a
    known row with the same steps keeps its own title."""
    from cdlib.decide import fix_candidates

    def brk(hint):
        return {"kind": "graph_break", "text": f"GB9186\nx\n{hint}", "params": {"function": "f"}, "library": False}
    (c,) = fix_candidates.candidates([brk("Change `torch._dynamo.config.trace_autograd_ops` to `True`.")])
    assert c["id"] == "pytorch_hint_config_true" and c["steps"] == [
        {"config": {"torch._dynamo.config.trace_autograd_ops": True}}], c
    (c,) = fix_candidates.candidates([brk("Set `torch._dynamo.config.enable_faithful_generator_behavior = False`")])
    assert c["steps"] == [{"config": {"torch._dynamo.config.enable_faithful_generator_behavior": False}}], c
    (c,) = fix_candidates.candidates([brk("Set `torch._dynamo.config.capture_scalar_outputs = True` to trace it")])
    assert c["id"] == "capture_scalar_outputs", c


def test_a_library_function_is_disabled_only_where_its_module_holds_it():
    """Blind A/B batch 27: `fix` tried torch.compiler.disable on transformers' dynamic_frequency_update, a
    function nested in the dynamic_rope_update decorator (its closure holds it: setting the module's attribute
    changes nothing) and cost a call. A nested function or a method is passed over for the next library frame
    outward that is a top-level def; with none, no candidate."""
    transformers = pytest.importorskip("transformers")
    from cdlib.decide import fix_candidates
    rope = os.path.join(os.path.dirname(transformers.__file__), "modeling_rope_utils.py")
    wrapper, nested = ({"file": rope, "function": f} for f in ("wrapper", "dynamic_frequency_update"))
    brk = {"gb_id": "GB0170", "gb_type": "Data-dependent branching", "location": {"function": "forward"},
           "in_library": True, "library": "transformers", "stack": [wrapper, nested]}

    def disables(b):
        return [c["title"] for c in fix_candidates.candidates(fix_candidates.findings({"graph_breaks": [b]}))
                if c["id"] == "disable_library_function"]
    assert fix_candidates._lib_frame(brk) is None and disables(brk) == []
    # a top-level function (found by its module's global name at each call) is one the candidate can replace
    top = {"file": rope, "function": "_compute_dynamic_ntk_parameters"}
    assert disables(dict(brk, stack=[wrapper, nested, top])) == [
        "run the library function transformers.modeling_rope_utils._compute_dynamic_ntk_parameters eagerly "
        "(torch.compiler.disable)"]
    # under fullgraph=True the disabled function is a graph break too (an error): not a candidate (review of 0.33.85)
    full = {"graph_breaks": [dict(brk, stack=[wrapper, nested, top])],
            "errors": [{"category": "graph_break_fullgraph", "type": "Unsupported"}]}
    assert [c["id"] for c in fix_candidates.candidates(fix_candidates.findings(full))] == []
    # nor where a more specific row took the raised break (review of 0.33.93: the registry id or the
    # Unsupported type still says it was raised); an error that is no graph break keeps the candidate
    for err in ({"category": "transformer_is_causal_detect", "type": "UserError", "gb_id": "GB0170"},
                {"category": "data_dependent_guard", "type": "Unsupported"}):
        assert fix_candidates.candidates(fix_candidates.findings(dict(full, errors=[err]))) == [], err
    for etype in ("ValueError", "UnsupportedOperation", "UnsupportedOperatorError"):   # (io's, torch.onnx's: review)
        other = dict(full, errors=[{"category": "user_error", "type": etype}])
        assert [c["id"] for c in fix_candidates.candidates(fix_candidates.findings(other))] == \
            ["disable_library_function"], etype


@pytest.mark.slow
def test_fix_tries_the_hint_and_runs_nothing_without_candidates(tmp_path):
    """The hint's switch is measured on the program it came from (on 2.15 trace_autograd_ops keeps a break:
    the table says so, not "verified"); a triage run with no candidate gets no control run (it spent 111 s)."""
    prog = program("fix_autograd_grad_hint.py")
    tri, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=600)
    res, p = run_json("fix", "--out", tmp_path / "f", "--from", tmp_path / "t", timeout=900)
    assert p.returncode == 0, p.stderr[-2000:]
    (c,) = [c for c in res["fixes"] if c["id"] == "pytorch_hint_config_true"]
    assert c.get("effect") and c["code"] == "torch._dynamo.config.trace_autograd_ops = True", c
    assert c["label"].startswith("verified") == (c["effect"]["graph_break_sites"][1] == 0), c
    clean, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "c", "--", sys.executable,
                        program("cmd_clean.py"), timeout=600)
    p = run_cli("fix", "--out", tmp_path / "f2", "--from", tmp_path / "c", timeout=600)
    assert p.returncode == 0 and "no candidate fix to try, so no run" in p.stderr, p.stderr[-2000:]
    assert not (tmp_path / "f2" / "control").exists()


def test_a_diagnosis_run_only_when_nothing_else_is_tried():
    """raise_recompile_limit (a diagnosis, a whole run of up to 64 compiles) beside a candidate that
    targets the cause is not tried (blind A/B: 460 s for nothing); alone, it is."""
    from cdlib.decide import fix_candidates
    attr = {"kind": "recompile", "guard_kind": "module_attribute", "text": "self.step == 0",
            "params": {"function": "forward"}}
    limit = {"kind": "limit_hit", "text": "forward", "params": {"function": "forward"}}
    assert [c["id"] for c in fix_candidates.candidates([attr, limit])] == ["allow_unspec_int_on_nn_module"]
    assert [c["id"] for c in fix_candidates.candidates([limit])] == ["raise_recompile_limit"]


def test_compare_output_of_a_fixed_crash_is_not_called_changed():
    """The before run crashed (partial output), the after run completes: that is not an output change."""
    from cdlib.decide import compare as cmp
    base = {"exit_code": 1, "timed_out": False, "signal": None, "graph_breaks": [], "recompiles": [], "stats": {},
            "command": ["python", "app.py"], "run_dir": "/r1", "_stdout": ""}
    after = dict(base, exit_code=0, run_dir="/r2", _stdout="torch.Size([4, 10])\n")
    res = cmp.compare(base, after)
    assert res["output"] == "now complete (the before run failed)" and res["verdict"] == "better"


def test_a_break_first_reached_after_a_crash_fix_is_not_new():
    """Blind A/B batch 14: a bf16 crash fixed, the after run reaches the optimizer step and breaks there.
    The before run stopped at its error, so that break is "first seen", not NEW, and the verdict stays
    better; a break in a before run that ran to the end is still new."""
    from cdlib.decide import compare as cmp
    from cdlib.show import views_compare
    brk = {"gb_id": "GB0008", "gb_type": "Attempted to inline function marked as skipped", "frames": ["2/0"],
           "location": {"file": "/p/train.py", "line": 97, "code": "opt.step()", "function": "train_step"}}
    base = {"exit_code": 1, "timed_out": False, "signal": None, "graph_breaks": [], "recompiles": [], "stats": {},
            "command": ["python", "train.py"], "run_dir": "/r1", "_stdout": "",
            "graphs": [{"compile_id": "0/0", "function": "train_step"}]}
    after = dict(base, exit_code=0, run_dir="/r2", graph_breaks=[brk], _stdout="step 1\n",
                 graphs=[{"compile_id": "0/0", "function": "train_step"},
                         {"compile_id": "2/0", "function": "train_step (resumed after the graph break at line 96)"}])
    res = cmp.compare(base, after)
    assert res["graph_breaks"]["new"] == [] and len(res["graph_breaks"]["reached"]) == 1, res["graph_breaks"]
    assert res["verdict"].startswith("better"), res["verdict"]
    md = views_compare.markdown(res)
    assert "First seen in the after run (1)" in md and "- NEW:" not in md and "1 first reached" in md
    assert cmp.fix_left(res, after)   # a break of the user's left: the no-code-edit fixes may help
    # the same break made by torch on purpose (optimizer.step's wrapper, knowledge/graph_breaks.yaml): labelled,
    # and no `fix` offered for it (blind A/B batch 32)
    own = dict(brk, category="optimizer internals (expected)", fix={"wrapper": {"id": "optimizer"}})
    res_own = cmp.compare(base, dict(after, graph_breaks=[own]))
    assert res_own["graph_breaks"]["reached"][0].endswith("(torch's own, expected)")
    assert not cmp.fix_left(res_own, dict(after, graph_breaks=[own]))
    # the review's case: the break is in a function the failed before run did compile: new
    res = cmp.compare(dict(base, graphs=after["graphs"]), after)
    assert len(res["graph_breaks"]["new"]) == 1 and not res["graph_breaks"]["reached"], res["graph_breaks"]
    # a before run that ran to the end: new
    res = cmp.compare(dict(base, exit_code=0), after)
    assert len(res["graph_breaks"]["new"]) == 1 and res["verdict"].startswith("worse"), res


def test_compare_output_change_in_the_shared_part_is_still_changed():
    from cdlib.decide import compare as cmp
    base = {"exit_code": 1, "timed_out": False, "signal": None, "graph_breaks": [], "recompiles": [], "stats": {},
            "command": ["python", "app.py"], "run_dir": "/r1", "_stdout": "step 0 loss 1.0\n"}
    after = dict(base, exit_code=0, run_dir="/r2", _stdout="step 0 loss 2.0\nstep 1 loss 1.5\n")
    assert cmp.compare(base, after)["output"] == "changed"


def test_compare_says_when_the_output_now_matches_eager():
    """Blind A/B batch 9: a compiled run that trained on zeroed inputs (loss stuck at 1.60; triage --vs-eager
    had run it eagerly: 0.0012), fixed, now prints eager's lines. compare said 'changed' with the caveat
    about unseeded inputs; it now says the output is what the program printed without torch.compile."""
    from cdlib.decide import compare as cmp
    base = {"exit_code": 0, "timed_out": False, "signal": None, "graph_breaks": [], "recompiles": [], "stats": {},
            "command": ["python", "train.py", "--compile"], "run_dir": "/r1",
            "_stdout": "step 0 loss 1.6098\nstep 149 loss 1.6021\nval acc 0.184\n",
            "_eager_printed": "step 0 loss 1.6098\nstep 149 loss 0.0012\nval acc 0.816\n"}
    after = dict(base, run_dir="/r2", _eager_printed=None,
                 _stdout="step 0 loss 1.6098\nstep 149 loss 0.0012000001\nval acc 0.816\n")
    res = cmp.compare(base, after)
    assert res["output"] == cmp.EAGER_NOW and res["verdict"].endswith("output now matches eager"), res
    from cdlib.show import views_compare
    md = views_compare.markdown(res)
    assert "without a seed" not in md and "without torch.compile" in md
    # another output than eager's stays "changed", with the caveat
    res = cmp.compare(base, dict(after, _stdout="step 0 loss 1.6098\nstep 149 loss 0.9\nval acc 0.5\n"))
    assert res["output"] == "changed" and "without a seed" in views_compare.markdown(res)
    # no eager run in the before run dir: no claim either way
    res = cmp.compare(dict(base, _eager_printed=None), after)
    assert res["output"] == "changed"


def test_printed_leaves_out_torchs_multiline_warnings():
    """A Dynamo UserWarning whose message spans lines (torch 2.14's `time.time` warning, as printed) is
    torch's, not the program's: none of its lines counts as printed output; the program's own lines do."""
    from cdlib.decide import printed
    err = ("/venv/lib/python3.11/site-packages/torch/_dynamo/variables/functions.py:2604: UserWarning: Dynamo does "
           "not know how to trace the builtin `time.time.` This function is either a Python builtin\n"
           "If it is a Python builtin, please file an issue on GitHub so the PyTorch team can add support.\n"
           "If it is a third-party C/C++ Python extension, please either wrap it into a custom operator.\n"
           "  torch._dynamo.utils.warn_once(explanation + \"\\n\" + \"\\n\".join(hints))\n"
           "INFO:train:epoch 1 done\n"
           "W1125 11:40:54.287000 14410 torch/utils/cpp_extension.py:183] No CUDA runtime is found\n")
    assert printed.printed("loss 0.5\n", err) == "loss 0.5\n[stderr] INFO:train:epoch 1 done"
    # anomaly mode's warning carries an indented traceback (blind A/B batch 16: its lines read as the program's
    # and compare said "output changed" after a fix that removed the masked write)
    err = ("/venv/lib/python3.11/site-packages/torch/autograd/graph.py:1113: UserWarning: Error detected in "
           "IndexPutBackward0. Traceback of forward call that caused the error:\n"
           '  File "/p/train.py", line 44, in torch_dynamo_resume_in_sapo_loss_at_44\n'
           "    per_token_loss[pos] = -gate * adv[pos]\n    ~~~~~~~~~~~~~~^^^^^\n"
           " (Triggered internally at /pytorch/torch/csrc/autograd/python_anomaly_mode.cpp:108.)\n"
           "  return Variable._execution_engine.run_backward(  # Calls into the C++ engine\n"
           "INFO step 1 loss -0.0339\n")
    assert printed.printed("", err) == "[stderr] INFO step 1 loss -0.0339"
    # an ordinary warning ends at its source line: the program's indented lines after it are its own (review)
    err = ("/venv/lib/python3.11/site-packages/torch/_dynamo/utils.py:10: UserWarning: something\n"
           "  warnings.warn(msg)\n  epoch 1  loss 0.5\n  epoch 2  loss 0.4\nsummary\n")
    assert printed.printed("", err) == "[stderr]   epoch 1  loss 0.5\n[stderr]   epoch 2  loss 0.4\n[stderr] summary"
    # torchrun's rank prefix on torch's glog lines (blind A/B batch 23: a pid in one was "output changed")
    err = ("[rank1]:W1202 09:19:54.162000 25065 torch/utils/cpp_extension.py:183] [0/0] No CUDA runtime is found\n"
           "[rank1]:[W1202 09:21:02.123456 ProcessGroupGloo.cpp:516] Warning: x\nrank 1 done")
    assert printed.printed("", err) == "[stderr] rank 1 done"
    # pytest's report of a failing test: torch's log records and glog lines it captured are not the program's
    out = ("E   AssertionError: Tensor-likes are not close!\n"
           "----------------------------- Captured stderr call -----------------------------\n"
           "W1202 09:51:26.827000 4170 torch/utils/cpp_extension.py:183] [0/0] No CUDA runtime is found\n"
           "------------------------------ Captured log call -------------------------------\n"
           "DEBUG    torch.__trace:_internal.py:1390 \nDEBUG    torch._dynamo.output_graph:output_graph.py:1 x\n"
           "1 failed in 5.50s")
    assert printed.printed(out, "") == "E   AssertionError: Tensor-likes are not close!\n1 failed in 5.50s"
    out = ("FAILED t.py::test_x\n=============================== warnings summary ===============================\n"
           "t.py::test_x\n  /v/site-packages/torch/_inductor/lowering.py:1: UserWarning: x\n    warnings.warn(\n\n"
           "-- Docs: https://docs.pytest.org/en/stable/how-to/capture-warnings.html\n1 failed, 1 warning in 5.5s")
    assert printed.printed(out, "") == "FAILED t.py::test_x\n1 failed in 5.5s"
    # past a minute pytest adds the clock form, only in the (slower) compiled run
    assert printed.printed("1 failed, 2 warnings in 62.71s (0:01:02)", "") == "1 failed in 62.71s"


@pytest.mark.slow
def test_output_change_from_compiled_random_numbers_is_not_the_fixs(tmp_path):
    """allow_unspec_int_on_nn_module stops the per-step recompiles and keeps forward compiled, whose
    randn_like draws other numbers than the eager fallback did: fix re-runs both with fallback_random and
    calls the fix verified (blind A/B: a VAE's fix was 'changes the program's output')."""
    res, p = run_json("fix", "--out", tmp_path / "f", "--", sys.executable, program("fix_step_counter_noise.py"),
                      timeout=900)
    assert p.returncode == 0, p.stderr[-2000:]
    x = _fix(res, "allow_unspec_int_on_nn_module")
    assert x["effect"]["output"].startswith("same with fallback_random=True in both runs"), x["effect"]
    assert x["label"] == "verified (measured)", x
    assert "fallback_random=True" in p.stderr



@pytest.mark.parametrize("line, want", [
    ("torch_compile=True  first batch  1086.3 ms  median  953.2 ms/batch",
     "torch_compile=True  first batch  <time>  median  <time>"),
    ("epoch 1 loss 8.844 21.8 it/s, 48134 tokens/s, 0.44 s/step", "epoch 1 loss 8.844 <time>, <time>, <time>"),
    ("layer 1: features (128, 128) probe acc=1.000", "layer 1: features (128, 128) probe acc=1.000"),
    ("2026-11-27 02:04:37,787 step 3 at 0x7f3a2c", "<time> step 3 at 0x?"),
])
def test_timings_and_stamps_are_masked_but_results_are_not(line, want):
    """compare and --vs-eager compare printed lines without what differs between any two runs (batch 5:
    a 'median 953.2 ms/batch' line made compare say 'output changed' for a fix that changed no result)."""
    from cdlib.decide import printed
    assert printed.mask_times(line) == want


def test_column_padding_around_a_timing_is_not_an_output_change():
    """Blind A/B batch 7: `eager      12.31s` vs `eager       9.30s` (the padding follows the timing's width)
    made compare say 'output changed'."""
    from cdlib.decide import compare
    a = compare.normalize_output("pass 1 (compiled)   12.31s  emb diff 0.0\n")
    b = compare.normalize_output("pass 1 (compiled)    9.30s  emb diff 0.0\n")
    assert a == b
    assert compare.normalize_output("emb diff 0.0\n") != compare.normalize_output("emb diff 0.5\n")


def test_a_fix_that_makes_a_failing_run_finish_is_not_called_an_output_change():
    """Before: exit 1 (FailOnRecompileLimitHit); after: exit 0. Its output differs of course (blind A/B
    batch 8: the Muon arm read "output changed" as a warning)."""
    from cdlib.decide import compare
    f = {"exit_code": 1, "timed_out": False, "signal": None, "recompiles": 8, "unexpected_recompiles": 7,
         "recompile_limit_hit": 1}
    g = dict(f, exit_code=0, recompiles=4, unexpected_recompiles=3, recompile_limit_hit=0)
    v = compare.verdict(f, g, [], [], "changed")
    assert v.startswith("better") and "now runs to the end" in v and "output changed" not in v
    assert compare.verdict(dict(f, exit_code=0), g, [], [], "changed") == "better; output changed"


def test_a_run_that_still_fails_with_another_error_is_not_called_better():
    """Blind A/B batch 35 (a GCN under fullgraph=True): the edit removed the sparse-tensor break, then Dynamo raised
    IndexError on the sparse base of the values() view passed in; compare said "better" for a program still
    exiting 1. Now it says it still fails, with the new error first; the same error stays on the old verdicts."""
    from cdlib.decide import compare
    f = {"exit_code": 1, "timed_out": False, "signal": None, "recompiles": 0, "unexpected_recompiles": 0,
         "recompile_limit_hit": 0, "first_error": {"type": "Unsupported", "message": "Attempted to wrap sparse Tensor"}}
    g = dict(f, first_error={"type": "IndexError", "message": "tuple index out of range"})
    v = compare.verdict(f, g, ["train_gcn.py:55 — GB0015"], [], "changed")
    assert v.startswith("still fails, with another error now: IndexError: tuple index out of range"), v
    assert "earlier error is gone (1 graph break site(s) fixed)" in v and "better" not in v, v
    assert compare.verdict(f, dict(f), ["x.py:1 — GB0015"], [], "same").startswith("better"), "same error: unchanged"
    assert compare.verdict(f, dict(g, exit_code=0), ["x.py:1"], [], "changed").startswith("better")


def test_compare_names_a_change_in_expected_recompiles():
    """Blind A/B batch 10: a benchmark warmed up under no_grad and timed with grad on recompiled in the timed
    loop (grad mode: an expected recompile). The fix removed it; compare said "no change in breaks or
    recompiles" while its table showed 1 → 0. It names the expected recompiles that changed."""
    from cdlib.decide import compare as cmp
    grad = {"function": "forward", "recompiles": [{}], "compiles": 2, "location": {"code": "def forward(self, x):"},
            "causes": [{"kind": "grad_mode", "guard": "GLOBAL_STATE changed: grad_mode", "primary": 1, "expected": True}]}
    base = {"exit_code": 0, "timed_out": False, "signal": None, "graph_breaks": [], "recompiles": [grad],
            "stats": {"recompiles": 1}, "command": ["python", "bench.py"], "run_dir": "/r1", "_stdout": "x\n"}
    after = dict(base, run_dir="/r2", recompiles=[], stats={"recompiles": 0})
    res = cmp.compare(base, after)
    assert res["verdict"] == "no change in unexpected breaks or recompiles; expected recompiles 1 → 0", res["verdict"]
    assert cmp.compare(base, dict(base, run_dir="/r3"))["verdict"] == "no change in breaks or recompiles"


def test_a_fix_that_makes_the_output_match_eager_with_a_new_guard_is_better():
    """Blind A/B batch 11: object() sentinels guarded by type only, so compiled kept one branch forever (a
    Dynamo bug); the Enum fix adds an identity guard, so 0 → 1 recompile, and the output now matches eager.
    compare said "worse: new graph breaks or recompiles" and offered `fix`."""
    from cdlib.decide import compare as cmp
    rc = {"function": "__call__", "recompiles": [{}], "compiles": 2, "location": {"code": "def __call__(self):"},
          "causes": [{"kind": "identity", "guard": "___check_obj_id(L['fn'].turn, 1)", "primary": 1}]}
    base = {"exit_code": 0, "timed_out": False, "signal": None, "graph_breaks": [], "recompiles": [],
            "stats": {"graphs": 1}, "command": ["python", "train_gan.py"], "run_dir": "/r1",
            "_stdout": "d_steps 1 g_steps 499\nmodes 0/8\n",
            "_eager_printed": "d_steps 250 g_steps 250\nmodes 8/8\n"}
    after = dict(base, run_dir="/r2", _eager_printed=None, recompiles=[rc], _stdout="d_steps 250 g_steps 250\nmodes 8/8\n")
    res = cmp.compare(base, after)
    assert res["verdict"].startswith("better: output now matches eager") and "recompiles 0 → 1" in res["verdict"], res
    assert cmp.done(res)
    # a "fix" that compiles nothing any more is not it; a break still there keeps the next step
    assert not cmp.compare(base, dict(after, stats={"graphs": 0}))["verdict"].startswith("better: output")
    still = {"fixed": [], "still": [{"after": "x.py:3"}], "new": []}
    assert not cmp.done(dict(res, graph_breaks=still))
    # the same recompile without the output reaching eager's is still called a new recompile
    res = cmp.compare(base, dict(after, _stdout="d_steps 250 g_steps 250\nmodes 5/8\n"))
    assert res["verdict"].startswith("worse") and not cmp.done(res)


def test_a_break_whose_line_was_edited_is_still_there_not_new():
    """Blind A/B batch 21: `T = int(lengths.max())` moved out of a try and rewritten as a conditional expression
    was listed as a NEW break (its line text changed); the same id in the same function and file is the same
    break, shown with the line it was; another id there is new."""
    from cdlib.decide import compare as cmp
    from cdlib.show import views_compare

    def brk(line, code, gb="GB0124"):
        return {"gb_id": gb, "gb_type": "Unsupported Tensor.item() call", "frames": ["0/0"], "count": 1,
                "location": {"file": "/p/session_model.py", "line": line, "code": code, "function": "forward"}}
    base = {"exit_code": 0, "timed_out": False, "signal": None, "recompiles": [], "stats": {},
            "command": ["python", "serve.py"], "run_dir": "/r1", "_stdout": "ok\n", "graphs": [],
            "graph_breaks": [brk(39, "T = int(lengths.max())")]}
    after = dict(base, run_dir="/r2", graph_breaks=[brk(41, "T = items.shape[1] if lengths is None else int(lengths.max())")])
    res = cmp.compare(base, after)
    g = res["graph_breaks"]
    assert g["new"] == [] and g["fixed"] == [] and g["still"][0]["edited"], g
    assert "the same break, its line edited: was session_model.py:39" in views_compare.markdown(res)
    for other in (brk(41, "print(x)", gb="GB0007"),
                  brk(44, "scale = float(items.mean())")):   # the review's: another .item() exposed further down
        g = cmp.compare(base, dict(after, graph_breaks=[other]))["graph_breaks"]
        assert len(g["new"]) == 1 and len(g["fixed"]) == 1 and not g["still"], g


def test_a_new_break_that_cuts_compile_time_is_mixed_not_worse():
    """Blind A/B batch 22: removing allow_rnn=True brought the LSTM's graph break back and cut compile time 290 → 46 s;
    compare said "worse: new graph breaks or recompiles". A new break with compile time halved is a trade."""
    from cdlib.decide import compare
    f = {"exit_code": 0, "timed_out": False, "signal": None, "recompiles": 1, "unexpected_recompiles": 0,
         "recompile_limit_hit": 0, "compile_time_s": 290.0}
    v = compare.verdict(f, dict(f, compile_time_s=46.0), [], [{"site": "plate_model.py:30"}], "same")
    assert v.startswith("mixed: new graph break(s), compile time 290 → 46 s"), v
    assert compare.verdict(f, dict(f, compile_time_s=200.0), [], [{"site": "m.py:3"}], "same").startswith("worse")


def test_a_fix_that_makes_a_failing_run_finish_is_checked_against_the_eager_check_it_already_has():
    """Blind A/B batch 48: detaching a logged statistic ended a compile error; compare said "better; it now runs to
    the end" while the compiled losses (0.478, 0.351) were far from the eager check's (0.3995, 0.2446): Inductor's
    mixup was silently wrong. The before run's eager check is read (no run): a number more than 1% away is named;
    compiled dropout's small drift (0.5264 vs 0.5228) and lines only one side prints are not."""
    from cdlib.decide import compare
    before = {"_eager_printed": "step 0 loss 0.3995\nepoch 1 loss 0.2446\ndone\n"}
    after = compare.normalize_output("step 0 loss 0.478\nepoch 1 loss 0.351\ndone\n")
    u = compare._unlike_eager(before, after)
    assert u and u["compiled"] == "step 0 loss 0.478" and u["eager"] == "step 0 loss 0.3995", u
    assert compare._unlike_eager({"_eager_printed": "loss 0.5228\n"}, compare.normalize_output("loss 0.5264\n")) is None
    assert compare._unlike_eager({"_eager_printed": "loss 0.5228\n"},
                                 compare.normalize_output("compiling...\nloss 0.5228\n")) is None
    assert compare._unlike_eager({"_eager_printed": None}, after) is None


def test_a_fix_of_a_program_that_failed_eagerly_too_is_not_held_to_the_buggy_eager_numbers(tmp_path):
    """Blind A/B batch 64: a float32 cdist audit failed with and without torch.compile; the fix (cdist's direct
    mode) passed, and compare said its numbers were "unlike what the program printed without torch.compile" (the
    buggy eager run's), which cost a --vs-eager run. Where the before run's verdict is that eager fails too, eager's
    numbers are the bug's: no such line."""
    prog = program("cdist_fp32_audit.py")
    tri, _ = run_json("triage", "--vs-eager", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog,
                      timeout=600)
    assert tri["verdict"]["kind"] == "fails_eager_too", tri["verdict"]
    res, p = run_json("compare", tmp_path / "t", "--out", tmp_path / "c", "--", sys.executable, prog, timeout=600,
                      env={"FIXED": "1"})
    assert res["after"]["exit_code"] == 0 and res["unlike_eager"] is None, res
    assert "unlike what the program printed" not in res["verdict"], res["verdict"]
    # (review of 0.33.183) a compiled run that printed other numbers than eager before the fix keeps the check
    prog = program("compiled_differs_then_missing_file.py")
    tri, _ = run_json("triage", "--vs-eager", "--no-tlparse", "--out", tmp_path / "t2", "--", sys.executable, prog,
                      timeout=600)
    assert tri["verdict"]["kind"] == "fails_eager_too", tri["verdict"]
    res, p = run_json("compare", tmp_path / "t2", "--out", tmp_path / "c2", "--", sys.executable, prog, timeout=600,
                      env={"FIXED": "1"})
    assert res["unlike_eager"] and res["unlike_eager"]["compiled"].startswith("loss "), res


def test_unlike_eager_leaves_out_timings_memory_and_values_near_zero():
    """Review of 0.33.99: memory figures, near-zero noise (a gradient mean of 1e-9) were named as numbers unlike
    eager; and a difference past the fifth differing line was missed."""
    from cdlib.decide import compare
    norm = compare.normalize_output
    assert compare._unlike_eager({"_eager_printed": "peak rss 812 MB\n"}, norm("peak rss 955 MB\n")) is None
    assert compare._unlike_eager({"_eager_printed": "grad mean 1.2e-09\n"}, norm("grad mean -3.1e-09\n")) is None
    e = "".join(f"step {i} peak mem {100 + i} MB\n" for i in range(1, 8)) + "val 0.91\n"
    a = "".join(f"step {i} peak mem {300 + i} MB\n" for i in range(1, 8)) + "val 0.55\n"
    u = compare._unlike_eager({"_eager_printed": e}, norm(a))
    assert u and u["compiled"] == "val 0.55", u
    # a program that calls torch._dynamo.explain: its graph/break counts are left out, its loss still counts (review
    # of batch 66)
    e, a = "loss=3.05051\ngraphs=0 graph_breaks=-1\n", "loss=0.01192\ngraphs=1 graph_breaks=0\n"
    assert compare._unlike_eager({"_eager_printed": e}, norm(a), skip=compare._EXPLAIN_COUNTS)["compiled"] == "loss=0.01192"
    e = "loss=3.05051\ngraphs=0 graph_breaks=-1\n"
    assert compare._unlike_eager({"_eager_printed": e}, norm("loss=3.05051\ngraphs=1 graph_breaks=0\n"),
                                 skip=compare._EXPLAIN_COUNTS) is None


def test_a_fix_that_makes_the_compiler_fail_and_run_eagerly_is_worse_not_fewer_recompiles(tmp_path):
    """Blind A/B batch 50: an IntEnum language recompiled per language; the first edit passed it as a 0-d tensor that
    indexes the weight, Inductor failed on it (GB0219, aten._local_scalar_dense) and Dynamo ran forward eagerly:
    compare said "mixed ... recompiles 8 -> 0" with `fix --from` as Next, and the agent spent a round. Now it is
    "worse: the compiler now fails", with the backend's error and no `fix` Next."""
    prog = program("lang_index_fallback.py")
    tri, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python", prog, timeout=600)
    assert tri["recompiles"] and tri["recompiles"][0]["recompiles"], tri["recompiles"]
    assert "int(member)" in json.dumps(tri["recompiles"]), tri["recompiles"]   # the enum's own fix
    cmp_, p = run_json("compare", tmp_path / "t", "--out", tmp_path / "c", "--", "python", prog,
                       env={"TENSOR_INDEX": "1"}, timeout=600)
    assert cmp_["verdict"].startswith("worse: the compiler now fails") and "_local_scalar_dense" in cmp_["verdict"], \
        cmp_["verdict"]
    assert " fix --from " not in p.stdout, p.stdout


def test_output_that_differs_only_by_lines_reporting_times_is_not_called_changed():
    """Blind A/B batch 50: a fix removed the slow-request warnings ("req 3 (backfill, n=253) took 4494 ms"); compare
    said "output changed" from them. Lines that carry a time and appear or go are named as such; a count that
    changes is still a change."""
    from cdlib.decide import compare
    before = "serving\nWARNING req 3 (backfill, n=253) took 4494.2 ms\nintents [1, 2]\nstalls: 2\n"
    after = "serving\nintents [1, 2]\nstalls: 2\n"
    a, b = compare.normalize_output(before), compare.normalize_output(after)
    assert compare._only_timing_lines(a, b)
    assert not compare._only_timing_lines(a, compare.normalize_output(after.replace("stalls: 2", "stalls: 0")))
    assert not compare._only_timing_lines(a, compare.normalize_output(after.replace("[1, 2]", "[1, 3]")))
    # blind A/B batch 51: loss lines that carry a step time, and a mismatch line that went away, are a change
    lb = compare.normalize_output("step 10 loss 0.7076 12.1 ms\nA/B MISMATCH step1 1.45e-03\ndone\n")
    la = compare.normalize_output("step 10 loss 0.6851 11.8 ms\ndone\n")
    assert not compare._only_timing_lines(lb, la)
    assert not compare._only_timing_lines(lb, compare.normalize_output("step 10 loss 0.7076 12.1 ms\ndone\n"))
    for gone in ("parity: 3/64 rows MISMATCH (checked in 12.3 ms)", "FAILED 2 of 40 checks in 0.53 s",
                 "step 5 took 120.4 ms, 3 NaN grads skipped"):   # (review of 0.33.114)
        assert not compare._only_timing_lines(compare.normalize_output(f"a\n{gone}\nb\n"),
                                              compare.normalize_output("a\nb\n")), gone


def test_a_backend_failure_that_was_there_before_the_edit_is_not_called_new():
    """Review of 0.33.109: GB0219 is placed at the caller's line, so editing that line made an old backend failure
    look new and compare said "worse: the compiler now fails"."""
    from cdlib.decide import compare
    gb = {"gb_id": "GB0219", "gb_type": "Backend compiler exception",
          "explanation": "Backend compiler `inductor` failed with aten._local_scalar_dense.default"}
    new = ["tagger.py:30 `print(model(x, lang))` — GB0219 Backend compiler exception"]
    assert compare.compile_fallback({"graph_breaks": []}, {"graph_breaks": [gb]}, new).startswith("Backend compiler")
    assert compare.compile_fallback({"graph_breaks": [gb]}, {"graph_breaks": [gb]}, new) is None
