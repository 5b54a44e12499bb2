"""What a compiler-bisector result means: the backend ladder and its layers, parsing PyTorch's
"Bisection complete" line and the per-run steps log, the runs known without running them, and
bisect's result: the plain-words meaning and advice it shows, the next command. No torch import here."""
import ast
import json
import os
import re

from .. import cmdline

LADDER = ["eager", "aot_eager", "aot_eager_decomp_partition", "aot_eager_decomp_partition_crossref",
          "inductor"]

LAYER = {
    "eager": "Dynamo (graph capture, backend='eager': no AOTAutograd, no Inductor)",
    "aot_eager": "AOTAutograd (tracing / functionalization, no decompositions, no Inductor)",
    "aot_eager_decomp_partition": "AOTAutograd decompositions / partitioner (no Inductor)",
    "aot_eager_decomp_partition_crossref": "fake-tensor / meta kernels (CrossRefFakeMode)",
    "inductor": "Inductor (graph passes, lowering, codegen)",
}


def parse_result(text):
    """'Bisection complete: BisectionResult(backend=..., ...)' -> dict, or None (no issue), or
    'missing' when the line is absent."""
    m = None
    for m in re.finditer(r"Bisection complete: (.*)", text):
        pass
    if m is None:
        return "missing"
    body = m.group(1).strip()
    if body.startswith("no issue"):
        return None
    try:
        call = ast.parse(body, mode="eval").body
        out = {"backend": None, "subsystem": None, "bisect_number": None, "debug_info": None}
        names = list(out)
        for i, a in enumerate(call.args):
            out[names[i]] = ast.literal_eval(a)
        for kw in call.keywords:
            out[kw.arg] = ast.literal_eval(kw.value)
        return out
    except (SyntaxError, ValueError):
        mb = re.search(r"backend='([^']*)'", body)
        return {"backend": mb.group(1) if mb else None, "subsystem": None, "bisect_number": None,
                "debug_info": None, "raw": body}


def read_steps(log_dir):
    path = os.path.join(log_dir, "steps.jsonl")
    steps = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                try:
                    steps.append(json.loads(line))
                except ValueError:
                    pass
    return steps


def step_line(s):
    verdict = "BAD" if s["bad"] else "good"
    if not s.get("subsystem"):
        stage = f"ladder: backend={s.get('backend') or '(yours)'}"
    else:
        stage = f"subsystem: {s['backend']} / {s['subsystem']}"
        if s.get("max") == "-1" or s.get("run_state") == "test_disable":
            stage += " (disabled)"
        elif s.get("run_state") == "find_max_bounds":
            stage += f" (counting applications: {s['range'][1]})" if s.get("range") else " (counting)"
        elif s.get("run_state") == "bisect" and s.get("range"):
            lo, hi = s["range"]
            stage += f" (range [{lo}, {hi}], mid {(lo + hi) // 2})"
    return f"run {s['step'] + 1}: {stage} -> {verdict} ({s['reason']}; {s['duration_s']:.1f}s)"


