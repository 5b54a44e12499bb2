#!/usr/bin/env python3
"""Error-corpus accuracy: run every tests/error_corpus/*.py through the real `triage --json` and
compare the class and the verdict with the expectation in the program's first line
(`# expect: <class> <verdict>`). Prints accuracy, every miss, user-side errors labelled as
compiler-side (must be 0), and what the eager check costs (it runs only after a failure).

    python3 benchmarks/error_corpus.py                 # all programs, 2 at a time
    python3 benchmarks/error_corpus.py --jobs 1 shape_view.py syntax_error.py
    python3 benchmarks/error_corpus.py --record        # also refresh tests/error_corpus/recorded/*.json

--record writes what the fast test (tests/test_error_corpus.py) classifies again without running
anything: the compiled run's exit/stderr tail, whether torch.compile ran, and the eager re-run's
exit/stderr tail (paths under the corpus dir replaced by {CORPUS})."""
import argparse
import concurrent.futures as cf
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "tests", "error_corpus")
RECORDED = os.path.join(CORPUS, "recorded")
CLI = os.path.join(ROOT, "scripts", "compile_debug.py")
sys.path.insert(0, os.path.join(ROOT, "scripts"))
USER_SIDE_VERDICTS = ("fails_eager_too", "before_compile")
TAIL = 24_000


def expectation(path):
    with open(path, encoding="utf-8") as f:
        first = f.readline()
    if not first.startswith("# expect:"):
        raise SystemExit(f"{path}: first line must be `# expect: <class> <verdict>`")
    cls, kind = first.split(":", 1)[1].split()[:2]
    return cls, kind


def programs(names=()):
    all_ = sorted(n for n in os.listdir(CORPUS) if n.endswith(".py"))
    return [n for n in all_ if not names or n in names]


def _tail(path):
    """What the fast test needs of a stderr: from the last traceback on (its head and its end when the
    message is huge, e.g. a C++ compile log), else the tail."""
    try:
        with open(path, "rb") as f:
            s = f.read().decode("utf-8", "replace")
    except OSError:
        return ""
    i = s.rfind("Traceback (most recent call last)")
    if i >= 0 and len(s) - i > TAIL:
        s = s[i:i + TAIL - 6000] + "\n[... cut by the recorder ...]\n" + s[-6000:]
    else:
        s = s[-TAIL:]
    return s.replace(CORPUS, "{CORPUS}")


def run_one(name, out_root, extra=(), timeout=600):
    run_dir = os.path.join(out_root, name[:-3])
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, CLI, "triage", "--json", "--no-tlparse", "--out", run_dir, *extra,
                        "--", sys.executable, os.path.join(CORPUS, name)],
                       capture_output=True, text=True, timeout=timeout, cwd=CORPUS)
    wall = time.monotonic() - t0
    try:
        rep = json.loads(p.stdout)
    except ValueError:
        return {"name": name, "error": f"triage exit {p.returncode}: {p.stderr[-500:]}", "wall_s": wall}
    err = (rep.get("errors") or [{}])[0]
    v = rep.get("verdict") or {}
    return {"name": name, "class": err.get("category"), "side": err.get("side"), "verdict": v.get("kind"),
            "wall_s": round(wall, 2), "run_s": rep.get("duration_s"),
            "eager_s": (v.get("eager") or {}).get("duration_s"), "run_dir": run_dir, "report": rep}


def record(r):
    rep = r["report"]
    run_dir = r["run_dir"]
    eager = (rep.get("verdict") or {}).get("eager")
    data = {"program": r["name"], "recorded_on_torch": rep.get("torch_version"),
            "exit_code": rep.get("exit_code"), "signal": rep.get("signal"), "timed_out": rep.get("timed_out"),
            "duration_s": rep.get("duration_s"), "used_compile": rep.get("used_compile"),
            "stderr_tail": _tail(os.path.join(run_dir, "target.stderr")),
            "eager": None if not eager else {
                "exit_code": eager.get("exit_code"), "signal": eager.get("signal"),
                "timed_out": eager.get("timed_out"), "duration_s": eager.get("duration_s"),
                "stderr_tail": _tail(os.path.join(run_dir, "eager_check.stderr"))}}
    os.makedirs(RECORDED, exist_ok=True)
    with open(os.path.join(RECORDED, r["name"][:-3] + ".json"), "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", help="corpus file names (default: all)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--record", action="store_true", help="write tests/error_corpus/recorded/*.json")
    ap.add_argument("--out", help="keep the run dirs here (default: a temp dir)")
    a = ap.parse_args()
    names = programs(a.names)
    if a.names:  # keep the order given (e.g. the ones not recorded yet first)
        names.sort(key=a.names.index)
    out_root = a.out or tempfile.mkdtemp(prefix="error-corpus-")
    env_cache = os.path.join(out_root, "inductor-cache")
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", env_cache)
    t0 = time.monotonic()
    results = []
    with cf.ThreadPoolExecutor(a.jobs) as ex:
        futs = [ex.submit(run_one, n, out_root) for n in names]
        for fut in cf.as_completed(futs):
            r = fut.result()
            cls, kind = expectation(os.path.join(CORPUS, r["name"]))
            r["want"] = (cls, kind)
            ok_c, ok_v = r.get("class") == cls, r.get("verdict") == kind
            print(f"{'ok ' if ok_c and ok_v else 'MISS'} {r['name']:<36} class {r.get('class')}"
                  f"{'' if ok_c else f' (want {cls})'} · verdict {r.get('verdict')}{'' if ok_v else f' (want {kind})'}"
                  f" · {r['wall_s']:.1f} s", flush=True)
            if a.record and "report" in r:
                record(r)
            results.append(r)
    n = len(results)
    c_ok = sum(r.get("class") == r["want"][0] for r in results)
    v_ok = sum(r.get("verdict") == r["want"][1] for r in results)
    both = sum(r.get("class") == r["want"][0] and r.get("verdict") == r["want"][1] for r in results)
    user_as_compiler = [r["name"] for r in results if r["want"][1] in USER_SIDE_VERDICTS and (
        r.get("side") == "compiler" and r.get("class") != "user_error" or r.get("verdict") == "compile_only")]
    eager = [r for r in results if r.get("eager_s")]
    print(f"\n{n} programs: class {c_ok}/{n} ({100 * c_ok / n:.0f}%), verdict {v_ok}/{n} ({100 * v_ok / n:.0f}%), "
          f"both {both}/{n}; user-side errors labelled compiler-side: {len(user_as_compiler)} {user_as_compiler or ''}")
    if eager:
        runs = [r["run_s"] for r in eager]
        es = [r["eager_s"] for r in eager]
        ratios = [e / c for e, c in zip(es, runs) if c]
        print(f"eager check ran on {len(eager)}/{n} (failed compiled runs that reached torch.compile): "
              f"median compiled run {statistics.median(runs):.1f} s, median eager re-run {statistics.median(es):.1f} s, "
              f"median ratio eager/compiled {statistics.median(ratios):.2f}")
    print(f"total wall {time.monotonic() - t0:.0f} s with --jobs {a.jobs}")
    return 0 if both == n and not user_as_compiler else 1


if __name__ == "__main__":
    sys.exit(main())
