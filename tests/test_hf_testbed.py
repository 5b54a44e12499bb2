"""The Hugging Face test bed: real transformers models (tiny random-init configs, tests/hf/*.py) run
under the real CLI (`triage --json -- python tests/hf/<name>.py`), checked against the ground truth
that plain PyTorch logging recorded (tests/hf/ground_truth/<name>.json, made by
tests/hf/record_ground_truth.py with TORCH_LOGS=graph_breaks,recompiles, independent of the plugin).

Dynamo's graph breaks and recompiles depend on the exact torch and transformers versions, so every
test skips (with the reason) when the installed versions differ from the recorded ones: re-record with
`python tests/hf/record_ground_truth.py` and review the diff. One triage run per program (cached for the
session). Results per model and what triage got wrong: docs/hf-testbed.md."""
import importlib.metadata
import json
import os
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from conftest import ROOT, run_json

HF = os.path.join(ROOT, "tests", "hf")
GT_DIR = os.path.join(HF, "ground_truth")
NAMES = sorted(f[:-5] for f in os.listdir(GT_DIR) if f.endswith(".json"))
INDUCTOR = {"bert_encoder", "vit_classify"}   # the programs that compile with real Inductor (slower)

pytestmark = pytest.mark.slow
_RUNS = {}


def _version(pkg):
    try:
        return importlib.metadata.version(pkg).split("+")[0]
    except importlib.metadata.PackageNotFoundError:
        return None


def ground_truth(name):
    with open(os.path.join(GT_DIR, name + ".json")) as f:
        gt = json.load(f)
    have = {"torch": _version("torch"), "transformers": _version("transformers")}
    for pkg, v in have.items():
        want = gt[pkg].split("+")[0]
        if v != want:
            pytest.skip(f"ground truth of {name} was recorded with {pkg} {want}, installed: {v or 'none'}; "
                        f"re-record with `python tests/hf/record_ground_truth.py {name}`")
    return gt


def _triage(out, name):
    t0 = time.monotonic()
    data, p = run_json("triage", "--no-tlparse", "--out", str(out), "--",
                       sys.executable, os.path.join(HF, name + ".py"), timeout=1500, cwd=ROOT)
    assert p.returncode == 0, p.stderr[-3000:]
    data["_wall_s"] = time.monotonic() - t0
    return data


@pytest.fixture(scope="session")
def triaged(request, tmp_path_factory):
    """name -> (ground truth, triage --json result). The programs are mostly single-threaded Python
    tracing, so the selected ones (and only those) all start on first use, HF_TESTBED_JOBS (default 2) at
    a time; one triage run per program per session."""
    pool = ThreadPoolExecutor(max_workers=int(os.environ.get("HF_TESTBED_JOBS", "2")))
    request.addfinalizer(lambda: pool.shutdown(wait=False, cancel_futures=True))

    def start(name):
        out = tmp_path_factory.mktemp("hf_" + name)
        os.rmdir(out)
        _RUNS[name] = pool.submit(_triage, out, name)

    selected = sorted({it.callspec.params["name"] for it in request.session.items
                       if getattr(it.module, "__file__", None) == __file__ and hasattr(it, "callspec")})
    for name in selected:
        try:
            ground_truth(name)
        except pytest.skip.Exception:
            continue
        start(name)

    def get(name):
        gt = ground_truth(name)
        if name not in _RUNS:       # a test not parametrized by name, selected without the others
            start(name)
        return gt, _RUNS[name].result()
    return get


# ---- matching the report against the ground truth ------------------------------------------

def _suffix_match(path, short):
    """A report path (absolute or shortened) names the ground truth's shortened path."""
    p = (path or "").replace("\\", "/")
    return p == short or p.endswith("/" + short)


def _site(b):
    file, _, line = b["site"].rpartition(":")
    return file, int(line) if line.isdigit() else None


def find_break(report, gtb):
    """The report's graph break for a ground-truth break: same file:line and same GB id."""
    for b in report["graph_breaks"]:
        file, line = _site(b)
        if _suffix_match(file, gtb["file"]) and line == gtb["line"] and \
                (b["gb_id"] == gtb["gb_id"] or (not gtb["gb_id"] and b["gb_type"] == gtb["gb_type"])):
            return b
    return None


_ADDR = re.compile(r"\b\d{6,}\b")      # object ids in ___check_type_id / ___check_obj_id guards differ per run


def norm_guard(g):
    g = re.sub(r"\s*\(HINT: .*\)\s*$", "", g.split("  # ")[0]).strip()
    return _ADDR.sub("<id>", g)


