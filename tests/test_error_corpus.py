"""The error corpus (tests/error_corpus/*.py, each with `# expect: <class> <verdict>` on line 1).

Fast: classify the recorded real outputs of every corpus program (tests/error_corpus/recorded/,
recorded on torch 2.14.1 by `python3 benchmarks/error_corpus.py --record`) through the same code
triage uses (analyze.analyze + analyze.apply_verdict), without running anything.
Live: run the real `triage --json` on a few programs covering every verdict path."""
import concurrent.futures as cf
import glob
import json
import os
import re
import sys

import pytest

from conftest import ROOT, run_cli

sys.path.insert(0, os.path.join(ROOT, "scripts"))
from cdlib.decide import analyze
from cdlib.run import proc
from cdlib.show import views  # noqa: E402

CORPUS = os.path.join(ROOT, "tests", "error_corpus")
RECORDED = sorted(glob.glob(os.path.join(CORPUS, "recorded", "*.json")))
USER_SIDE = ("fails_eager_too", "before_compile")


def expectation(name):
    with open(os.path.join(CORPUS, name), encoding="utf-8") as f:
        cls, kind = f.readline().split(":", 1)[1].split()[:2]
    return cls, kind


def replay(path):
    with open(path, encoding="utf-8") as f:
        d = json.load(f)
    prog = os.path.join(CORPUS, d["program"])
    stderr = d["stderr_tail"].replace("{CORPUS}", CORPUS)
    res = proc.ProcResult(argv=[sys.executable, prog], returncode=d["exit_code"], duration_s=d["duration_s"] or 1.0,
                          timed_out=d["timed_out"], signal=d["signal"])
    tstr = f"python {d['program']}"
    rep = analyze.analyze(None, command=[sys.executable, prog], res=res, stderr=stderr, target_str=tstr)
    rep.used_compile = d["used_compile"]
    e = d["eager"]
    eres = None if e is None else proc.ProcResult(argv=[], returncode=e["exit_code"], duration_s=e["duration_s"] or 1.0,
                                                  timed_out=e["timed_out"], signal=e["signal"])
    analyze.apply_verdict(rep, stderr, target_str=tstr, eager_res=eres,
                          eager_stderr=None if e is None else e["stderr_tail"].replace("{CORPUS}", CORPUS))
    return d, rep


def test_corpus_is_big_and_every_program_has_an_expectation():
    progs = sorted(glob.glob(os.path.join(CORPUS, "*.py")))
    assert len(progs) >= 60
    kinds = {expectation(os.path.basename(p))[1] for p in progs}
    assert {"fails_eager_too", "compile_only", "before_compile", "export_failure"} <= kinds
    assert len(RECORDED) >= 30, "record with: python3 benchmarks/error_corpus.py --record"


@pytest.mark.parametrize("path", RECORDED, ids=[os.path.basename(p)[:-5] for p in RECORDED])
def test_recorded_output_classified(path):
    d, rep = replay(path)
    cls, kind = expectation(d["program"])
    assert rep.errors, "a corpus program must fail"
    e = rep.errors[0]
    assert (e.category, rep.verdict["kind"]) == (cls, kind)
    md = views.triage_markdown(rep, f"python {d['program']}", cwd=CORPUS)
    lines = md.splitlines()
    assert lines[1].startswith("**Verdict: "), md  # the verdict comes first, right after the title
    nxt = md.split("## Next", 1)[1]
    if kind in USER_SIDE:
        # never a compiler bug, never routed to bisect/minify
        assert e.side != "compiler" or e.category == "user_error"
        assert "compiler bug" not in (e.title + nxt).lower()
        assert not any(s["command"] and (" bisect " in s["command"] or " minify " in s["command"])
                       for s in rep.next_steps)
        if e.location is not None:  # a bare sys.exit / a signal has no traceback to name a line
            assert rep.verdict["location"] and d["program"] in rep.verdict["location"]
    if e.side == "custom_op":
        assert "opcheck" in nxt
    if cls == "syntax_error":
        assert re.search(rf"fix the syntax error at \S*{d['program']}:\d+: ", nxt) and "triage" not in nxt
    json.dumps(rep.to_dict())  # JSON-safe


def test_fake_tensor_error_shows_op_shapes_and_inner_message():
    d, rep = replay(os.path.join(CORPUS, "recorded", "shape_matmul_fn.json"))
    e = rep.errors[0]
    assert e.type == "TorchRuntimeError" and e.inner["type"] == "RuntimeError"
    assert e.inner["op"] == "matmul" and e.inner["inputs"] == ["float32[2,5]", "float32[4,3]"]
    assert "same reduction dim" in e.inner["message"]
    assert e.location.line == 7 and rep.verdict["eager"]["type"] == "RuntimeError"
    md = views.triage_markdown(rep, "python shape_matmul_fn.py", cwd=CORPUS)
    assert "op `matmul` on (float32[2,5], float32[4,3]) raised RuntimeError" in md


