"""A failing program that loads an AOTInductor package, run once more with the package's input check on
(AOTI_RUNTIME_CHECK_INPUTS=1): sizes, strides, dtype and device of what it is fed, and weights that were never
loaded. Called by runs.run_and_analyze. No torch import here."""
import json
import os
import re

from . import accuracy_judge, knowledge
from .analyze import _next_steps
from .program_code import program_files as _program_files
from ..run import proc
from ..read.frames import innermost_user, parse_py_frames
from ..cmdline import clip, cli_command, command_line


def check_aoti_inputs(rep, argv, run_dir, timeout, env_add):
    """A failing program that loads an AOTInductor package runs once more with AOTI_RUNTIME_CHECK_INPUTS=1: the
    package checks its inputs' sizes, strides, dtype and device only then, and computes on silently without it
    (blind A/B batch 21: channels-last frames into a package built from a contiguous example, 23% agreement with
    eager, read as "failed before torch.compile ran" with export's train-mode advice). The check's error, or
    that it passed, goes into the verdict."""
    from ..read import never_ran
    if "1" in (os.environ.get("AOTI_RUNTIME_CHECK_INPUTS"), (env_add or {}).get("AOTI_RUNTIME_CHECK_INPUTS")):
        return
    loads = never_ran.aoti_loads(_program_files(rep))
    e0 = rep.errors[0]
    # only a failure that a package computing on a wrong layout can cause: an output check, or a crash (review: a
    # KeyError or a missing directory after a package call that worked was re-labelled an input mismatch, as the
    # check also rejects inputs that work, e.g. batch 1 under a dynamic batch dim's lower bound of 2)
    # (or an error the package's own call raised: blind A/B batch 49, int32 ids into a package exported with int64
    # read past the buffer: "index out of bounds" from its embedding kernel)
    # (not one a row of ours already explains: the input count's own row names which side has the extra tensor)
    saved_unexplained = (rep.verdict or {}).get("saved") == "aoti" and \
        (e0.category in ("aoti_error", "export_error")
         or knowledge.triage_row_of(e0.category).get("skill") not in ("aoti", "export"))
    if not loads or not (rep.signal or saved_unexplained or accuracy_judge.is_output_check(
            e0.type, "\n".join([e0.message or ""] + list(rep.printed_tail or [])))):
        return
    proc.progress("the program loads an AOTInductor package, which checks its inputs only when asked: running it "
                  "once more with AOTI_RUNTIME_CHECK_INPUTS=1")
    env = dict(env_add or {}, PYTHONUNBUFFERED="1", TORCH_TRACE=None, AOTI_RUNTIME_CHECK_INPUTS="1")
    shapes_at = os.path.join(run_dir, "aoti_check.inputs.json")
    structure_at = os.path.join(run_dir, "aoti_check.structure.json")
    packages_at = os.path.join(run_dir, "aoti_check.packages.json")
    if "COMPILE_DEBUG_STARTUP" not in env:   # record the inputs' shapes at a failing package call, a call whose
        from ..run.workers import aoti_hooks   # inputs are structured unlike the export, the packages built and loaded
        env.update(proc.startup_env(run_dir, [{"code": aoti_hooks.code(shapes_at, structure_at, packages_at)}],
                                    name="aoti_check"))
    r = proc.run(argv, env_add=env, timeout=timeout, stdout_path=os.path.join(run_dir, "aoti_check.stdout"),
                 stderr_path=os.path.join(run_dir, "aoti_check.stderr"))
    rep.artifacts.update({"aoti_check_stdout": r.stdout_path, "aoti_check_stderr": r.stderr_path})
    text = r.read_stderr(limit=2_000_000)
    # sizes within a dynamic range ("dim value is too small ... >= 2") are left out: batch 1 runs correctly below
    # the exported lower bound; a static size, a stride, a dtype or a device that differs is read wrong
    m = re.search(r"input_handles\[\d+\]: unmatched (?:stride value|dtype|device|dim value)[^\n]*", text)
    size1 = _size1_stride(m.group(0) if m else "", shapes_at)
    if size1:   # the check stopped at a stride that reads the same memory: not a mismatch, and it checked no further
        m = None
    call_at = innermost_user(parse_py_frames(text)) if m else None   # the program's line that called the package
    path, line, call = next((x for x in loads if call_at and os.path.realpath(x[0]) == os.path.realpath(call_at.file)),
                            loads[0])
    rep.verdict = rep.verdict or {}
    rep.verdict["aoti_inputs"] = {"load": f"{os.path.basename(path)}:{line} `{call}(...)`", "exit_code": r.returncode,
                                  "timed_out": r.timed_out, "mismatch": m.group(0).strip() if m else None,
                                  "size1_stride": size1,
                                  "call": f"{os.path.basename(call_at.file)}:{call_at.line}" + (
                                      f" `{clip(call_at.code, 80)}`" if call_at.code else "") if call_at else None}
    structure = None
    if not m and os.path.exists(structure_at):
        try:
            with open(structure_at, encoding="utf-8") as f:
                structure = json.load(f)
        except (OSError, ValueError):
            structure = None
    ai = rep.verdict["aoti_inputs"]
    weights = None if m or structure or size1 else _weights_not_loaded(packages_at)
    if weights:     # the package's weights were kept out of its .so, and the loader used does not read them
        ai["weights"] = weights
        row_id, summary = "aoti_weights_not_loaded", (
            f"the AOTInductor package {weights['package']} (loaded at {ai['load']}) keeps its weights outside its "
            f".so ({weights['how']}), and that loader never reads them: its first call ran on weights never loaded")
    elif structure:   # the call's inputs are structured unlike the export's (a dict in another key order)
        ai["structure"] = structure
        at = f" at {structure['at']}" + (f" `{clip(structure['code'], 80)}`" if structure.get("code") else "") \
            if structure.get("at") else ""
        row_id, summary = "aoti_input_structure", (
            f"the AOTInductor package ({ai['load']}) was called{at} with inputs structured unlike its export: at "
            f"`{structure['path']}` it was exported with {structure['exported']}, called with {structure['called']}; "
            "it binds inputs by position and checks no names, so they were read in the exported order")
    elif m:
        got = re.search(r"unmatched dtype, expected: \d+\(at::k(\w+)\), but got: (\d+)", m.group(0))
        dtypes = f" (got {_SCALAR_TYPES.get(int(got.group(2)), got.group(2))} where it was built for " \
                 f"{_SCALAR_TYPES.get(got.group(1), got.group(1))}: cast the input, or export with that dtype)" \
            if got else ""
        row_id, summary = "aoti_input_mismatch", (
            f"the AOTInductor package ({ai['load']}) was called" + (f" at {ai['call']}" if ai["call"] else "")
            + " with an input unlike the one it was built for: with AOTI_RUNTIME_CHECK_INPUTS=1 it stops at "
            f"`{clip(m.group(0).strip(), 160)}`{dtypes}; without it, it computes on silently")
    else:
        if rep.verdict.get("kind") == "before_compile" and not size1:
            rep.verdict["summary"] = (f"torch.compile never ran; the program ran the AOTInductor package loaded at "
                                      f"{ai['load']} (compiled code) before it failed")
            rep.next_steps = _next_steps(rep, command_line(argv), cli_command())
        return
    row, err = knowledge.triage_row(row_id), rep.errors[0]
    err.category, err.title, err.skill, err.side = row["id"], row["title"], row.get("skill"), row.get("side", "user")
    err.advice, err.next_command = " ".join(row["advice"].split()), None
    rep.verdict.pop("export_call", None)   # the package's input, not the export's module mode
    rep.verdict["summary"] = summary
    rep.next_steps = _next_steps(rep, command_line(argv), cli_command())