def _function_matches(report_fn, gt_fn):
    """Report names are readable ('forward (compiled module called at x.py:15)', 'f (resumed after
    the graph break at line 113)'); the ground truth has torch's co_name."""
    m = re.match(r"^torch_dynamo_resume_in_(.+)_at_(\d+)$", gt_fn)
    if m:
        return report_fn.startswith(m.group(1)) and f"line {m.group(2)}" in report_fn
    return report_fn.split(" ")[0] == gt_fn


def report_recompiles(report):
    """compile_id -> (function record, recompile record) for every recompile in the report."""
    out = {}
    for fr in report["recompiles"]:
        for rc in fr["recompiles"]:
            out[rc["compile_id"]] = (fr, rc)
    return out


def _fix_for(fr, kind):
    """The fix for a guard kind: in `fixes` (causes to fix) or on its cause in `causes` (expected
    one-time recompiles keep their fix there and are left out of `fixes` on purpose)."""
    for f in fr.get("fixes", []) + fr.get("causes", []):
        if f.get("kind") == kind and f.get("fix"):
            return f["fix"]
    return None


@pytest.mark.parametrize("name", NAMES)
def test_breaks_and_recompiles_match_ground_truth(triaged, name):
    gt, rep = triaged(name)
    assert rep["exit_code"] == gt["exit_code"], f"program exit {rep['exit_code']}, ground truth {gt['exit_code']}"
    problems = []
    # every ground-truth break, at its site with its GB id, with a fix
    matched = set()
    for gtb in gt["graph_breaks"]:
        b = find_break(rep, gtb)
        if b is None:
            problems.append(f"missing break {gtb['site']} {gtb['gb_id']} ({gtb['gb_type']})")
            continue
        matched.add(id(b))
        if not (b.get("fix") or {}).get("fix"):
            problems.append(f"break {gtb['site']} {gtb['gb_id']}: empty fix")
    for b in rep["graph_breaks"]:
        if id(b) not in matched:
            problems.append(f"spurious break {b['site']} {b['gb_id']} ({b['gb_type']})")
    # every ground-truth recompile, by compile id, function and every failed guard, with a fix per kind
    have = report_recompiles(rep)
    for r in gt["recompiles"]:
        got = have.pop(r["compile_id"], None)
        if got is None:
            problems.append(f"missing recompile {r['compile_id']} of {r['function']} ({r['file']}:{r['line']})")
            continue
        fr, rc = got
        if not _function_matches(fr["function"], r["function"]):
            problems.append(f"recompile {r['compile_id']}: function {fr['function']!r}, ground truth {r['function']!r}")
        want = sorted(norm_guard(f["guard"]) for f in r["failures"])
        found = sorted(norm_guard(f["guard"]) for f in rc["failures"])
        if want != found:
            problems.append(f"recompile {r['compile_id']}: guards {found}, ground truth {want}")
        for f in rc["failures"]:
            if not _fix_for(fr, f["kind"]):
                problems.append(f"recompile {r['compile_id']}: no fix for guard kind {f['kind']!r} ({f['guard'][:80]})")
    for cid, (fr, rc) in sorted(have.items()):
        problems.append(f"spurious recompile {cid} of {fr['function']}")
    assert not problems, f"{name}: triage vs TORCH_LOGS ground truth:\n  " + "\n  ".join(problems)


# ---- library chains (contract of the library-chain work, issue 9 item 4) --------------------

_GUARD_AT = re.compile(r"(\S+\.py):(\d+) in (\S+)$")   # torch's "# file:line in fn" after a guard
TORCH_INTERNAL = ("torch/nn/modules/module.py", "torch/_dynamo/")


def _frame_names(fr, short):
    """The frame names the ground truth's shortened path (in its file or in a display field)."""
    return any(isinstance(v, str) and _suffix_match(v, short) for v in fr.values())


def _is_subsequence(needles, stack):
    it = iter(stack)
    return all(any(_frame_names(fr, n["file"]) and fr.get("line") == n["line"] for fr in it) for n in needles)