def test_backend_failure_shows_inner_exception_and_user_backend_line():
    d, rep = replay(os.path.join(CORPUS, "recorded", "custom_backend_raises.json"))
    e = rep.errors[0]
    assert e.inner == {"type": "NotImplementedError", "message": "my_backend cannot lower aten.sin yet",
                       "backend": "my_backend"}
    assert rep.next_steps[0]["command"] is None and "your own backend 'my_backend'" in rep.next_steps[0]["why"]


# ---- live: the real CLI, one program per verdict path -------------------------------------

LIVE = ["shape_matmul_module.py", "inference_tensor_backward.py", "custom_no_fake.py", "fullgraph_graph_break.py",
        "inj_compile_error.py", "syntax_error.py", "export_constraint.py", "user_value_error.py",
        "custom_mutates_args.py", "import_error.py"]


def _triage(name, tmp_path, *extra):
    p = run_cli("triage", "--json", "--no-tlparse", "--out", tmp_path / name[:-3], *extra, "--",
                sys.executable, os.path.join(CORPUS, name), cwd=CORPUS, check=0)
    return json.loads(p.stdout)


@pytest.mark.slow
def test_live_triage_every_verdict_path(tmp_path):
    with cf.ThreadPoolExecutor(2) as ex:
        reps = dict(zip(LIVE, ex.map(lambda n: _triage(n, tmp_path), LIVE)))
    bad = {n: ((r["errors"] or [{}])[0].get("category"), (r.get("verdict") or {}).get("kind"))
           for n, r in reps.items() if ((r["errors"] or [{}])[0].get("category"), (r.get("verdict") or {}).get("kind"))
           != expectation(n)}
    assert not bad
    # the eager re-run happened exactly where the program reached torch.compile and failed
    for n, r in reps.items():
        ran = os.path.exists(os.path.join(r["run_dir"], "eager_check.stderr"))
        assert ran == (r["verdict"]["kind"] in ("fails_eager_too", "compile_only", "different_failure_eager")), n


@pytest.mark.slow
def test_no_eager_check_flag(tmp_path):
    r = _triage("shape_linear.py", tmp_path, "--no-eager-check")
    assert r["verdict"]["kind"] == "not_checked" and r["errors"][0]["category"] == "shape_mismatch"
    assert not os.path.exists(os.path.join(r["run_dir"], "eager_check.stderr"))


@pytest.mark.gpu
def test_live_device_mismatch_on_gpu(tmp_path):
    r = _triage("device_mismatch.py", tmp_path)
    assert (r["errors"][0]["category"], r["verdict"]["kind"]) == ("device_mismatch", "fails_eager_too")
    assert "Expected all tensors to be on the same device" in r["verdict"]["eager"]["message"]


def test_an_overlapping_in_place_write_is_the_programs_not_a_backend_failure():
    """Blind A/B batch 9: functionalization refuses an in-place op on overlapping unfold frames (wrapped in
    BackendCompilerFailed). Eager computes ill-defined values without an error, so "only fails compiled"
    must not lead to bisect: the Next is the row's advice (write it out of place)."""
    _, rep = replay(os.path.join(CORPUS, "recorded", "inplace_overlapping_frames.json"))
    e = rep.errors[0]
    assert (e.category, e.side, rep.verdict["kind"]) == ("inplace_internal_overlap", "user", "compile_only")
    assert not any(s["command"] for s in rep.next_steps), rep.next_steps
    assert "out of place" in rep.next_steps[0]["why"] and "eager result is probably wrong" in rep.next_steps[0]["why"]


def test_route_names_a_line_only_when_the_failure_has_one():
    """A program that exits non-zero before torch.compile ran, with no traceback, has no line: the Route
    line must not say "at that line" (it did for before_compile whatever the location)."""
    from types import SimpleNamespace
    for kind in USER_SIDE:
        for loc, said in ((None, False), ("train.py:12", True)):
            rep = SimpleNamespace(verdict={"kind": kind, "location": loc, "summary": "s", "eager": None}, errors=[])
            route = [x for x in views.verdict_lines(rep) if x.startswith("Route:")]
            assert route and ("at that line" in route[0]) == said, (kind, loc, route)


def test_a_warm_cache_failure_found_after_a_measured_miscompile_is_not_routed_to_bisect():
    """The empty-cache run comes after the accuracy check (not before: it is the dearest extra run and rounding
    needs none); when the accuracy check measured a miscompile and the empty cache then passes, the Route line
    names the cache, not the accuracy check's bisect."""
    from types import SimpleNamespace
    acc = {"verdict": "miscompile", "summary": "miscompile: graph 0", "graphs_checked": 1, "outputs_checked": 1}
    err = SimpleNamespace(category="warm_cache_only", side="user")
    rep = SimpleNamespace(verdict={"kind": "compile_only", "summary": "s", "eager": None, "accuracy": acc},
                          errors=[err], next_steps=[])
    (route,) = [x for x in views.verdict_lines(rep) if x.startswith("Route:")]
    assert "warm compile cache" in route and "no bisect" in route, route
    err.category = "accuracy_mismatch"
    (route,) = [x for x in views.verdict_lines(rep) if x.startswith("Route:")]
    assert "bisect the layer" in route, route