def meaning(result, first_bad):
    """Plain-words explanation and advice for a BisectionResult dict."""
    b, sub, num, dbg = result["backend"], result.get("subsystem"), result.get("bisect_number"), result.get("debug_info")
    what, advice = "", ""
    if b == "eager":
        what = ("It fails even with backend='eager', where torch.compile only captures graphs with Dynamo "
                "and runs them as plain PyTorch: the bug is in Dynamo's tracing (or in the program itself).")
        advice = "Look at graph breaks / guards with triage; minify with TORCHDYNAMO_REPRO_AFTER=dynamo."
    elif b == "aot_eager":
        what = ("Dynamo alone is fine, but it fails once AOTAutograd traces the graph (functionalization, "
                "autograd) without decompositions or Inductor.")
        advice = "Workaround: backend='eager' for the affected function. File it as an AOTAutograd bug with the minified repro."
    elif b == "aot_eager_decomp_partition":
        if sub == "decomposition":
            what = (f"A decomposition breaks it: the {num}-th decomposition applied"
                    + (f", of {dbg}," if dbg else "") + " (AOTAutograd's decomposition table, no Inductor yet).")
            advice = "Workaround: backend='aot_eager' for that function, or remove the op from the decomposition table; report the decomposition."
        elif sub and "cse" in sub:
            what = "AOTAutograd's common-subexpression elimination breaks it (disabling cse fixes it)."
            advice = "Workaround: torch._functorch.config.cse = False."
        else:
            what = ("It fails with decompositions + the min-cut partitioner, but no single decomposition "
                    "was found: likely the partitioner (recomputation / saved tensors).")
            advice = "Workaround: backend='aot_eager' for that function; minify to get the graph."
    elif b == "aot_eager_decomp_partition_crossref":
        what = ("It fails only when fake-tensor (meta) results are cross-checked against real ones: an "
                "operator's fake/meta kernel disagrees with its real kernel (shape, stride or dtype).")
        advice = "Fix or register the op's fake kernel (torch.library.register_fake); report it."
    elif b == "inductor":
        if sub in ("pre_grad_passes", "joint_graph_passes", "post_grad_passes"):
            if dbg and "custom" in dbg:
                what = (f"Your own Inductor graph pass breaks it: {sub}, application #{num}, `{dbg}`. Without it the "
                        "program is correct.")
                advice = f"`{dbg}` is your own pass (torch._inductor.config.{dbg}): fix it or unset it."
            else:
                # the bisector switched one application of the pass off and the failure went away: the pass may be
                # wrong, or it only changes the graph that lowering, fusion and code generation see (blind A/B batch
                # 31: remove_noop_ops #0 for an unmasked vector store in Inductor's C++ code, and pattern_matcher=False,
                # offered as the workaround, does not even switch that pass off)
                what = (f"With one Inductor graph pass switched off ({sub}, application #{num}"
                        + (f", `{dbg}`" if dbg else "") + ") the failure goes away. That is where it depends, not "
                        "proof that the pass is wrong: a pass that changes the graph also changes what lowering, "
                        "fusion and code generation make of it, and the bug can be there.")
                advice = ("Minify to a repro and read the failing graph's generated code (TORCH_LOGS=output_code); "
                          "a workaround is a rewrite of the ops there, checked with `compare`.")
        elif sub == "inductor_fallback_random":
            what = ("Setting torch._inductor.config.fallback_random=True fixes it: compiled random numbers differ "
                    "from eager's (Inductor's RNG is not bitwise eager's). Usually expected, not a bug.")
            advice = "Compare with fallback_random=True, or use a tolerance-based check instead of bitwise equality."
        elif sub == "inductor_emulate_precision_casts":
            what = ("Setting torch._inductor.config.emulate_precision_casts=True fixes it: Inductor keeps fp16/bf16 "
                    "intermediates in fp32 where eager rounds them, so results differ by rounding.")
            advice = "Usually expected numerics; loosen the tolerance or set emulate_precision_casts=True."
        elif sub == "inductor_layout_optimization":
            what = "Setting torch._inductor.config.layout_optimization=False fixes it: a layout (channels-last) choice is wrong."
            advice = "Workaround: torch._inductor.config.layout_optimization = False."
        elif sub == "inductor_comprehensive_padding":
            what = "Setting torch._inductor.config.comprehensive_padding=False fixes it: padded strides break it."
            advice = "Workaround: torch._inductor.config.comprehensive_padding = False."
        elif sub == "cudagraphs":
            what = "Disabling CUDA graphs fixes it: a tensor is reused/overwritten across replays, or a captured op is not graph-safe."
            advice = "Workaround: mode='default' / 'max-autotune-no-cudagraphs', or torch._inductor.config.triton.cudagraphs=False; clone outputs you keep across steps."
        elif sub == "lowerings":
            what = (f"Inductor's lowering of one op is wrong: lowering #{num}"
                    + (f", FX node `{dbg}`" if dbg else "") + ". The bisector fell back to the ATen kernel for that "
                    "op and the program passed (a test switch: there is no public per-op setting).")
            advice = ("The op's Inductor lowering/codegen is the bug. Workarounds, narrowest first (check each with "
                      "`compare`): write that op in an equivalent form that lowers differently (e.g. relu as "
                      "clamp_min(x, 0)); keep only the function that holds it out of Inductor "
                      "(torch.compiler.disable on it, or backend='aot_eager' for that function). Then minify to a "
                      "repro and report it.")
            if _VIEW_NODE.match(str(dbg or "")):
                # a view's lowering decides the strides its users see (blind A/B batch 65: `select_3`, a channel view
                # mutated in place, fed an as_strided with strides read from it; the agent looked for a select bug)
                advice = ("That node is a view: its lowering decides the layout (strides, storage offset) of what "
                          "its users read. Code that relies on memory layout after it is the usual trigger: "
                          "as_strided with strides taken from .stride(), data_ptr or stride arithmetic, especially on "
                          "a view written in place. Look at the node's users in TORCH_LOGS=post_grad_graphs and "
                          "rewrite that use layout-free (as_strided -> unfold or indexing; an out-of-place write); "
                          + advice)
        else:
            what = ("It fails with Inductor, but disabling no single bisectable subsystem fixes it: the bug is in "
                    "the scheduler / fusion / code generation or the generated kernel itself.")
            advice = "Minify to a repro; inspect the generated code (TORCH_LOGS=output_code)."
    return what, advice