@pytest.mark.parametrize("name", NAMES)
def test_library_chains(triaged, name):
    """Each break carries the chain from the user's line through the library frames to the break:
    `stack` (outermost first; file, line, function, code, user, a shortened display path), `in_library`,
    `library`; guard failures that torch located in library code carry `stack` too."""
    gt, rep = triaged(name)
    if not gt["graph_breaks"] and not any(_GUARD_AT.search(f["comment"]) for r in gt["recompiles"]
                                          for f in r["failures"]):
        pytest.skip(f"{name}: no graph break and no located guard in the ground truth; no chain to check")
    problems = []
    for gtb in gt["graph_breaks"]:
        b = find_break(rep, gtb)
        if b is None:
            continue                      # reported by test_breaks_and_recompiles_match_ground_truth
        stack = b.get("stack") or []
        where = f"{gtb['site']} {gtb['gb_id']}"
        if not stack:
            problems.append(f"{where}: no stack")
            continue
        for fr in stack:
            missing = [k for k in ("file", "line", "function", "code", "user") if k not in fr]
            if missing:
                problems.append(f"{where}: frame without {missing}: {fr}")
        last = stack[-1]
        if not (_frame_names(last, gtb["file"]) and last.get("line") == gtb["line"]):
            problems.append(f"{where}: innermost frame is {last.get('file')}:{last.get('line')}, not the break site")
        if not any(_frame_names(last, gtb["file"]) and isinstance(v, str) and v == gtb["file"] for v in last.values()):
            problems.append(f"{where}: no shortened display path {gtb['file']!r} in {last}")
        chain = [f for f in gtb["user_stack"] if not f["file"].startswith(TORCH_INTERNAL)]
        if chain and not _is_subsequence(chain, stack):
            problems.append(f"{where}: chain {[(f['file'], f['line']) for f in chain]} not in the stack "
                            f"{[(f.get('file'), f.get('line')) for f in stack]}")
        user = [f for f in stack if f.get("user")]
        if not user or not user[0]["file"].replace("\\", "/").endswith(f"tests/hf/{name}.py"):
            problems.append(f"{where}: the user's own line (tests/hf/{name}.py) is not the first user frame")
        if any(f.get("user") for f in stack if "site-packages/" in str(f.get("file"))):
            problems.append(f"{where}: a site-packages frame is marked user")
        own = gtb["file"].replace("\\", "/").endswith(f"tests/hf/{name}.py")   # the break is in the user's code
        if b.get("in_library") is not (not own):
            problems.append(f"{where}: in_library={b.get('in_library')!r}")
        if gtb["file"].startswith("transformers/") and b.get("library") != "transformers":
            problems.append(f"{where}: library={b.get('library')!r}, expected 'transformers'")
    have = report_recompiles(rep)
    for r in gt["recompiles"]:
        got = have.get(r["compile_id"])
        if got is None:
            continue
        for gf in r["failures"]:
            m = _GUARD_AT.search(gf["comment"])
            if not m:
                continue                  # torch located no source line for this guard
            rf = next((f for f in got[1]["failures"] if norm_guard(f["guard"]) == norm_guard(gf["guard"])), None)
            if rf is None:
                continue
            st = rf.get("stack") or []
            tail = m.group(1).lstrip("./")    # torch cuts the head off long paths: match the tail
            if "tests/hf/" in tail:           # recorded in another checkout: match from the repo's own path
                tail = tail[tail.index("tests/hf/"):]
            if not st or not (any(isinstance(v, str) and v.endswith(tail) for v in st[-1].values())
                              and st[-1].get("line") == int(m.group(2))):
                problems.append(f"recompile {r['compile_id']} guard {gf['guard'][:60]!r}: stack does not end at "
                                f"{m.group(1)}:{m.group(2)} ({[(f.get('file'), f.get('line')) for f in st][-3:]})")
    assert not problems, f"{name}: library chains:\n  " + "\n  ".join(problems)


def test_fix_verifies_the_logging_workaround_on_gpt2(triaged, tmp_path):
    """`fix --from` the GPT-2 training program's triage run (the one the ground-truth tests read):
    transformers' logger.warning_once inside the compiled forward breaks the graph; ignoring that
    logger method (a method transformers adds to logging.Logger when imported: the trial applies it at
    the first compile) removes the break with the same output, and the recommendation says where the
    line goes."""
    _, rep = triaged("gpt2_train")      # skips on other torch/transformers versions
    data, p = run_json("fix", "--out", str(tmp_path / "fix"), "--from", rep["run_dir"], timeout=1500)
    assert p.returncode == 0, p.stderr[-2000:]
    x = next(f for f in data["fixes"] if f["id"] == "ignore_logging_function")
    assert x["label"] == "verified (measured)", x
    assert x["effect"]["graph_break_sites"] == [1, 0] and x["effect"]["output"] == "same"
    assert x["effect"]["recompiles"][1] < x["effect"]["recompiles"][0]
    rc = data["recommended"]
    assert "ignore_logging_functions.add(logging.Logger.warning_once)" in rc["code"]
    assert "after your imports" in rc["note"]
    assert data["findings_with_verified_fix"] == data["findings"] == 1
