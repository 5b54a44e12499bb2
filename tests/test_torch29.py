"""Smoke subset on the oldest supported torch (2.9): the CLI itself runs with that env's python, so
the target, the workers and the trace are all torch 2.9. Live traces through the parser, triage of
three programs, export, env. Runs when COMPILE_DEBUG_TORCH29_PYTHON names a python with torch 2.9
(CI builds and caches one: `.ci/torch29` prints its path)."""
import json
import os
import subprocess

import pytest

from conftest import CLI, TORCH29_PYTHON, program

pytestmark = pytest.mark.skipif(not TORCH29_PYTHON, reason="no torch 2.9 env: run with "
                                "COMPILE_DEBUG_TORCH29_PYTHON=$(.ci/torch29) (builds a cached venv with torch 2.9.1)")


def cli29(*args, timeout=600):
    p = subprocess.run([TORCH29_PYTHON, CLI, args[0], "--json", *map(str, args[1:])], capture_output=True, text=True,
                       timeout=timeout)
    try:
        return json.loads(p.stdout), p
    except ValueError:
        raise AssertionError(f"exit {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}")


def sites(d):
    return {(os.path.basename(b["location"]["file"]), b["location"]["line"]): b for b in d["graph_breaks"]}


def test_env_reports_torch29(tmp_path):
    d, p = cli29("env", "--out", tmp_path / "r")
    assert p.returncode == 0 and d["info"]["torch"].startswith("2.9"), p.stderr[-2000:]
    assert not any("torch 2.9" in x["problem"] for x in d["problems"])


def test_triage_graph_break_live(tmp_path):
    d, p = cli29("triage", "--no-tlparse", "--out", tmp_path / "r", "--", program("gb_print.py"))
    assert p.returncode == 0, p.stderr[-2000:]
    b = sites(d)[("gb_print.py", 8)]
    assert b["category"] == "printed/logged tensor value" and b["location"]["code"]
    assert d["status"] == "issues" and not d["errors"]


def test_triage_recompile_live(tmp_path):
    d, p = cli29("triage", "--no-tlparse", "--out", tmp_path / "r", "--", program("rc_float.py"))
    assert p.returncode == 0, p.stderr[-2000:]
    (f,) = d["recompiles"]
    assert f["function"] == "scale" and f["recompiles"][0]["failures"][0]["kind"] == "python_float"


def test_triage_fullgraph_error_live(tmp_path):
    d, p = cli29("triage", "--no-tlparse", "--out", tmp_path / "r", "--", program("err_fullgraph.py"))
    assert p.returncode == 0, p.stderr[-2000:]
    (e,) = d["errors"]
    assert e["category"] == "graph_break_fullgraph"
    assert (os.path.basename(e["location"]["file"]), e["location"]["line"]) == ("err_fullgraph.py", 8)


def test_export_data_dependent(tmp_path):
    d, p = cli29("export", "--no-draft", "--out", tmp_path / "r", program("export_models.py") + ":data_dependent")
    assert p.returncode == 0, p.stderr[-2000:]
    assert d["status"] == "failed"
    assert d["attempts"]["non_strict"]["failure"]["cls"] == "data_dependent_guard"