_VIEW_NODE = re.compile(r"(?:select|slice|as_strided|view|reshape|permute|expand|unfold|diagonal|transpose|squeeze|"
                        r"unsqueeze|t|alias|narrow|unbind|split)(?:_\d+)?$")


def by_hand(r):
    env = f"TORCH_BISECT_BACKEND={r['backend']}"
    if r.get("subsystem") in ("decomposition", "pre_grad_passes", "joint_graph_passes", "post_grad_passes",
                              "lowerings", "cudagraphs") and r.get("bisect_number") is not None:
        n = int(r["bisect_number"])
        env += f" TORCH_BISECT_SUBSYSTEM={r['subsystem']} TORCH_BISECT_MAX={n}"
        return (f"By hand: `{env} <your command>` fails; TORCH_BISECT_MAX={n - 1} passes "
                f"(the first {n} applications are kept, later ones disabled; use a fresh TORCHINDUCTOR_CACHE_DIR).")
    return f"By hand: `{env} <your command>` reproduces the failing backend (use a fresh TORCHINDUCTOR_CACHE_DIR)."


def implied(search, known, parsed):
    """Runs the sequential bisector would make whose verdict was known without running them."""
    out = []
    b = (parsed or {}).get("backend")
    counts = (known.get(("ladder", b)) or {}).get("counts")
    if search.exact or not isinstance(counts, dict):
        return out
    for s in search.subs.get(b, []):
        if s["name"] == parsed.get("subsystem"):
            if s["kind"] == "bisect":
                out.append(f"find_max_bounds {b}/{s['name']}: counted in the ladder run")
            break
        if s["kind"] == "bisect" and not counts.get(s["name"]):
            out.append(f"disable {b}/{s['name']}: never applied")
    return out


def bisector_failure(res):
    if res.timed_out:
        return "the bisector ran past its overall time limit"
    err = res.read_stderr(limit=4000).strip().splitlines()
    return f"the bisector stopped without a result (exit {res.returncode}): " + (err[-1] if err else "no output")


def result_of(args, run_dir, argv, info, engine, steps, parsed, bisector_error, wall, extra=None, target_runs=None):
    """bisect's result from the steps log and the bisector's answer, and the command to run next (the
    caller adds it as next_command, after the check without compile that a failure with eager needs)."""
    ladder = [{"backend": s["backend"], "bad": s["bad"], "reason": s["reason"], "duration_s": s["duration_s"]}
              for s in steps if not s.get("subsystem")]
    first_bad = next((s for s in steps if s["bad"]), None)
    res = {"command": "bisect", "run_dir": run_dir, "target": argv, "torch_version": info.get("version"),
           "engine": engine, "target_runs": len(steps) if target_runs is None else target_runs, "wall_s": wall,
           "ladder": ladder, **(extra or {}), "from_run": getattr(args, "from_dir", None),
           "from_note": getattr(args, "from_note", None),
           "steps_log": os.path.join(run_dir, "steps", "steps.jsonl"),
           "bisector_output": os.path.join(run_dir, "bisector.stdout")}
    # the last backend that passed before the first failing one: minify's source stage keeps it passing
    good = None
    for step in ladder:
        if step["bad"]:
            break
        good = step["backend"]
    gb = ["--good-backend", good] if good and first_bad else []
    nxt = cmdline.cli_command("minify", "--from", args.from_dir, *gb) if getattr(args, "from_dir", None) else \
        cmdline.cli_command("minify", *gb, "--", *args.target)
    if bisector_error and not parsed:
        res.update(status="error", error=bisector_error,
                   first_bad_run={k: first_bad[k] for k in ("backend", "reason")} if first_bad else None)
        return res, nxt
    if parsed is None:
        res.update(status="no-failure", result=None,
                   summary="no failure reproduced: the program passes with every backend, inductor included"
                   if not res.get("bad_off_path") else "intermittent: a run off the bisector's path failed "
                   f"({res['bad_off_path'][0]}), the runs on it passed; a bisect cannot follow it")
        return res, cmdline.cli_command("triage", "--", *args.target)
    what, advice = meaning(parsed, first_bad)
    res.update(status="found", result=parsed, layer=LAYER.get(parsed["backend"], parsed["backend"]),
               meaning=what, advice=advice,
               failure={k: first_bad.get(k) for k in ("reason", "exc_type", "exc_message", "stderr")} if first_bad else None)
    return res, nxt


