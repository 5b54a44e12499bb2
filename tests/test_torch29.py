"""Smoke subset on another torch than the suite's: the CLI itself runs with that env's python, so the
target, the workers and the trace are all that torch. Live traces through the parser, triage of three
programs, export, env. Runs when COMPILE_DEBUG_TORCH29_PYTHON names a python with torch 2.9 (the oldest
supported; CI builds and caches one: `.ci/torch29` prints its path), or COMPILE_DEBUG_SMOKE_PYTHON any
other supported torch's python (CI: 2.14.1, the previous minor)."""
import json
import os
import subprocess

import pytest

from conftest import CLI, TORCH29_PYTHON, program

SMOKE_PYTHON = os.environ.get("COMPILE_DEBUG_SMOKE_PYTHON") or TORCH29_PYTHON
pytestmark = pytest.mark.skipif(not SMOKE_PYTHON, reason="no torch 2.9 env: run with "
                                "COMPILE_DEBUG_TORCH29_PYTHON=$(.ci/torch29) (builds a cached venv with torch 2.9.1)")


def cli29(*args, timeout=600):
    p = subprocess.run([SMOKE_PYTHON, CLI, args[0], "--json", *map(str, args[1:])], capture_output=True, text=True,
                       timeout=timeout)
    try:
        return json.loads(p.stdout), p
    except ValueError:
        raise AssertionError(f"exit {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}")


def sites(d):
    return {(os.path.basename(b["location"]["file"]), b["location"]["line"]): b for b in d["graph_breaks"]}


def test_env_reports_torch29(tmp_path):
    ver = subprocess.run([SMOKE_PYTHON, "-c", "import torch; print(torch.__version__)"], capture_output=True,
                         text=True, timeout=120).stdout.strip()
    d, p = cli29("env", "--out", tmp_path / "r")
    assert p.returncode == 0 and d["info"]["torch"] == ver, p.stderr[-2000:]
    assert not any(f"torch {ver.split('+')[0]}" in x["problem"] for x in d["problems"])


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
