"""Markdown of a bisect result (decide/bisect_result.py builds it): no result, no failure, or the first
failing backend / subsystem with its meaning, advice and the command to reproduce it by hand; and the
progress lines printed while the bisector runs (one per finished step)."""
import threading

from . import output
from ..run import proc
from ..decide.bisect_result import LAYER, by_hand, read_steps, step_line


def markdown(res):
    ladder, nxt, wall = res["ladder"], res["next_command"], res["wall_s"]
    # the runs in the steps log: every run (cli/api engines), the sequential bisector's path (own engine)
    runs = res.get("runs_on_path", res["target_runs"])
    md = []
    if res["status"] == "error":
        first_bad = res["first_bad_run"]
        md += ["# bisect: no result", "", f"- {res['error']}"]
        if first_bad:
            md.append(f"- first failing run: backend {first_bad['backend']}: {first_bad['reason']}")
        md += [f"- target runs: {runs}, steps log: {res['steps_log']}", "",
               "Next: check the target fails deterministically, then run", "", f"    {nxt}"]
        return "\n".join(md)
    if res["status"] == "no-failure":
        md += ["# bisect: " + ("the failure is intermittent" if res.get("bad_off_path") else "no failure reproduced"), "",
               f"The program passed with every backend ({', '.join(l['backend'] for l in ladder)}); "
               f"{runs} runs, {wall:.0f}s.",
               *([f"- **It fails only sometimes**: {'; '.join(res['bad_off_path'][:3])}, yet the run with the same "
                  "or a larger part of the compiler passed. A bisect cannot follow an intermittent failure (a native "
                  "crash with another message each time is memory corruption, e.g. a kernel writing out of bounds): "
                  "make it fail every run first (more inputs or steps in one run, or --bad-if on a wrong value it "
                  "prints), then bisect again."] if res.get("bad_off_path") else
                 ["- If it fails only sometimes, it is flaky: rerun it a few times first."]),
               "- If it fails without a non-zero exit, say how to see it: --bad-if REGEX or --bad-if-exception NAME.",
               "", "Next: look at the whole run with triage:", "",
               "    " + nxt]
        return "\n".join(md)
    r = res["result"]
    md += [f"# bisect: first failing backend `{r['backend']}`" + (f", subsystem `{r['subsystem']}`" if r.get("subsystem") else ""),
           ""]
    rows = [["backend", f"{r['backend']} — {LAYER.get(r['backend'], '')}"]]
    if r.get("subsystem"):
        rows.append(["subsystem", r["subsystem"]])
    if r.get("bisect_number") is not None and r.get("subsystem"):
        rows.append(["bisect number", r["bisect_number"]])
    if r.get("debug_info"):
        rows.append(["debug info", r["debug_info"]])
    if res["failure"]:
        rows.append(["failure", res["failure"]["reason"]])
    if res.get("from_note"):
        rows.append(["classification", res["from_note"]])
    rows.append(["ladder", ", ".join(f"{l['backend']}={'BAD' if l['bad'] else 'ok'}" for l in ladder)])
    if res.get("jobs"):
        rows.append(["target runs", f"{res['target_runs']} started, {res['runs_on_path']} on the sequential "
                     f"bisector's path, {res['jobs']} at a time ({wall:.0f}s)"
                     + (f"; known without a run: {', '.join(res['runs_saved'])}" if res["runs_saved"] else "")])
    else:
        rows.append(["target runs", f"{res['target_runs']} ({wall:.0f}s)"])
    md += [output.table(["", ""], rows), "", f"**Meaning:** {res['meaning']}", "", f"**Next:** {res['advice']}",
           "", by_hand(r), "", f"Artifacts: {res['run_dir']} (steps/ has every run's output)", "",
           "Next command (shrink it to a standalone repro):" if "minify" in nxt else "Next command:", "", f"    {nxt}"]
    return "\n".join(md)


class Tail(threading.Thread):
    """Prints one progress line per finished step while the bisector runs."""

    def __init__(self, log_dir):
        super().__init__(daemon=True)
        self.log_dir, self.seen, self.stop = log_dir, 0, threading.Event()
        self.in_subsystems = False

    def poll(self):
        steps = read_steps(self.log_dir)
        for s in steps[self.seen:]:
            if s.get("subsystem") and not self.in_subsystems:
                self.in_subsystems = True
                proc.progress(f"stage 2/2: subsystems of backend {s['backend']}")
            proc.progress(step_line(s))
        self.seen = max(self.seen, len(steps))

    def run(self):
        while not self.stop.wait(0.5):
            self.poll()
