"""Parser/analysis unit tests on recorded traces of two torch versions (tests/fixtures/torch-*)."""
import json
import os

import pytest
from conftest import FIXTURES

from cdlib.decide import analyze, analyze_recompiles, guard_failures
from cdlib.run import proc
from cdlib.read import trace

VERSIONS = sorted(d for d in os.listdir(FIXTURES) if d.startswith("torch-"))


def report(ver, name):
    d = os.path.join(FIXTURES, ver, name)
    meta = json.load(open(os.path.join(d, "meta.json")))
    res = proc.ProcResult(argv=[], returncode=meta["returncode"], duration_s=1.0)
    return analyze.analyze(os.path.join(d, "trace.log"), res=res, stderr=open(os.path.join(d, "stderr.txt")).read())


def where(loc):
    return f"{os.path.basename(loc.file)}:{loc.line}"


def test_two_versions_recorded():
    assert "torch-2.9" in VERSIONS and any(v >= "torch-2.11" for v in VERSIONS), VERSIONS


@pytest.mark.parametrize("ver", VERSIONS)
def test_print_break(ver):
    r = report(ver, "gb_print")
    assert len(r.graph_breaks) == 1
    b = r.graph_breaks[0]
    assert where(b.location) == "gb_print.py:8"
    assert b.gb_id == "GB0059" and b.gb_type == "Failed to trace builtin operator"
    assert b.count == 1 and b.frames == ["0/0"]
    assert "reorderable_logging_functions" in b.fix["fix"]
    assert not r.errors and r.stats["graphs"] == 2


@pytest.mark.parametrize("ver", VERSIONS)
def test_data_dependent_branch(ver):
    r = report(ver, "gb_data_dependent_if")
    (b,) = r.graph_breaks
    assert where(b.location) == "gb_data_dependent_if.py:8"
    assert b.category == "data-dependent branch" and "torch.cond" in b.fix["fix"]
    # 2.9 prints no registry URL for this break; later versions carry GB0170
    assert b.gb_id == (None if ver == "torch-2.9" else "GB0170")


@pytest.mark.parametrize("ver", VERSIONS)
def test_item_breaks_are_two_sites(ver):
    r = report(ver, "gb_item")
    assert [where(b.location) for b in sorted(r.graph_breaks, key=lambda b: b.location.line)] == ["gb_item.py:7", "gb_item.py:9"]
    assert {b.gb_id for b in r.graph_breaks} == {"GB0124"}


@pytest.mark.parametrize("ver", VERSIONS)
def test_break_in_loop_skips_frame(ver):
    (b,) = report(ver, "gb_loop").graph_breaks
    assert where(b.location) == "gb_loop.py:6" and b.fix.get("frame_skipped") is True
    if ver != "torch-2.9":
        assert [a["gb_id"] for a in b.fix["also"]] == ["GB7000"]


@pytest.mark.parametrize("ver,name,kind,fn,line,expected", [
    (v, *case) for v in VERSIONS for case in [
        ("rc_batch", "shape", "forward", 10, True), ("rc_float", "python_float", "scale", 5, True),
        ("rc_grad", "grad_mode", "step", 7, True), ("rc_limit", "module_attribute", "forward", 12, False)]])
def test_recompile_kinds(ver, name, kind, fn, line, expected):
    r = report(ver, name)
    (f,) = r.recompiles
    assert f.function == fn and f.location.line == line
    assert list(f.kinds) == [kind]
    (c,) = f.causes
    assert c["kind"] == kind and c["fix"] and c["expected"] is expected
    # a single new shape / number / grad-mode switch is a one-time recompile torch expects: not a fix item
    assert f.expected_only is expected and any(x["kind"] == kind for x in f.fixes) is not expected
    assert (r.status == "clean") is expected


@pytest.mark.parametrize("ver", VERSIONS)
def test_recompile_limit(ver):
    (f,) = report(ver, "rc_limit").recompiles
    assert f.limit_hit and f.limit == 3 and f.compiles == 3
    assert f.recompiles[0].failures[0].guard == "self.step == 0"
    loc = f.recompiles[0].failures[0].location
    assert loc is not None and where(loc) == "rc_limit.py:13"   # 2.9: from '# file:line in fn'; 2.11+: user stack


