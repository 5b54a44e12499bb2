"""Parser/analysis unit tests on recorded traces of two torch versions (tests/fixtures/torch-*)."""
import json
import os

import pytest
from conftest import FIXTURES

from cdlib import analyze, proc, trace

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
    assert analyze._split_reasons('["0/0: a == 1", "0/1: b"]') == ["0/0: a == 1", "0/1: b"]
    assert analyze._split_reasons("0/0: GLOBAL_STATE changed: grad_mode ") == ["0/0: GLOBAL_STATE changed: grad_mode "]
