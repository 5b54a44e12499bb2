"""A program that reads standard input is told so (not "a bug in your program"), --stdin gives it its
input in every run and every suggested re-run; Ctrl-C keeps the report of what the run saw (issue 26)."""
import json
import os
import sys

import pytest

from conftest import CLI, program, run_cli, run_json
from test_bad_input import interrupt_when, tagged_alive, _wait_gone


def test_program_reading_stdin_is_not_called_a_bug(tmp_path):
    out = tmp_path / "run"
    doc, p = run_json("triage", "--no-tlparse", "--out", out, "--", sys.executable, program("ask_number.py"))
    assert p.returncode == 0, p.stderr[-2000:]
    md = (out / "report.md").read_text()
    err = doc["errors"][0]
    assert err["type"] == "EOFError" and err["category"] == "stdin_eof", err
    assert err["location"]["file"].endswith("ask_number.py") and err["location"]["line"] == 3, err
    assert doc["verdict"]["kind"] == "needs_input" and "--stdin FILE" in doc["verdict"]["summary"], doc["verdict"]
    assert "a bug in your program" not in md and "reads standard input" in md, md
    # no eager re-run for it (it would get no input either)
    assert not (out / "eager_check.stderr").exists()
    assert any("triage --stdin <file> -- " in (s["command"] or "") for s in doc["next_steps"]), doc["next_steps"]


def test_stdin_read_that_returns_empty(tmp_path):
    """sys.stdin.read() returns '' and the program fails on that line: also "reads standard input"."""
    prog = tmp_path / "cfg.py"
    prog.write_text("import json, sys\ncfg = json.loads(sys.stdin.read())\nprint(cfg)\n")
    doc, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "run", "--", sys.executable, prog)
    assert doc["errors"][0]["category"] == "stdin_eof" and doc["verdict"]["kind"] == "needs_input", doc["errors"]


def test_stdin_file_is_given_to_every_run_and_kept_in_the_commands(tmp_path):
    inp = tmp_path / "in.txt"
    inp.write_text("41\n")
    out = tmp_path / "run"
    doc, p = run_json("triage", "--no-tlparse", "--stdin", inp, "--out", out, "--", sys.executable,
                      program("ask_number.py"))
    assert p.returncode == 0 and doc["status"] == "clean", p.stdout[-2000:]
    assert (out / "target.stdout").read_text().strip().endswith("[42.0, 42.0]")
    cmds = [s["command"] for s in doc["next_steps"] if s.get("command")]
    assert cmds and all(f"--stdin {inp} " in c for c in cmds), cmds
    p = run_cli("triage", "--stdin", tmp_path / "nope.txt", "--", sys.executable, program("ask_number.py"))
    assert p.returncode == 2 and "--stdin" in p.stderr and "no such file" in p.stderr, p.stderr


def test_ctrl_c_writes_the_report_of_what_it_saw(tmp_path):
    """Ctrl-C after the program compiled (with a graph break) and while it sleeps: exit 130, one line
    naming the report, and report.md/json list the break and the compile time seen so far."""
    out = tmp_path / "run"
    env = dict(os.environ, PYTHONUNBUFFERED="1")

    def compiled():
        try:
            return "compiled" in (out / "target.stdout").read_text()
        except OSError:
            return False
    p, took = interrupt_when([sys.executable, CLI, "triage", "--no-tlparse", "--out", str(out), "--",
                              sys.executable, program("cmd_slow.py")], compiled, env=env, exit_within=60)
    assert p.returncode == 130, (p.stdout[-2000:], p.stderr[-2000:])
    ours = [ln for ln in p.stderr.splitlines() if ln.strip() and not ln.startswith("[compile-debug]")]
    assert len(ours) == 1 and "interrupted" in ours[0] and str(out / "report.md") in ours[0], p.stderr
    md = (out / "report.md").read_text()
    doc = json.loads((out / "report.json").read_text())
    assert md.startswith("# torch.compile triage (interrupted after ") and "INTERRUPTED (Ctrl-C)" in md, md[:400]
    assert doc["interrupted"] and doc["status"] == "interrupted" and doc["exit_code"] is None and not doc["errors"], doc["errors"]
    assert [b["location"]["line"] for b in doc["graph_breaks"]] == [11], doc["graph_breaks"]
    assert "cmd_slow.py:11" in md and doc["stats"]["compile_time_s"] > 0
    assert "compiles cleanly" not in md and "run it to the end" in md
    _wait_gone(tagged_alive(str(out)), within=5)
    assert tagged_alive(str(out)) == [], "processes of the run survived Ctrl-C"


@pytest.mark.slow
def test_ctrl_c_multirank_writes_the_report(tmp_path):
    out = tmp_path / "run"
    env = dict(os.environ, PYTHONUNBUFFERED="1")

    def both_compiled():   # each rank's trace has a finished compile
        n = 0
        for r in (0, 1):
            d = out / "trace" / f"rank_{r}"
            if d.is_dir() and any("compilation_metrics" in f.read_text(errors="replace") for f in d.glob("*.log")):
                n += 1
        return n == 2
    p, took = interrupt_when([sys.executable, CLI, "triage", "--no-tlparse", "--out", str(out), "--nproc", "2",
                              "--", program("mr_hang.py")], both_compiled, env=env, exit_within=60)
    assert p.returncode == 130, (p.stdout[-2000:], p.stderr[-2000:])
    doc = json.loads((out / "report.json").read_text())
    md = (out / "report.md").read_text()
    assert doc["status"] == "interrupted" and doc["interrupted"], doc["status"]
    assert "INTERRUPTED after" in md.splitlines()[0], md[:300]
    assert all(r["report"]["stats"]["graphs"] >= 1 for r in doc["ranks"]), [r["report"]["stats"] for r in doc["ranks"]]
    _wait_gone(tagged_alive(str(out)), within=5)
    assert tagged_alive(str(out)) == [], "processes of the run survived Ctrl-C"
