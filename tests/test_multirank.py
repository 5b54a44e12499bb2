"""triage --nproc N: the script under torchrun (gloo on CPU, 2 ranks), per-rank reports and the
divergence between ranks; a hang killed at the timeout with no rank left behind; bad inputs.
Plus unit tests of the parsers on synthetic input, and one GPU test (2 GPUs, NCCL)."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import warnings

import pytest

from conftest import CLI, program, run_cli, run_json

from cdlib.decide import analyze_multirank
from cdlib.read import frames
from cdlib.run import multirank_launch

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="torchrun + /proc bookkeeping: Linux only")


def _line_of(path, needle):
    with open(path) as f:
        for i, ln in enumerate(f, 1):
            if needle in ln:
                return i
    raise AssertionError(f"{needle!r} not in {path}")


def _procs_mentioning(text):
    """pids of live processes (not zombies) whose command line contains text."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().decode("utf-8", "replace")
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text in cmd and state != "Z":
            out.append(int(pid))
    return out


def _by_rank(res):
    return {r["rank"]: r for r in res["ranks"]}


def _why_error(res):
    """What a launch that ended in status error says about itself: the launcher's exit and error, each
    rank's status and exit code and its last stderr lines."""
    lines = [f"launcher exit {res.get('launcher_exit_code')}: {res.get('launcher_error')}"]
    for r in res.get("ranks", []):
        tail = ""
        if r.get("stderr") and os.path.exists(r["stderr"]):
            tail = " | ".join(open(r["stderr"], errors="replace").read().strip().splitlines()[-4:])
        lines.append(f"rank {r['rank']}: {r['status']} exit {r.get('exit_code')}: {tail[-600:]}")
    return "\n".join(lines)


def launch_ok(out, *args, timeout=300):
    """run_json("triage", ... "--out", out, ...) for a launch that should finish: a launch that ends in
    status error (gloo or torchrun failing under load: seen once in 20 CI runs, not reproduced in 20 local
    launches beside each other) is retried once, with a warning that says why, and its reasons are in the
    assertion when the retry fails too."""
    res, p = run_json("triage", *args[:args.index("--")], "--out", out, *args[args.index("--"):], timeout=timeout)
    assert p.returncode == 0, p.stderr[-2000:]
    if res["status"] == "error":
        why = _why_error(res)
        warnings.warn(f"multi-rank launch ended in error, retrying once:\n{why}")
        shutil.rmtree(out)
        res, p = run_json("triage", *args[:args.index("--")], "--out", out, *args[args.index("--"):], timeout=timeout)
        assert p.returncode == 0, p.stderr[-2000:]
        assert res["status"] != "error", f"{why}\nretry:\n{_why_error(res)}"
    return res, p


# ---- end to end on CPU (gloo) -------------------------------------------------------------

def test_device_index_is_not_a_divergence():
    """On GPUs each rank's graph names its own device (seen on 2 H200s: 'ranks traced different graphs'
    for identical DDP ranks); the graph hash leaves the device index out, and nothing else."""
    from cdlib.decide.analyze_multirank import same_on_every_rank
    rank = lambda i, op="relu": (f"l_x_: \"f32[8, 16][16, 1]cuda:{i}\" = L_x_\n"
                                 f"ones = torch.ones(3, device=device(type='cuda', index={i}))\n"
                                 f"y = torch.{op}(l_x_)")
    assert same_on_every_rank(rank(0)) == same_on_every_rank(rank(1))
    assert same_on_every_rank(rank(0)) != same_on_every_rank(rank(1, "sigmoid"))
    assert same_on_every_rank("f32[4]cpu") == "f32[4]cpu"


def test_identical_ranks_no_divergence(tmp_path):
    out = tmp_path / "run"
    res, p = launch_ok(out, "--nproc", "2", "--timeout", "240", "--", program("mr_same.py"))
    assert p.returncode == 0, p.stderr[-2000:]
    assert res["status"] == "clean", res["divergence"]["summary"]
    assert res["nproc"] == 2 and not res["timed_out"] and res["hang"] is None
    ranks = _by_rank(res)
    assert sorted(ranks) == [0, 1]
    for r in (0, 1):
        assert ranks[r]["status"] == "ok" and ranks[r]["exit_code"] == 0
        rep = ranks[r]["report"]
        assert rep["schema"] == "compile-debug/triage/1" and rep["stats"]["graphs"] == 1
        assert not rep["graph_breaks"] and not rep["errors"]
        files = os.listdir(out / "trace" / f"rank_{r}")
        assert any(f.startswith(f"dedicated_log_torch_trace_rank_{r}_") for f in files), files
        assert os.path.exists(out / f"rank_{r}" / "report.md")
        assert "loss=" in open(ranks[r]["stdout"]).read()
    div = res["divergence"]
    assert div["divergent"] is False and div["summary"] == []
    assert div["graphs"]["per_rank"] == {"0": 1, "1": 1}
    assert not div["graphs"]["different_graphs"] and not div["graph_breaks"] and not div["recompiles"]
    assert set(div["compile_time"]["per_rank_s"]) == {"0", "1"}
    md = (out / "report.md").read_text()
    assert "no divergence between ranks" in md and "| 1 | exit 0 |" in md
    # what each rank printed last is in the report (blind A/B batch 31: a rank's parity check said nothing there)
    said = md.split("What the ranks printed last", 1)[1]
    assert "- rank 0:\n  `rank 0 loss=" in said and "- rank 1:\n  `rank 1 loss=" in said, md
    if res["artifacts"].get("tlparse"):  # tlparse --all-ranks-html over both ranks
        assert os.path.exists(out / "tlparse" / "rank_0") and os.path.exists(out / "tlparse" / "rank_1")