@pytest.mark.parametrize("ver", VERSIONS)
def test_wrapper_mapped_to_user_call_site(ver):
    (f,) = report(ver, "rc_sequential").recompiles
    assert where(f.location) == "rc_sequential.py:6" and "external_utils.py" in f.wrapper


@pytest.mark.parametrize("ver", VERSIONS)
def test_fullgraph_error_lists_the_break(ver):
    r = report(ver, "err_fullgraph")
    (e,) = r.errors
    assert e.category == "graph_break_fullgraph" and e.skill == "trace-dynamo"
    assert where(e.location) == "err_fullgraph.py:8"
    assert [(where(b.location), b.gb_id) for b in r.graph_breaks] == [("err_fullgraph.py:8", "GB0059")]


def test_string_table_and_payloads(tmp_path):
    p = tmp_path / "t.log"
    p.write_text('V1123 00:00:00.000000 1 torch/x.py:1] {"str": ["/u/a.py", 3]}\n'
                 'V1123 00:00:00.000000 1 torch/x.py:2] {"dynamo_start": {"stack": [{"line": 5, "name": "f", "filename": 3}]}, "frame_id": 2, "frame_compile_id": 1, "attempt": 0}\n'
                 'garbage line\n'
                 'V1123 00:00:00.000000 1 torch/x.py:3] {"artifact": {"name": "recompile_reasons", "encoding": "json"}, "frame_id": 2, "frame_compile_id": 1, "has_payload": "x"}\n'
                 '\t["2/0: x == 1"]\n')
    t = trace.parse(str(p))
    (s,) = t.of("dynamo_start")
    assert s.compile_id == "2/1" and t.frames(s.data["stack"]) == [("/u/a.py", 5, "f", None)]
    (a,) = t.artifacts("recompile_reasons")
    assert a.payload_json() == ["2/0: x == 1"]


def test_plain_text_and_json_reasons():
    assert guard_failures.split_reasons('["0/0: a == 1", "0/1: b"]') == ["0/0: a == 1", "0/1: b"]
    assert guard_failures.split_reasons("0/0: GLOBAL_STATE changed: grad_mode ") == ["0/0: GLOBAL_STATE changed: grad_mode "]


def test_library_break_chain_and_workarounds():
    """transformers GPT-2 with gradient checkpointing: warning_once inside transformers breaks the graph."""
    r = report("torch-2.14", "hf_gpt2_gc")
    by_site = {(b.stack[-1].display, b.stack[-1].line): b for b in r.graph_breaks}
    b = by_site[("transformers/utils/generic.py", 1043)]
    assert b.gb_id == "GB0291" and b.in_library and b.library == "transformers"
    assert where(b.location) == "hf_gpt2_gc.py:12" and b.location.code.startswith("out = step(")
    assert [f.user for f in b.stack] == [True, False, False, False]       # you -> transformers frames, torch plumbing dropped
    assert [(f.display, f.line, f.function) for f in b.stack[1:]] == [
        ("transformers/utils/generic.py", 943, "wrapper"), ("transformers/models/gpt2/modeling_gpt2.py", 680, "forward"),
        ("transformers/utils/generic.py", 1043, "wrapper")]
    assert b.stack[-1].code == "logger.warning_once("
    src = [w["source"] for w in b.workarounds]
    assert src[:len(b.hints)] == ["pytorch"] * len(b.hints) and len(b.hints) >= 3    # torch's hints first, verbatim
    assert "ignore_logging_functions" in b.workarounds[0]["text"]
    codes = [w.get("code") or "" for w in b.workarounds]
    assert any("ignore_logging_functions.add(logging.Logger.warning_once)" in c for c in codes)
    assert any("use_cache=False" in w["text"] for w in b.workarounds if w["source"] == "knowledge")
    ours = b.workarounds[len(b.hints):]      # the setting that removes the cause before the line that drops the call
    assert "use_cache=False" in ours[0]["text"] and "ignore_logging_functions" in ours[1]["code"], ours
    # the breaking function is a closure inside a decorator: no torch.compiler.disable line is offered for it
    assert not any("torch.compiler.disable" in c for c in codes)
    loss = by_site[("transformers/modeling_utils.py", 4769)]
    assert any('loss_type = "ForCausalLM"' in w["text"] for w in loss.workarounds)