PASS_SUBSYSTEMS = ("pre_grad_passes", "joint_graph_passes", "post_grad_passes")
PATTERN_MATCHER_OFF = {"torch._inductor.config.pattern_matcher": False}


def _not_measured(res, chk, setting):
    """A config check (bisect_run.config_check) that measured nothing: the setting was not applied, or the run
    timed out (a timeout is no verdict; scalar code is slower). Says so in the advice; True then."""
    if chk["applied"] and chk["reason"] != "timeout":
        return False
    res["advice"] += (f" ({setting} was not measured: " + ("the run timed out)" if chk["applied"] else
                                                          "the setting could not be applied to the program)"))
    return True


def needs_pass_check(res):
    """A found Inductor graph pass that is not the user's own: one run with pattern_matcher=False says whether
    that switch is a workaround (torch applies some passes, remove_noop_ops among them, whatever it says)."""
    r = res.get("result") or {}
    return res.get("status") == "found" and r.get("backend") == "inductor" and r.get("subsystem") in PASS_SUBSYSTEMS \
        and "custom" not in (r.get("debug_info") or "")


def with_pass_check(res, chk):
    """The measured answer of needs_pass_check's run (chk: bisect_run.config_check) goes into the advice."""
    res["target_runs"] += 1
    res["pattern_matcher_off"] = chk
    if _not_measured(res, chk, "pattern_matcher=False"):
        return res
    if chk["bad"]:
        res["advice"] = ("Measured: torch._inductor.config.pattern_matcher=False does not avoid it (one run, still "
                         f"{chk['reason']}), so it is no workaround. " + res["advice"])
    else:
        res["advice"] = ("Workaround, measured: torch._inductor.config.pattern_matcher=False (one run with it passes; "
                         "it switches off every pattern-matcher pass, so check speed and output with `compare`). "
                         + res["advice"])
    return res


SCALAR_CPU_CODE = {"torch._inductor.config.cpp.simdlen": 1}
# results that name no setting of their own: a graph pass, an op's lowering, or none (code generation)
CODE_SUBSYSTEMS = PASS_SUBSYSTEMS + ("lowerings", None)


def needs_vector_check(res, gpu):
    """An Inductor result that names no setting, on a machine without a GPU (every kernel is C++): one run with
    cpp.simdlen=1 (Inductor's C++ not vectorized) says whether the vectorized CPU code is where it fails (blind
    A/B batch 31: a 2-D-tiled reduction's tail stored a full vector, pytorch#196681; simdlen=1 avoided it)."""
    r = res.get("result") or {}
    return not gpu and res.get("status") == "found" and r.get("backend") == "inductor" \
        and r.get("subsystem") in CODE_SUBSYSTEMS and "custom" not in (r.get("debug_info") or "")


def with_vector_check(res, chk):
    """The measured answer of needs_vector_check's run (chk: bisect_run.config_check) goes into the result."""
    res["target_runs"] += 1
    res["scalar_cpu_code"] = chk
    if _not_measured(res, chk, "cpp.simdlen=1"):
        return res
    if chk["bad"]:
        res["advice"] = ("Measured: with Inductor's C++ kernels not vectorized (torch._inductor.config.cpp.simdlen=1, "
                         f"one run) it still fails ({chk['reason']}): not the vectorization. " + res["advice"])
    else:
        res["meaning"] += (" Measured: with torch._inductor.config.cpp.simdlen=1 (Inductor's C++ kernels not "
                           "vectorized) the program passes (one run): the failure is in Inductor's vectorized CPU "
                           "code.")
        res["advice"] = ("Workaround, measured: torch._inductor.config.cpp.simdlen = 1 after `import torch` (scalar "
                         "C++ kernels: slower; check output and speed with `compare`). Report it upstream with a "
                         "minified repro; TORCH_LOGS=output_code shows the vectorized kernel. " + res["advice"])
    return res


def without_compile(res, chk, args, nxt):
    """A failure with backend eager: what the run with torch.compile disabled (chk) says. Returns the next command."""
    res["fails_without_compile"] = chk["bad"]
    res["target_runs"] += 1
    if chk["bad"]:
        what = ("It fails even with torch.compile disabled (TORCH_COMPILE_DISABLE=1): this is not a "
                "torch.compile bug; fix the program first.")
        res["meaning"], res["advice"] = what, "Run the program without torch.compile and debug it as usual."
        nxt = cmdline.cli_command("triage", "--", *args.target)
    return nxt