def test_graph_break_on_one_rank(tmp_path):
    out = tmp_path / "run"
    prog = program("mr_break.py")
    res, p = launch_ok(out, "--nproc", "2", "--no-tlparse", "--timeout", "240", "--", prog)
    assert res["status"] == "divergent"
    div = res["divergence"]
    assert div["divergent"]
    line = _line_of(prog, "if y.sum() > 0:")
    [gb] = div["graph_breaks"]
    assert gb["site"] == f"{prog}:{line}" and gb["ranks"] == [1] and gb["missing_on"] == [0]
    assert gb["gb_id"] == "GB0170" and gb["counts"] == {"1": 1}
    assert div["graphs"]["per_rank"] == {"0": 1, "1": 2}
    assert any(o["missing_on"] == [0] for o in div["graphs"]["only_on_some_ranks"])
    ranks = _by_rank(res)
    assert not ranks[0]["report"]["graph_breaks"] and len(ranks[1]["report"]["graph_breaks"]) == 1
    md = (out / "report.md").read_text()
    assert "ranks DIVERGE" in md and f"mr_break.py:{line}" in md and "NOT on rank(s) 0" in md
    # the same from the recorded traces (no launch): rank_<N>/ dirs, and a flat dir of rank files
    flat = tmp_path / "flat"
    flat.mkdir()
    for r in (0, 1):
        for fn in os.listdir(out / "trace" / f"rank_{r}"):
            shutil.copy(out / "trace" / f"rank_{r}" / fn, flat / fn)
    for src in (out / "trace", flat):
        rec, p = run_json("triage", "--nproc", "2", "--no-tlparse", "--trace", src, "--out", tmp_path / f"rec_{src.name}",
                          timeout=120)
        assert p.returncode == 0, p.stderr[-2000:]
        assert rec["mode"] == "recorded" and rec["status"] == "divergent"
        assert [(g["site"], g["ranks"]) for g in rec["divergence"]["graph_breaks"]] == [(gb["site"], [1])]
        assert rec["divergence"]["graphs"]["per_rank"] == {"0": 1, "1": 2}
    # compare takes multi-rank run dirs: rank by rank (the launched run vs its recorded traces)
    cmp, p = run_json("compare", out, tmp_path / "rec_trace", timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    assert cmp["nproc"] == 2 and set(cmp["ranks"]) == {"0", "1"}
    assert len(cmp["ranks"]["1"]["graph_breaks"]["still"]) == 1 and not cmp["ranks"]["1"]["graph_breaks"]["new"]
    assert not cmp["ranks"]["0"]["graph_breaks"]["still"]


def test_recompile_on_one_rank(tmp_path):
    """Launched as the user's own torchrun command (blind A/B batch 14: the agent read --help to find
    --nproc): triage runs it as --nproc 2."""
    out = tmp_path / "run"
    res, p = launch_ok(out, "--no-tlparse", "--timeout", "240", "--",
                       "torchrun", "--nproc_per_node", "2", program("mr_recompile.py"))
    assert p.returncode == 0, p.stderr[-2000:]
    assert "running it as triage --nproc 2" in p.stderr and len(res["ranks"]) == 2
    assert res["status"] == "divergent"
    [rc] = res["divergence"]["recompiles"]
    assert rc["function"] == "step" and rc["recompiles_per_rank"] == {"0": 0, "1": 1}
    reason = rc["per_rank"]["1"]["reasons"][0]
    assert reason["kind"] == "shape" and "size mismatch" in reason["guard"] and reason["compile_id"] == "0/1"
    assert res["divergence"]["graphs"]["per_rank"] == {"0": 1, "1": 2}
    md = (out / "report.md").read_text()
    assert "Recompiles of **step**" in md and "rank 1 0/1" in md


def test_one_rank_fails_root_cause(tmp_path):
    out = tmp_path / "run"
    prog = program("mr_fail.py")
    res, p = run_json("triage", "--nproc", "2", "--no-tlparse", "--timeout", "240", "--out", out, "--", prog,
                      timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert res["status"] == "error" and res["first_failed_rank"] == 1
    ranks = _by_rank(res)
    err = ranks[1]["report"]["errors"][0]
    assert ranks[1]["status"] == "failed" and err["category"] == "graph_break_fullgraph"
    assert err["location"]["line"] == _line_of(prog, 'print("debug", y)')
    assert ranks[0]["consequence_of_rank"] == 1           # rank 0 only saw its peer vanish
    [gb] = res["divergence"]["graph_breaks"]
    assert gb["ranks"] == [1] and gb["gb_id"] == "GB0059"
    assert 1 in res["divergence"]["failed_ranks"]
    # the eager check: the same job without torch.compile runs through (print() is fine eagerly)
    assert ranks[1]["verdict"]["kind"] == "compile_only" and ranks[0]["verdict"] is None
    assert {k: v["status"] for k, v in res["eager_check"]["ranks"].items()} == {"0": "ok", "1": "ok"}
    md = (out / "report.md").read_text()
    assert "Verdict: only fails compiled" in md and "rank 1 first: only fails compiled" in md
    # rank 0 either saw the connection drop (its error is tagged) or torchrun stopped it first
    assert "rank 1 (FAILED FIRST: root cause)" in md
    assert "consequence of rank 1" in md or "Ranks stopped by torchrun after rank 1 failed" in md
    assert _procs_mentioning(str(out)) == []


def test_a_peer_killed_while_printing_its_error_is_a_consequence():
    """The race CI lost (stop 32): rank 1 SIGKILLed, rank 0 fails in the all-reduce but torchrun stops it
    while its traceback is half written, so its report has only "exit 1" and a last line. That is no
    cause of its own: rank 0 is rank 1's consequence, as when the gloo message made it out."""
    from types import SimpleNamespace as NS
    def rank(n, status, code, end, errors):
        return {"rank": n, "status": status, "exit_code": code, "_end": end, "_rep": NS(errors=errors)}
    err = lambda t, m: NS(type=t, message=m)
    for r0_errors in ([err("exit 1", "  File \"train.py\", line 20, in <module>")],
                      [err("RuntimeError", "[gloo/transport/tcp/pair.cc:561] Connection closed by peer [127.0.0.1]:1")],
                      []):
        ranks = [rank(0, "failed", 1, 100.0, r0_errors), rank(1, "killed", -9, None, [err("SIGKILL", "killed")])]
        assert analyze_multirank.root_cause(ranks, launcher_root=1) == (1, [0]), r0_errors
    # a rank with an exception of its own is not folded into the peer's failure
    ranks = [rank(0, "failed", 1, 100.0, [err("ValueError", "bad shard")]),
             rank(1, "killed", -9, None, [err("SIGKILL", "killed")])]
    assert analyze_multirank.root_cause(ranks, launcher_root=1) == (1, [])


def test_rank_killed_by_signal_is_root_cause(tmp_path):
    out = tmp_path / "run"
    res, p = run_json("triage", "--nproc", "2", "--no-tlparse", "--no-eager-check", "--timeout", "240", "--out", out,
                      "--", program("mr_sigkill.py"), timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    ranks = _by_rank(res)
    assert res["eager_check"] is None and ranks[1]["verdict"]["kind"] == "not_checked"   # --no-eager-check
    assert not os.path.exists(out / "eager_check")
    assert res["status"] == "error" and res["first_failed_rank"] == 1
    assert ranks[1]["status"] == "killed" and ranks[1]["exit_code"] == -9
    assert ranks[1]["report"]["errors"][0]["type"] == "SIGKILL"
    assert ranks[0]["consequence_of_rank"] == 1
    md = (out / "report.md").read_text()
    assert "rank 1 (FAILED FIRST: root cause)" in md and "OOM killer" in md


def test_hang_reported_and_no_rank_survives(tmp_path):
    prog = program("mr_hang.py")
    # 45 s is plenty on an idle machine; on a loaded one a rank may still be importing torch or compiling
    # when the timeout fires (it never reached the hang). Only then run once more with a longer timeout.
    for limit in (45, 150):
        out = tmp_path / f"run{limit}"
        t0 = time.monotonic()
        res, p = run_json("triage", "--nproc", "2", "--no-tlparse", "--timeout", str(limit), "--out", out, "--",
                          prog, timeout=limit + 155)
        took = time.monotonic() - t0
        per = (res.get("hang") or {}).get("per_rank", {})
        if not any(r.get("last_event") is None or r.get("open_compiles") for r in per.values()):
            break
    assert p.returncode == 0, p.stderr[-2000:]
    assert took < limit + 75, took
    assert res["status"] == "timeout" and res["timed_out"]
    assert res["surviving_ranks"] == []
    assert _procs_mentioning(str(out)) == [], "a rank or torchrun survived the timeout"
    hang = res["hang"]
    assert hang["ranks"] == [0, 1] and hang["stacks_dumped"] == [0, 1]
    r0, r1 = hang["per_rank"]["0"], hang["per_rank"]["1"]
    assert r0["state"] == "waiting_collective" and r0["detail"] == "barrier"
    assert r0["user_location"]["line"] == _line_of(prog, "dist.barrier()")
    assert r1["state"] == "running_compiled"          # blocked in the all_reduce traced into its graph
    assert r0["open_compiles"] == [] and r1["last_event"]["event"] == "compilation_metrics"
    [coll] = res["divergence"]["collectives"]
    assert coll["ops_per_rank"] == {"0": [], "1": ["all_reduce"]}
    assert res["divergence"]["timed_out_ranks"] == [0, 1]
    md = (out / "report.md").read_text()
    assert "HANG" in md and "waiting in collective `barrier`" in md and "COMPILED GRAPH" in md


def test_collective_timeout_while_peer_compiles(tmp_path):
    """The issue's case: a collective waits on a rank that recompiled and is still compiling; the
    job's own collective timeout (8 s) fires on rank 0, torchrun stops rank 1 (its stack is dumped)."""
    out = tmp_path / "run"
    prog = program("mr_slow_recompile.py")
    res, p = run_json("triage", "--nproc", "2", "--no-tlparse", "--timeout", "200", "--out", out, "--", prog,
                      env={"MR_PG_TIMEOUT": "8"}, timeout=260)
    assert p.returncode == 0, p.stderr[-2000:]
    assert res["status"] == "error" and not res["timed_out"]
    assert res["surviving_ranks"] == [] and _procs_mentioning(str(out)) == []
    ranks = _by_rank(res)
    assert res["first_failed_rank"] == 0 and ranks[0]["collective_timeout"] and ranks[0]["status"] == "failed"
    assert ranks[1]["status"] == "killed" and ranks[1]["report"]["errors"] == []
    st = ranks[1]["state_when_killed"]
    assert st["state"] == "compiling"
    [oc] = st["open_compiles"]
    assert oc["compile_id"] == "0/1" and oc["running_s"] and oc["running_s"] > 1
    [rc] = res["divergence"]["recompiles"]
    assert rc["recompiles_per_rank"] == {"0": 0, "1": 1}
    assert rc["per_rank"]["1"]["reasons"][0]["guard"] == "micro_steps == 10"
    ct = res["divergence"]["compile_time"]
    assert ct["still_compiling"] == [1] and ct["slowest_rank"] == 1 and ct["significant"]
    assert "collective timed out waiting for rank(s) 1" in res["next_steps"][0]["why"]
    # without torch.compile rank 1 does not recompile, so rank 0 does not wait: only fails compiled
    assert ranks[0]["verdict"]["kind"] == "compile_only", ranks[0]["verdict"]
    md = (out / "report.md").read_text()
    assert "TIMED OUT waiting for them" in md and "still COMPILING" in md and "compile 0/1 (step) started" in md


# ---- DDP / FSDP2 training scripts (gloo): the eager verdict per rank, the wrappers' own breaks --

def _wrapper_breaks(rep, wid):
    return [b for b in rep["graph_breaks"] if (b["fix"].get("wrapper") or {}).get("id") == wid]


def _fix_steps(res):
    return [s["why"] for s in res["next_steps"] if "fix graph break" in s["why"] or "graph break at" in s["why"]]


def test_ddp_one_rank_bad_shard(tmp_path):
    """The issue's script: DDP wrapped in torch.compile, rank 1's shard has 12 features instead of 16.
    Rank 1 fails first at the user's line and fails the same way without torch.compile; rank 0 only
    lost its peer; DDP's own graph breaks are labelled as DDP's and are not in Next."""
    out = tmp_path / "run"
    prog = program("mr_ddp_train.py")
    res, p = run_json("triage", "--nproc", "2", "--no-tlparse", "--timeout", "240", "--out", out, "--",
                      sys.executable, prog, "--bad-rank", "1", timeout=560)
    assert p.returncode == 0, p.stderr[-2000:]
    assert res["status"] == "error" and res["first_failed_rank"] == 1
    ranks = _by_rank(res)
    err = ranks[1]["report"]["errors"][0]
    assert err["category"] == "shape_mismatch"
    assert err["location"]["file"] == prog and err["location"]["line"] == _line_of(prog, "x = F.relu(self.fc1(x))")
    v = ranks[1]["verdict"]
    assert v["kind"] == "fails_eager_too" and v["location"].endswith(f"mr_ddp_train.py:{err['location']['line']}"), v
    assert "fails the same way without torch.compile" in v["summary"]
    assert ranks[0]["consequence_of_rank"] == 1 or ranks[0]["status"] == "killed"
    assert ranks[0]["verdict"] is None                       # its error is the lost peer: no verdict of its own
    ec = res["eager_check"]
    assert ec["ranks"]["1"]["status"] == "failed" and os.path.isdir(ec["run_dir"])
    assert "mat1 and mat2 shapes cannot be multiplied (32x12 and 16x512)" in open(ec["ranks"]["1"]["stderr"]).read()
    # DDP's own breaks (contextlib skip in _run_ddp_forward, the C++ logger in _pre_forward): labelled, not Next
    for r in (0, 1):
        ddp = _wrapper_breaks(ranks[r]["report"], "ddp")
        assert {b["gb_id"] for b in ddp} == {"GB0007", "GB0156"}, ranks[r]["report"]["graph_breaks"]
        assert all(b["category"] == "DDP internals (expected)" and
                   b["fix"]["wrapper"]["frame"].startswith("torch/nn/parallel/distributed.py:") for b in ddp)
        assert len(ddp) == len(ranks[r]["report"]["graph_breaks"])
    assert _fix_steps(res) == [], res["next_steps"]
    first = res["next_steps"][0]["why"]
    assert first.startswith("rank 1: fix your program at") and "no compiler bisect" in first, first
    md = (out / "report.md").read_text()
    assert "rank 1 first: a bug in the program (fails the same way without torch.compile)" in md
    assert "Verdict: fails the same way without torch.compile: a bug in your program at" in md
    assert "2 graph breaks inside DDP (DistributedDataParallel), not in your code" in md
    assert "fix graph break" not in md.split("## Next")[1]
    assert _procs_mentioning(str(out)) == []
    for r in res["ranks"]:   # rank 1's steps were rebuilt by the eager check: still this launch
        rmd = (out / f"rank_{r['rank']}" / "report.md").read_text()
        assert " --vs-eager " not in rmd and "triage --nproc 2 --nproc" not in rmd, rmd


def test_a_ranks_steps_are_this_launch_and_never_vs_eager():
    """A rank's `triage -- prog` becomes `triage --nproc 2 -- prog` once (as_rank_launch runs again after the
    eager check), and a `triage --vs-eager` step goes: it runs one process (blind A/B batch 23)."""
    from types import SimpleNamespace
    from cdlib.decide import multirank
    t = "python3 train.py"
    rep = SimpleNamespace(errors=[SimpleNamespace(next_command=f"python3 cd.py triage --nproc <N> -- {t}")],
                          next_steps=[{"command": f"python3 cd.py triage --vs-eager -- {t}", "why": "a"},
                                      {"command": f"python3 cd.py triage --no-tlparse -- {t}", "why": "b"},
                                      {"command": None, "why": "c"}])
    for _ in range(2):
        multirank.as_rank_launch(rep, t, 2, [])
    assert rep.errors[0].next_command == f"python3 cd.py triage --nproc 2 -- {t}"
    assert [x["command"] for x in rep.next_steps] == [f"python3 cd.py triage --nproc 2 --no-tlparse -- {t}", None]


def test_ddp_clean_breaks_are_ddps_and_the_inner_compile_has_none(tmp_path):
    """A clean DDP run: the only breaks are DDP's own (labelled, nothing for the user to fix), the DDP
    optimizer's graph splits are reported as splits; the setup the report recommends (compile the inner
    module, then wrap it) has no break at all, measured."""
    prog = program("mr_ddp_train.py")
    res, p = launch_ok(tmp_path / "outer", "--nproc", "2", "--no-tlparse", "--timeout", "240", "--",
                       prog, "--bucket-cap-mb", "1")
    assert p.returncode == 0, p.stderr[-2000:]
    assert res["status"] == "issues" and not res["divergence"]["divergent"], res["divergence"]["summary"]
    assert res["eager_check"] is None                       # nothing failed: no re-run
    for r in res["ranks"]:
        assert len(_wrapper_breaks(r["report"], "ddp")) == len(r["report"]["graph_breaks"]) == 2
        [(cid, pieces)] = r["facts"]["ddp_splits"].items()   # the DDP optimizer split the model's graph
        assert len(pieces) >= 2, r["facts"]["ddp_splits"]
    assert _fix_steps(res) == [] and "DDP (DistributedDataParallel)'s own" in res["next_steps"][0]["why"]
    md = (tmp_path / "outer" / "report.md").read_text()
    assert "## DDP optimizer (graph splits, not graph breaks)" in md and "torch._dynamo.config.optimize_ddp" in md
    res, p = launch_ok(tmp_path / "inner", "--nproc", "2", "--no-tlparse", "--timeout", "240", "--",
                       prog, "--bucket-cap-mb", "1", "--wrap", "inner")
    assert p.returncode == 0, p.stderr[-2000:]
    assert res["status"] == "clean"
    for r in res["ranks"]:
        assert r["report"]["graph_breaks"] == [] and len(next(iter(r["facts"]["ddp_splits"].values()))) >= 2


def test_fsdp2_hook_breaks_labelled(tmp_path):
    """FSDP2 (fully_shard) runs on CPU gloo in torch 2.14.1. torch.compile over the sharded model breaks
    at each block's FSDP hooks (labelled FSDP2's; the block's recompile is labelled as split by them);
    compiling each block on its own (the setup the report gives) has no break."""
    prog = program("mr_fsdp2_train.py")
    res, p = launch_ok(tmp_path / "model", "--nproc", "2", "--no-tlparse", "--timeout", "240", "--", prog)
    assert p.returncode == 0, p.stderr[-2000:]
    for r in res["ranks"]:
        rep = r["report"]
        [b] = rep["graph_breaks"]
        assert b["fix"]["wrapper"]["id"] == "fsdp2" and b["category"] == "FSDP hooks (expected)"
        assert b["fix"]["wrapper"]["frame"].startswith("torch/distributed/fsdp/")
        assert b["location"]["line"] == _line_of(prog, "x = b(x)") and b["fix"].get("frame_skipped")
        [f] = [f for f in rep["recompiles"] if f["recompiles"]]
        assert f["expected_only"] and f["wrapper"].startswith("FSDP2 (fully_shard) (its hooks break the graph at")
    assert _fix_steps(res) == [] and "FSDP2 (fully_shard)'s own" in res["next_steps"][0]["why"]
    res, p = launch_ok(tmp_path / "blocks", "--nproc", "2", "--no-tlparse", "--timeout", "240", "--",
                       prog, "--compile", "blocks")
    assert p.returncode == 0, p.stderr[-2000:]
    assert all(r["report"]["graph_breaks"] == [] for r in res["ranks"])


def test_wrapper_facts_hold_for_installed_torch():
    """Every config name and value, and every torch function the `wrappers` knowledge names, exists."""
    import re
    import torch
    import torch._dynamo.config as dconf
    from torch._dynamo.utils import _ddp_optimization_mode
    from torch.nn.parallel import DistributedDataParallel
    from cdlib.decide import knowledge
    text = " ".join(" ".join(w[k].split()) for w in knowledge.load("graph_breaks")["wrappers"]
                    for k in ("expected", "setup", "splits") if k in w)
    names = set(re.findall(r"torch\._dynamo\.config\.(\w+)", text))
    assert names == {"optimize_ddp", "compiled_autograd"} and all(hasattr(dconf, n) for n in names)
    assert dconf.optimize_ddp is True and dconf.compiled_autograd is False          # the defaults stated
    for mode in re.findall(r'"(\w+)"', text):   # the optimize_ddp modes named
        assert mode in _ddp_optimization_mode, mode
    assert "python_reducer" in text and "no_optimization" in text and "ddp_optimizer" in text
    for fn in ("_inside_ddp_forward", "_pre_forward", "_run_ddp_forward"):
        assert hasattr(DistributedDataParallel, fn)
    root = os.path.dirname(torch.__file__)
    fsdp = open(os.path.join(root, "distributed", "fsdp", "_fully_shard", "_fsdp_common.py")).read()
    assert 'reason="skipping FSDP hooks"' in fsdp
    for w in knowledge.load("graph_breaks")["wrappers"]:
        assert all(os.path.exists(os.path.join(os.path.dirname(root), p)) for p in w["paths"]), w["paths"]


@pytest.mark.slow
def test_ddp_eval_through_the_inner_module_has_no_broadcast_break(tmp_path):
    """What the DDP wrapper's setup says about evaluation (blind A/B batch 14), run under torchrun with
    TORCH_LOGS=graph_breaks: eval of torch.compile(DDP(model)) under no_grad breaks at DDP's buffer
    broadcast; the compiled inner module after one broadcast of the buffers does not."""
    from cdlib.decide import knowledge
    ddp = next(w for w in knowledge.load("graph_breaks")["wrappers"] if w["id"] == "ddp")
    assert "torch.compile(ddp.module)" in ddp["setup"] and "_broadcast_coalesced" in ddp["setup"]
    counts = {}
    for inner in ("0", "1"):
        env = dict(os.environ, EVAL_INNER=inner, TORCH_LOGS="graph_breaks", OMP_NUM_THREADS="1")
        p = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                            program("mr_ddp_eval.py")], capture_output=True, text=True, timeout=400, env=env,
                           cwd=tmp_path)
        assert p.returncode == 0, p.stderr[-2000:]
        counts[inner] = (p.stdout + p.stderr).count("_broadcast_coalesced")
    assert counts["0"] > 0 and counts["1"] == 0, counts


def test_ctrl_c_kills_every_rank(tmp_path):
    """Ctrl-C while both ranks run: the tool and every rank end within seconds, whatever the load.
    Readiness is a marker (both ranks' status files and rank 1 inside torch.compile: its trace file
    exists), not a fixed sleep; the exit is bounded (20 s) from the SIGINT, not from the start."""
    from test_bad_input import interrupt_when, tagged_alive
    out = tmp_path / "run"
    argv = [sys.executable, CLI, "triage", "--nproc", "2", "--no-tlparse", "--timeout", "600",
            "--out", str(out), "--", program("mr_slow_recompile.py")]

    def ready():
        return all(os.path.exists(out / "status" / f"rank_{r}.json") for r in (0, 1)) and \
            any(os.listdir(out / "trace" / "rank_1")) if os.path.isdir(out / "trace" / "rank_1") else False
    p, took = interrupt_when(argv, ready, ready_timeout=300, exit_within=20)
    assert p.returncode == 130, p.stderr[-1500:]
    # the report of what the ranks did until then is kept (issue 26)
    assert re.search(r": interrupted; what the ranks did in \d+ s: " + re.escape(str(out / "report.md")) + "$",
                     p.stderr.strip().splitlines()[-1]), p.stderr[-500:]
    assert json.load(open(out / "report.json"))["status"] == "interrupted"
    pids = [json.load(open(out / "status" / f"rank_{r}.json"))["pid"] for r in (0, 1)]
    assert tagged_alive(str(out)) == [] and _procs_mentioning(str(out)) == []
    for pid in pids:
        assert not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] == "Z"
    assert took < 20