def test_library_break_markdown_shows_hints_and_chain():
    from cdlib.show import views
    md = views.triage_markdown(report("torch-2.14", "hf_gpt2_gc"))
    i_hint, i_fix = md.index("PyTorch's hints:"), md.index("   Fix (a change to the breaking line")
    assert i_hint < i_fix and "In library code (transformers), not yours" in md
    assert "lib transformers/models/gpt2/modeling_gpt2.py:680 in forward" in md
    assert "Without editing transformers:" in md


def test_recompile_causes_grouped_across_cache_entries():
    """Shape, float attribute and int attribute change: every guard failure is kept and grouped by cause."""
    (f,) = report("torch-2.14", "rc_multi").recompiles
    assert f.compiles == 5 and len(f.recompiles) == 4 and not f.limit_hit
    causes = {c["cause"]: c for c in f.causes}
    assert set(causes) == {"shape of `tokens` dim 1", "value of `self.temperature`", "value of `self.top_k`"}
    assert causes["value of `self.top_k`"]["primary"] == 2 and not causes["value of `self.top_k`"]["expected"]
    for c in ("shape of `tokens` dim 1", "value of `self.temperature`"):     # automatic dynamic: once
        assert causes[c]["primary"] == 1 and causes[c]["expected"], causes[c]
    assert causes["value of `self.temperature`"]["count"] > 1             # also failed against older entries
    assert [x["kind"] for x in f.fixes] == ["module_attribute"] and not f.expected_only
    assert "allow_unspec_int_on_nn_module" in (causes["value of `self.top_k`"]["hint"] or "")
    r = report("torch-2.14", "rc_multi")
    (step,) = [s for s in r.next_steps if "recompile" in s["why"]]
    assert "self.top_k" in step["why"] and "tokens" not in step["why"]


def test_guard_cause_names():
    from cdlib.decide.guard_failures import guard_cause
    assert guard_cause("tensor 'L['x']' size mismatch at index 0. expected 2, actual 3", "shape") == "shape of `x` dim 0"
    assert guard_cause("tensor 'x' dtype mismatch. expected Float, actual Double", "dtype") == "dtype of `x`"
    assert guard_cause("GLOBAL_STATE changed: grad_mode ", "grad_mode") == "grad mode"
    assert guard_cause("L['self'].temperature == 0.9", "module_attribute") == "value of `self.temperature`"
    assert guard_cause("len(L['xs']) == 2", "container_length") == "length of `xs`"
    # transformers generate() on 2.14: a dynamic dim left the range it was compiled for
    assert guard_cause("2 <= input_ids.size()[1] <= 8", "shape") == "shape of `input_ids` dim 1"
    from cdlib.decide import knowledge
    assert knowledge.guard_kind("2 <= input_ids.size()[1] <= 8")["kind"] == "shape"


def test_a_multi_line_warning_is_left_out_and_a_one_line_one_keeps_what_follows():
    """Dynamo's lru_cache warning runs over several lines ("This call originates from:", the call) and ends at its
    warn_once source line: none of it is the program's last words (blind A/B batch 25 read "This call originates
    from:" as error 1). A one-line warning whose source line follows it keeps the program's later lines, a
    `logger.warning(` among them (review)."""
    from cdlib.read.frames import drop_multiline_warnings
    from cdlib.run.workers.bisect_step import last_words
    multi = ["/x/torch/_dynamo/variables/functions.py:3115: UserWarning: Dynamo detected a call to a "
             "`functools.lru_cache`-wrapped function at 'model.py:41'.", "", "This call originates from:",
             '  File "/w/model.py", line 41, in forward', "    bias = prior(T)", "", "  torch._dynamo.utils.warn_once(msg)",
             "FAIL: compiled diverges from eager"]
    assert drop_multiline_warnings(multi) == ["FAIL: compiled diverges from eager"]
    assert last_words("", "\n".join(multi)) == "FAIL: compiled diverges from eager"
    one = ["/x/torch/nn/a.py:3: UserWarning: foo", "  return torch._C.bar(x)", "step 1", '    logger.warning("x")',
           "FAIL: loss diverged"]
    assert drop_multiline_warnings(one) == one and last_words("", "\n".join(one)) == "FAIL: loss diverged"
