"""triage of a recorded multi-rank trace (`triage --trace DIR` with per-rank files, or `--nproc N --trace
DIR`): no launch; each rank's trace analyzed (analyze.analyze) and its report written, then the ranks
compared (decide/multirank.py recorded_result) and rendered (show/views_multirank.py). No torch import."""
import json
import os
import shutil

from ..decide import analyze, multirank
from ..decide.analyze_multirank import collective_timeout, trace_facts
from ..read import trace as tracemod
from ..run import rundir
from ..run.multirank_launch import group_trace_files, run_tlparse_all
from ..errors import CliError
from ..show.views import triage_markdown
from ..show.views_multirank import multirank_markdown


def analyze_recorded(args, *, nproc, trace_path):
    """Divergence between the ranks of an existing multi-rank trace (e.g. copied from a cluster job):
    no launch, no hang facts. nproc: the number of ranks the job had (missing ones are reported)."""
    if nproc < 1:
        raise CliError("--nproc must be at least 1")
    if not os.path.exists(trace_path):
        raise CliError(f"{trace_path}: no such file or directory")
    by_rank = group_trace_files(trace_path)
    if not by_rank:
        raise CliError(f"{trace_path}: no per-rank trace files (names with rank_<N>, or rank_<N>/ dirs)")
    run_dir = rundir.make(args.out, "triage")
    ranks = []
    for r in range(max(nproc, max(by_rank) + 1)):
        files = by_rank.get(r, [])
        tdir = None
        if files:
            tdir = os.path.join(run_dir, "trace", f"rank_{r}")
            os.makedirs(tdir, exist_ok=True)
            for fn in files:
                dst = os.path.join(tdir, os.path.basename(fn))
                try:
                    os.symlink(os.path.abspath(fn), dst)
                except OSError:
                    shutil.copyfile(fn, dst)
        rep = analyze.analyze(tdir, run_dir=os.path.join(run_dir, f"rank_{r}"))
        if tdir:
            rep.artifacts["trace_dir"] = tdir
        tr = tracemod.parse(tdir) if tdir else tracemod.Trace([], {}, [])
        facts = trace_facts(tr)
        for oc in facts["open_compiles"]:
            oc["running_s"] = None
        os.makedirs(os.path.join(run_dir, f"rank_{r}"), exist_ok=True)
        rd = rep.to_dict()
        with open(os.path.join(run_dir, f"rank_{r}", "report.json"), "w") as f:
            json.dump(rd, f, indent=2, default=str)
        with open(os.path.join(run_dir, f"rank_{r}", "report.md"), "w") as f:
            f.write(triage_markdown(rep, f"rank {r}: recorded trace") + "\n")
        ranks.append({"rank": r, "status": "recorded" if files else "no_trace", "exit_code": None, "duration_s": None,
                      "pid": None, "report_status": rep.status, "hang": None, "state_when_killed": None,
                      "facts": facts, "report": rd if files else None, "_rep": rep, "stdout": None, "stderr": None,
                      "report_md": os.path.join(run_dir, f"rank_{r}", "report.md"), "consequence_of_rank": None,
                      "collective_timeout": collective_timeout(rep), "verdict": None})
    html = run_tlparse_all(run_dir, len(ranks)) if not getattr(args, "no_tlparse", False) else None
    result = multirank.recorded_result(run_dir, ranks, nproc=nproc, trace_path=trace_path, html=html)
    return result, multirank_markdown(result, [r["_rep"] for r in ranks])