# c10::ScalarType codes and names as AOTInductor's input check prints them ("expected: 4(at::kLong), but got: 3")
_SCALAR_TYPES = {0: "torch.uint8", 1: "torch.int8", 2: "torch.int16", 3: "torch.int32", 4: "torch.int64",
                 5: "torch.float16", 6: "torch.float32", 7: "torch.float64", 11: "torch.bool", 15: "torch.bfloat16",
                 "Byte": "torch.uint8", "Char": "torch.int8", "Short": "torch.int16", "Int": "torch.int32",
                 "Long": "torch.int64", "Half": "torch.float16", "Float": "torch.float32", "Double": "torch.float64",
                 "Bool": "torch.bool", "BFloat16": "torch.bfloat16"}


def _weights_not_loaded(packages_at):
    """{"package", "how"} when the program loaded (aoti_load_package / load_package) a package whose weights are not
    in its .so: pickled on disk in the .pt2 (data/weights/ and weights_config.json: package_constants_on_disk_format=
    "pickle_weights", 2.14+, or package_constants_on_disk=True, 2.9) or nowhere (built here with
    package_constants_in_so=False and no weights file), and the run never called load_constants (the startup hook
    records it; load_pt2(..., load_weights_from_disk=True) loads through it); else None. A package built here with its
    weights in the .so too, or with a weights blob the loader reads ("binary_blob"), is never named (review)."""
    import zipfile
    try:
        with open(packages_at, encoding="utf-8") as f:
            seen = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(seen, list) or any(isinstance(e, dict) and e.get("load_constants") for e in seen):
        return None
    built = {e["built"]: e.get("in_so") for e in seen if isinstance(e, dict) and e.get("built")}
    for path in dict.fromkeys(e["loaded"] for e in seen if isinstance(e, dict) and e.get("loaded")):
        if built.get(path) is True:   # its .so holds the weights, whatever else the .pt2 carries
            continue
        try:
            with zipfile.ZipFile(path) as z:
                names = z.namelist()
        except (OSError, zipfile.BadZipFile, ValueError, TypeError):
            continue
        if any(n.endswith("weights.blob") for n in names):   # "binary_blob": the C++ loader reads it
            continue
        on_disk = sum("/data/weights/" in "/" + n for n in names)
        here = "built by this program with" if built.get(path) is False else "its build likely set"
        if on_disk and any(n.endswith("/weights_config.json") for n in names):
            how = (f"{on_disk} weight file(s) under data/weights/ in the .pt2: {here} "
                   "aot_inductor.package_constants_in_so=False and pickled weights on disk")
        elif built.get(path) is False:
            how = ("built by this program with aot_inductor.package_constants_in_so=False and no weights on disk: "
                   "only a rebuild or load_constants gives it weights")
        else:
            continue
        return {"package": os.path.basename(path), "how": how}
    return None


def _size1_stride(msg, shapes_at):
    """'input_handles[0]: unmatched stride value at 1, ... (shape [8, 1, 64])' when torch's AOTI check stopped at a
    stride of a size-1 dim (the same memory whatever the stride: torch compares every stride exactly; batch 21's
    review), from the input shapes the startup hook recorded; else None."""
    m = re.match(r"input_handles\[(\d+)\]: unmatched stride value at (\d+), expected: -?\d+, but got: (-?\d+)", msg)
    if not m:
        return None
    try:
        with open(shapes_at, encoding="utf-8") as f:
            shapes = json.load(f)
        x, d = shapes[int(m.group(1))], int(m.group(2))
        # the recorded input must be the one torch named: its stride there is the one the message got
        return f"{msg.strip()} (that input's shape {x['shape']})" if x["shape"][d] == 1 and \
            x["stride"][d] == int(m.group(3)) else None
    except (OSError, ValueError, LookupError, TypeError):
        return None