def test_torchrun_fails_before_ranks(tmp_path):
    out = tmp_path / "run"
    res, p = run_json("triage", "--nproc", "2", "--no-tlparse", "--torchrun-args", "--max-restarts notanint",
                      "--out", out, "--", program("mr_same.py"), timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    assert res["status"] == "error" and "invalid int value" in res["launcher_error"]
    assert [r["status"] for r in res["ranks"]] == ["not_started", "not_started"]
    assert "torchrun FAILED before starting the ranks" in (out / "report.md").read_text()


# ---- bad input: one line, exit 2, nothing launched ----------------------------------------

@pytest.mark.parametrize("args,msg", [
    (["--nproc", "0", "--", "x.py"], "--nproc must be at least 1"),
    (["--nproc", "2"], "--nproc needs a target script"),
    (["--torchrun-args", "--max-restarts 1", "--", "x.py"], "--torchrun-args needs --nproc"),
    (["--nproc", "2", "--torchrun-args", "--nproc-per-node 4", "--", "PROG"], "is set by triage"),
    (["--nproc", "2", "--torchrun-args", "--nnodes 2", "--", "PROG"], "single-node"),
    (["--nproc", "2", "--torchrun-args", "'unbalanced", "--", "PROG"], "--torchrun-args"),
    (["--nproc", "2", "--", "no_such_script.py"], "no_such_script.py: no such file"),
    (["--nproc", "2", "--", "ls", "-l"], "runs a Python script under torchrun"),
    (["--nproc", "2", "--", "torchrun", "PROG"], "launches torchrun itself"),
    (["--nproc", "2", "--trace", "/tmp", "--", "PROG"], "compares a recorded trace"),
    (["--nproc", "2", "--trace", "/no/such/dir"], "no such file or directory"),
    (["--nproc", "2", "--from-text", "-", "--", "PROG"], "does not combine"),
    (["--nproc", "two", "--", "PROG"], "invalid int value"),
    (["--", "torchrun", "--nproc_per_node", "auto", "PROG"], "give the number of ranks"),
    (["--", "torchrun", "--nproc_per_node", "2"], "no script to run"),
    (["--", "torchrun", "--no-python", "PROG"], "run triage --nproc N"),
])
def test_bad_input(args, msg, tmp_path):
    args = [program("mr_same.py") if a == "PROG" else a for a in args]
    p = run_cli("triage", "--out", tmp_path / "run", *args, timeout=60)
    assert p.returncode == 2, (p.returncode, p.stdout[-500:], p.stderr[-500:])
    assert msg in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert not os.path.exists(tmp_path / "run" / "trace")


def test_help_mentions_nproc():
    p = run_cli("triage", "--help", timeout=60, check=0)
    assert "--nproc" in p.stdout and "--torchrun-args" in p.stdout


# ---- unit tests of the parsers (no subprocess) --------------------------------------------

def test_launcher_argv_and_python_forms(tmp_path):
    prog = program("mr_same.py")
    assert multirank_launch.script_args(["python3", prog, "--x"]) == [prog, "--x"]
    assert multirank_launch.script_args([prog]) == [prog]
    assert multirank_launch.script_args(["python", "-m", "pkg.train", "-a"]) == ["-m", "pkg.train", "-a"]
    argv = multirank_launch.launcher_argv(2, [], "/r/rank_shim.py", "/r", [prog])
    assert argv[1:5] == ["-m", "torch.distributed.run", "--nproc-per-node", "2"] and "--standalone" in argv
    argv = multirank_launch.launcher_argv(2, ["--master-port", "29555"], "/r/rank_shim.py", "/r", [prog])
    assert "--standalone" not in argv and argv[-2:] == ["/r", prog]


def test_a_torchrun_target_is_read_as_nproc():
    t = multirank_launch.torchrun_target
    assert t(["torchrun", "--nproc_per_node", "2", "train.py", "--compile"]) == (2, [], ["train.py", "--compile"])
    assert t(["torchrun", "--standalone", "--nproc-per-node=4", "--master_port", "29501", "--tee", "3", "-m",
              "pkg.train", "--x"]) == (4, ["--standalone", "--master_port=29501"], ["-m", "pkg.train", "--x"])
    assert t(["python3", "-m", "torch.distributed.run", "--nproc_per_node=2", "a.py"]) == (2, [], ["a.py"])
    assert t(["/venv/bin/torchrun", "a.py"]) == (1, [], ["a.py"])
    assert t(["python", "train.py"]) is None and t(["python", "-m", "pkg.train"]) is None
    # flags without a value (review): --use_env does not swallow the next option
    assert t(["python", "-m", "torch.distributed.launch", "--use_env", "--nproc_per_node", "2", "a.py"]) == (2, [], ["a.py"])
    assert t(["torchrun", "--virtual-local-rank", "--nproc-per-node", "2", "a.py"])[:2] == (2, ["--virtual-local-rank"])
    with pytest.raises(Exception, match="--local_rank"):
        t(["python", "-m", "torch.distributed.launch", "--nproc_per_node", "2", "a.py"])


def test_strip_prefix_and_exit_codes():
    assert frames.strip_rank_prefix("[rank1]: Traceback\n[rank1]:   File \"x\"") == 'Traceback\n  File "x"'
    text = """Root Cause (first observed failure):
[0]:
  time      : 2026-11-23_01:22:10
  host      : h
  rank      : 1 (local_rank: 1)
  exitcode  : -6 (pid: 123)"""
    assert analyze_multirank.torchrun_exit_codes(text) == {1: -6}


STACK = '''Thread 0x00007f00 (most recent call first):
  File "/usr/lib/python3.11/threading.py", line 320 in wait

Current thread 0x00007f01 (most recent call first):
  File "/site-packages/torch/distributed/c10d_logger.py", line 81 in wrapper
  File "/site-packages/torch/distributed/distributed_c10d.py", line 4900 in barrier
  File "/home/u/train.py", line 40 in main
  File "/run/rank_shim.py", line 27 in <module>
'''
STACK_COMPILING = '''Current thread 0x00007f01 (most recent call first):
  File "/site-packages/torch/_inductor/codecache.py", line 100 in load
  File "/site-packages/torch/_inductor/compile_fx.py", line 900 in compile_fx
  File "/site-packages/torch/_dynamo/convert_frame.py", line 1000 in _compile
  File "/site-packages/torch/_dynamo/eval_frame.py", line 1261 in compile_wrapper
  File "/home/u/train.py", line 30 in step
  File "/run/rank_shim.py", line 27 in <module>
'''


STACK_IMPORTING = '''Current thread 0x00007f01 (most recent call first):
  File "/site-packages/networkx/algorithms/generators.py", line 217 in <module>
  File "<frozen importlib._bootstrap>", line 241 in _call_with_frames_removed
  File "/site-packages/torch/_dynamo/__init__.py", line 3 in <module>
  File "<frozen importlib._bootstrap>", line 241 in _call_with_frames_removed
  File "/home/u/train.py", line 13 in <module>
  File "/run/rank_shim.py", line 27 in <module>
'''


def test_classify_stacks():
    frames = analyze_multirank.parse_stack_dump(STACK, "/run/rank_shim.py")
    assert frames[0][2] == "wrapper" and len(frames) == 4
    state, detail, uloc = analyze_multirank.classify_stack(frames, "/run/rank_shim.py")
    assert (state, detail, uloc["line"]) == ("waiting_collective", "barrier", 40)
    state, detail, uloc = analyze_multirank.classify_stack(analyze_multirank.parse_stack_dump(STACK_COMPILING), "/run/rank_shim.py")
    assert state == "compiling" and uloc["line"] == 30
    assert analyze_multirank.classify_stack([], None) == (None, None, None)
    state, detail, uloc = analyze_multirank.classify_stack(analyze_multirank.parse_stack_dump(STACK_IMPORTING), "/run/rank_shim.py")
    assert (state, detail, uloc["line"]) == ("importing", "networkx/algorithms/generators.py", 13)


def _rank(r, graphs, breaks=(), recompiles=(), ct=0.1, status="ok", hashes=None):
    return {"rank": r, "status": status,
            "report": {"stats": {"graphs": len(graphs), "compile_time_s": ct}, "graphs": graphs,
                       "graph_breaks": list(breaks), "recompiles": list(recompiles)},
            "facts": {"graph_hashes": hashes or {g["compile_id"]: "h" for g in graphs}, "collectives": {}}}


def test_divergence_synthetic():
    g0 = {"compile_id": "0/0", "function": "f", "location": {"file": "a.py", "line": 3}, "ops": 2}
    same = analyze_multirank.divergence([_rank(0, [g0]), _rank(1, [g0], ct=0.15)])
    assert not same["divergent"] and same["summary"] == []
    # compile-time skew alone counts when large
    slow = analyze_multirank.divergence([_rank(0, [g0], ct=0.5), _rank(1, [g0], ct=30.0)])
    assert slow["divergent"] and slow["compile_time"]["significant"] and slow["compile_time"]["slowest_rank"] == 1
    # same compile id, different graph
    d = analyze_multirank.divergence([_rank(0, [g0], hashes={"0/0": "a"}), _rank(1, [g0], hashes={"0/0": "b"})])
    assert d["divergent"] and d["graphs"]["different_graphs"][0]["compile_id"] == "0/0"
    # ... and nothing else differs (blind A/B batch 23: a rank index baked into each rank's graph): rank-specialized
    assert d["rank_specialized"] and "indexes or branches on the rank" in d["summary"][-1]
    d = analyze_multirank.divergence([_rank(0, [g0], hashes={"0/0": "a"}), _rank(1, [g0], hashes={"0/0": "b"},
                                                                              status="failed")])
    assert not d["rank_specialized"]
    # one rank failed
    d = analyze_multirank.divergence([_rank(0, [g0]), _rank(1, [g0], status="failed")])
    assert d["divergent"] and d["failed_ranks"] == [1]


# ---- GPU: real NCCL collectives under torch.compile (Inductor) on 2 GPUs ------------------

def _gpus():
    try:
        import torch
        return torch.cuda.device_count() if torch.cuda.is_available() else 0
    except Exception:
        return 0


@pytest.mark.gpu
@pytest.mark.skipif(_gpus() < 2, reason="needs 2 CUDA GPUs")
def test_gpu_nccl_divergence(tmp_path):
    env = {"MR_DEVICE": "cuda", "MR_BACKEND": "inductor"}
    prog = program("mr_break.py")
    res, p = run_json("triage", "--nproc", "2", "--timeout", "400", "--out", tmp_path / "brk", "--", prog,
                      env=env, timeout=500)
    assert p.returncode == 0, p.stderr[-2000:]
    assert res["status"] == "divergent", res["divergence"]["summary"]
    [gb] = res["divergence"]["graph_breaks"]
    assert gb["ranks"] == [1] and gb["site"] == f"{prog}:{_line_of(prog, 'if y.sum() > 0:')}"
    # recompile on one rank, NCCL
    res, p = run_json("triage", "--nproc", "2", "--no-tlparse", "--timeout", "400", "--out", tmp_path / "rc", "--",
                      program("mr_recompile.py"), env=env, timeout=500)
    assert p.returncode == 0 and res["divergence"]["recompiles"][0]["recompiles_per_rank"] == {"0": 0, "1": 1}
    # collectives differ between ranks: NCCL either hangs (killed at the timeout) or fails; both reported
    out = tmp_path / "hang"
    res, p = run_json("triage", "--nproc", "2", "--no-tlparse", "--timeout", "150", "--out", out, "--",
                      program("mr_hang.py"), env=env, timeout=400)
    assert p.returncode == 0, p.stderr[-2000:]
    assert res["status"] in ("timeout", "error")
    assert res["surviving_ranks"] == [] and _procs_mentioning(str(out)) == []
    assert any(c["ops_per_rank"].get("1") for c in res["divergence"]["collectives"]), res["divergence"]
    if res["timed_out"]:
        assert res["hang"]["ranks"] and res["hang"]["per_rank"]


@pytest.mark.gpu
@pytest.mark.skipif(_gpus() < 2, reason="needs 2 CUDA GPUs")
def test_gpu_nccl_ddp_bad_shard(tmp_path):
    """The DDP script on 2 GPUs (NCCL, Inductor): rank 1's shape error, its verdict from the eager re-run,
    DDP's own breaks labelled and kept out of Next."""
    env = {"MR_DEVICE": "cuda", "MR_BACKEND": "inductor"}
    prog = program("mr_ddp_train.py")
    out = tmp_path / "bad"
    res, p = run_json("triage", "--nproc", "2", "--no-tlparse", "--timeout", "400", "--out", out, "--",
                      prog, "--bad-rank", "1", env=env, timeout=900)
    assert p.returncode == 0, p.stderr[-2000:]
    assert res["status"] == "error" and res["first_failed_rank"] == 1
    ranks = _by_rank(res)
    assert ranks[1]["report"]["errors"][0]["location"]["line"] == _line_of(prog, "x = F.relu(self.fc1(x))")
    assert ranks[1]["verdict"]["kind"] == "fails_eager_too", ranks[1]["verdict"]
    assert ranks[0]["verdict"] is None
    assert _fix_steps(res) == [], res["next_steps"]
    assert res["surviving_ranks"] == [] and _procs_mentioning(str(out)) == []
    res, p = run_json("triage", "--nproc", "2", "--no-tlparse", "--timeout", "400", "--out", tmp_path / "ok", "--",
                      prog, env=env, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert res["status"] in ("issues", "clean"), res["divergence"]["summary"]
    for r in res["ranks"]:
        assert all(b["fix"].get("wrapper") for b in r["report"]["graph_breaks"]), r["report"]["graph_breaks"]
    assert _fix_steps(res) == []


def test_ddp_small_buckets_torch_raises_not_your_check(tmp_path):
    """A fresh DDP program (1-rank gloo group, one process): bucket_cap_mb below 1 MiB. Compiled, DDP's graph
    splitting raises torch's own AssertionError; the report said "Your check failed only when compiled" and
    offered an accuracy check, and, as one process prints "[rank0]:" before every line, it first read no
    traceback at all and blamed a module-level os.environ read. Now: raised inside torch.compile (the torch
    line), the known cause and its fix, no accuracy run, no by-design class; the fix runs (compare)."""
    prog = program("ddp_small_bucket.py")
    d, _ = run_json("triage", "--out", tmp_path / "t", "--", sys.executable, prog, check=0, timeout=600)
    assert d["verdict"]["kind"] == "compile_only", d["verdict"]
    (e,) = d["errors"]
    assert e["type"] == "AssertionError" and e["category"] == "torch_internal_error" and e["side"] == "compiler", e
    assert "torch/_dynamo/backends/distributed.py" in e["inner"]["raised_at"] and "bucket_cap_mb" in e["title"], e
    assert not d["verdict"].get("accuracy") and not d.get("semantics"), (d["verdict"], d.get("semantics"))
    assert "bucket_cap_mb >= 1" in d["next_steps"][0]["why"], d["next_steps"]
    fixed = tmp_path / "fixed.py"
    fixed.write_text(open(prog).read().replace('"BUCKET_MB", "0.25"', '"BUCKET_MB", "1"'))
    cmp_, _ = run_json("compare", tmp_path / "t", "--", sys.executable, fixed, check=0, timeout=600)
    assert cmp_["after"]["exit_code"] == 0, cmp_["after"]


def test_one_process_with_a_process_group_prints_rank_prefixed_tracebacks():
    text = ('[rank0]: Traceback (most recent call last):\n[rank0]:   File "/p/train.py", line 3, in <module>\n'
            '[rank0]:     step()\n[rank0]: ValueError: bad value\n')
    exc = frames.parse_exception(text)
    assert exc["type"] == "ValueError" and exc["message"] == "bad value" and exc["frames"][0].line == 3, exc


def test_ranks_that_recompile_for_the_same_reason_do_not_diverge():
    """Each process prints other object ids in a type guard (`___check_type_id(x, 94006869064208)`): two ranks
    that recompile for the same reason are not "recompiles on some ranks only" (blind A/B batch 24)."""
    from cdlib.decide.analyze_multirank import _same_in_every_process as same
    a = "___check_type_id(self._modules['drop_path'], 94006869064208), type=<class 'Identity'>"
    b = "___check_type_id(self._modules['drop_path'], 94234744478224), type=<class 'Identity'>"
    assert same(a) == same(b) and "<id>" in same(a)
    assert same("___check_obj_id(L['f'].__code__, 1402)") == same("___check_obj_id(L['f'].__code__, 9)")
    assert same("L['x'].size()[0] == 8") != same("L['x'].size()[0] == 9")   # a value is not an id
