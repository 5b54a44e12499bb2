"""Next steps of a failed run's error rows (error_rows builds the rows): what the error's text says to do
(custom ops' fake kernels, exports, data-dependent ops, shapes, accuracy). No torch import here."""
import os
import re

from . import (accuracy_apply, custom_op_code, custom_op_source, dynamo_steps, knowledge, library_paths, printed,
               program_code, semantics, verdict)
from .error_rows import SAME_TRIAGE, _first_lines
from .export import divisible_advice, unproven_guard_advice
from ..read.frames import is_user_file, library_of, library_path, parse_exception
from ..cmdline import clip, template_command


# a fake tensor's values were read (a constructor copying them, a data pointer)
_FAKE_DATA_RE = re.compile(r"data is not allocated yet|Cannot access data pointer of Tensor")
# a shape error of a core op ("Attempting to broadcast a dimension", "size mismatch", "shape '[4, 8]' is invalid")
_SHAPE_MISMATCH = re.compile(r"(?i)broadcast|size mismatch|sizes? of tensors must match|shape '\[|must match the size|"
                             r"expected .*(?:size|shape)|mat1 and mat2 shapes")


_BUILTIN_BACKENDS = ("inductor", "aot_eager", "aot_eager_decomp_partition", "eager", "cudagraphs", "tvm", "onnxrt",
                     "openxla", "aot_inductor", "ipex")



def compile_data_dependent(e):
    """A data-dependent guard error raised under torch.compile (not torch.export, not eager code reading a value
    kept from a trace)."""
    return e.category == "data_dependent_guard" and not (e.inner or {}).get("escaped") and not re.search(
        r"\bexport\w*\(", (e.location.code or "") if e.location else "") and "torch/export/" not in (e.message or "")


def _eager_printed_lines(rep, ev):
    """How many lines the run without torch.compile printed before its failure, counted as printed.tail counts
    the compiled run's (rep.printed_lines): its traceback and torch's text after it left out."""
    return printed.tail(program_code.read_text(rep.artifacts.get("eager_check_stdout")),
                        program_code.read_text(rep.artifacts.get("eager_check_stderr")),
                        (ev.get("message") or "").strip().split("\n")[0] or None)[1]


# where a traced value can be kept from a trace: a hook or a callback the traced forward calls (review: a SymInt from
# an exported graph's node.meta, symbolic by design, written to json with no hook, got the "hooks kept it" lead)
_HOOK_RE = re.compile(r"\.register_(?:forward|forward_pre|full_backward|full_backward_pre)_hook\(|\.register_hook\(|"
                      r"register_module_forward(?:_pre)?_hook\(")


# errors about Python objects, not an exported program's results: the export advice (mode, constants, shapes) does not
# apply (blind A/B batches 58-59: it was appended to a json TypeError and a NameError and read as a lead)
_PYTHON_ERRORS = ("TypeError", "NameError", "AttributeError", "KeyError", "ImportError", "ModuleNotFoundError",
                  "FileNotFoundError", "JSONDecodeError")


def _export_sites(rep):
    """The program's torch.export.export / draft_export calls, "file:line `call(...)`" (two at most), or ""."""
    from ..read import never_ran
    return ", ".join(list(dict.fromkeys(
        f"{os.path.basename(p)}:{ln} `{call}(...)`" for p, ln, call in never_ran.exports(
            program_code.program_files(rep)) if call.split(".")[-1] in ("export", "draft_export")))[:2])


_CUSTOM_OP_WORDS = re.compile(r"custom_op|register_autograd|register_fake|torch\.library|autograd\.Function")


# a call taking a tensor's data as an argument (`lib.memmove(out.data_ptr(), ...)`, `kernel(x.numpy())`), and the
# calls that only show or convert it
_KERNEL_ARG = re.compile(r"([A-Za-z_][\w.]*)\((?:[^()]|\([^()]*\))*?\.(?:data_ptr|numpy|tolist)\(\)")
_NOT_KERNELS = ("print", "str", "repr", "int", "float", "len", "format", "debug", "info", "warning", "log", "append",
                "bool", "hex", "id", "isinstance", "min", "max", "sum", "round", "abs")


def _plain_code(e):
    """The data access of a traced_data_access error is in the program's own file, and that file defines no custom op
    or autograd.Function (whose formulas and fake kernels are the row's own case)."""
    loc = e.location
    if loc is None or not loc.file or not is_user_file(loc.file):
        return False
    return not _CUSTOM_OP_WORDS.search(program_code.read_text(loc.file))


def _frames(rep):
    """The frames of the run's last exception (its stderr), outermost first."""
    exc = parse_exception(program_code.read_text(rep.artifacts.get("stderr") or ""))
    return exc["frames"] if exc else []


def _specialized_input_why(e, msg, rep):
    """An exported program's input guard failed: the fix is where it was exported, not the line that called it."""
    at_export = _export_sites(rep)
    guard = re.search(r"Guard failed: \S+ == \d+", e.message or "")
    return (f"{e.title}: {guard.group(0) if guard else msg}. The fix is the dynamic_shapes of the export"
            + (f" ({at_export})" if at_export else "") + f", not the line that called it: {e.advice}")


def _error_steps(rep, target_str, cli):
    """Next steps for the errors, routed by the verdict: only compile-only failures go to
    bisect/minify; a failure that happens without torch.compile too goes to the user's line."""
    v = rep.verdict or {}
    kind, ev = v.get("kind"), v.get("eager") or {}
    steps = []
    for i, e in enumerate(rep.errors):
        inner = e.inner or {}
        msg = _first_lines(inner.get("message") or e.message, 1, 200)
        at = v.get("location") if i == 0 and v.get("location") else (
            f"{os.path.basename(e.location.file)}:{e.location.line}" if e.location and e.location.line else None)
        op = custom_op_code.op_name(e) if e.side == "custom_op" else None
        if i == 0 and kind in verdict.USER_SIDE and inner.get("escaped") and (
                e.category == "data_dependent_guard" or _HOOK_RE.search(
                    "\n".join(program_code.read_text(f) for f in program_code.program_files(rep)))):
            why = knowledge.advice("traced_value_escaped", at=at or "the line shown", msg=msg)
            e.advice = ("Not a tensor value read inside compiled code: eager code read a tensor made while torch.export "
                        "or torch.compile traced (a FakeTensor), which the program kept; Next says where to look.")
            steps.append({"why": why, "skill": None, "command": None, "decides": True})
            continue
        ra = inner.get("raised_at") if e.category == "data_dependent_guard" else None
        if i == 0 and ra and library_of(ra["file"]) and library_of(ra["file"]) != "torch":
            # the call torch names is a library's (blind A/B batch 63: transformers' torch.split(t, lengths.tolist())
            # under torch.export, from an input grid's values; the Next was the generic .item() advice)
            where = f"{library_path(ra['file']) or os.path.basename(ra['file'])}:{ra['line']}"
            why = knowledge.advice("data_dependent_in_library", lib=library_of(ra["file"]), where=where,
                                   code=clip(ra["code"], 100), at=at or "the line shown",
                                   checks=" or ".join(f"`{c}`" for c in ra["checks"]) or "torch._check(...)")
            e.next_command = None
            steps.append({"why": why, "skill": e.skill, "command": None, "decides": True})
            continue
        branches = library_paths.export_branches(_frames(rep)) if i == 0 and kind == "export_failure" and \
            e.category == "export_error" else None
        if branches:   # the library runs other code while exporting (blind A/B batch 64: transformers' export mask)
            r, s0 = branches["raised"], branches["sites"][0]
            sites = ", ".join(f"{library_path(f) or os.path.basename(f)}:{n} `{clip(c, 70)}`"
                              for f, n, c, _ in branches["sites"])
            why = knowledge.advice("export_library_branch", lib=branches["lib"], at=at or "the call shown", sites=sites,
                                   where=f"{library_path(r.file) or os.path.basename(r.file)}:{r.line}", patch=s0[3])
            steps.append({"why": why, "skill": "export", "command": None})
        if i == 0 and kind in verdict.USER_SIDE:
            if e.category == "syntax_error":
                why = f"fix the syntax error at {at}: {re.sub(r' [(][^()]*:[0-9]+[)]$', '', msg)}"
            else:
                etype = inner.get("type") or e.type
                if kind == "fails_eager_too" and ev.get("type") and ev.get("message") \
                        and not re.match(r"SIG|exit ", ev["type"]):
                    # the run without torch.compile words it plainly (an IndexError, not generated code's bounds check)
                    etype, msg = ev["type"], _first_lines(ev["message"], 1, 200)
                why = (f"fix your program{' at ' + at if at else ''}: {etype}{': ' + msg if msg else ''} "
                       f"({'it fails the same way without torch.compile' if kind == 'fails_eager_too' else 'torch.compile never ran'}; "
                       "no compiler bisect needed)")
                if v.get("export_call") and e.category in semantics.GENERIC and e.type not in _PYTHON_ERRORS:
                    first = (program_code.export_calls(rep, e) or [(None, None, None)])[0]
                    why += (f"; the program uses torch.export ({v['export_call']}): "
                            f"{program_code.export_advice(program_code.program_files(rep), first[:2] if first[0] else None)}")
                elif e.side == "user" and e.advice and (v.get("export_call") or e.skill == "aoti"):
                    # the row that names this error, in full (blind A/B batch 23: a serving worker's unregistered
                    # custom op got export's model.eval() advice, and the row's advice was clipped above)
                    why += f"; {e.title}: {' '.join(e.advice.split())}"
                ai = v.get("aoti_inputs") or {}
                if e.category == "aoti_weights_not_loaded":
                    w = ai["weights"]
                    why = f"{e.title} ({w['package']}: {w['how']}): {e.advice}"
                elif e.category == "aoti_input_mismatch":
                    why = f"{e.title} ({ai.get('mismatch')}): {e.advice}"
                elif e.category == "aoti_input_structure":
                    s = ai["structure"]
                    why = f"{e.title} (at `{s['path']}`: exported {s['exported']}, called {s['called']}): {e.advice}"
                elif ai and not ai.get("timed_out") and not ai.get("size1_stride") and (
                        not v.get("export_call") or rep.signal):
                    # (a program that also exports keeps the export advice, which names buffers the package carries,
                    # unless the package crashed: batch 42's segfault got "fix your program ... → export skill")
                    # the package ran and its inputs check out: nothing here says whose bug it is (blind A/B batch
                    # 39: "fix your program ... torch.compile never ran" for a package fed a reordered dict)
                    why = knowledge.advice("aoti_not_decided", load=ai["load"])
                if e.side == "custom_op":
                    why += f"; {e.title.lower()}" + (f" ({op})" if op else "") + \
                        ": register it, then check the op with torch.library.opcheck(op, args)"
                if e.category == "export_specialized_input":
                    why = _specialized_input_why(e, msg, rep)
                if knowledge.triage_row_of(e.category).get("fix_at_export"):   # torch's generated check, not the call
                    why = (f"{e.title} (export at {v.get('export_call') or 'torch.export'}; called at {at or 'the line shown'}"
                           f"): {' '.join(e.advice.split())}")
            steps.append({"why": why, "skill": "aoti" if v.get("aoti_inputs") and rep.signal else
                          "export" if v.get("export_call") else
                          e.skill if e.side in ("user", "custom_op") else "overview", "command": None})
            continue
        if i == 0 and kind == "saved_program":   # a saved program raised when loaded or called: a row of ours names why
            known = e.skill in ("aoti", "export") and e.category not in ("aoti_error", "export_error")
            why = f"{e.title}{' at ' + at if at else ''}: {msg}"
            n = re.search(r"expected inputs vector size to be (\d+), but got (\d+)", e.message or "") \
                if e.category == "aoti_input_count" else None
            if n and int(n.group(2)) > int(n.group(1)):   # which side has the extra tensor decides the fix (review)
                exported = _export_sites(rep)
                why += ": " + knowledge.advice("aoti_input_count_more", expected=n.group(1), got=n.group(2),
                                               exported=f" ({exported})" if exported else "")
            elif n and int(n.group(2)) < int(n.group(1)):
                why += ": " + knowledge.advice("aoti_input_count_fewer", expected=n.group(1), got=n.group(2))
            elif e.category == "export_specialized_input":
                why = _specialized_input_why(e, msg, rep)
            elif known:
                why += f": {' '.join(e.advice.split())}"
            elif v.get("saved") == "aoti_load":
                why += ("; the package could not be loaded: its path, that it is a .pt2 package built by this torch for "
                        "this device, and the custom ops it calls registered in this process")
            elif v.get("saved") == "aoti":
                why += ("; the package runs code built ahead of time: compare the call with the export's example inputs "
                        "(print(ep.graph_signature)) and how it was built")
            elif v.get("saved") == "module":
                why += ("; the module of an ExportedProgram checks its inputs against the export's ranges and keeps the "
                        "mode it was exported in: compare the call with the export (print(ep) shows its guards)")
            else:
                why += "; torch.export.load read a saved ExportedProgram: the file, the torch that saved it, how it is loaded"
            steps.append({"why": why, "skill": "export" if v.get("saved") in ("load", "module") else "aoti",
                          "command": None,
                          **({"decides": True} if known else {})})
            continue
        if e.side == semantics.SIDE:   # a by-design difference: its fix is in semantics.steps(), no bisect
            continue
        if i == 0 and kind == "different_failure_eager" and ev.get("frame") and ev.get("type") \
                and not re.match(r"SIG|exit ", ev["type"]) \
                and _eager_printed_lines(rep, ev) <= rep.printed_lines:
            # the run without torch.compile fails at a line of the program and got no further than the compiled run
            # (past it, the two are other bugs): that failure first, as the Route says (torch 2.11: -100 in the input
            # ids segfaults the compiled CPU kernel, which checks no bounds there, and raises IndexError eagerly)
            steps.append({"why": f"fix the failure without torch.compile first, at {ev.get('location')}: {ev['type']}: "
                                 f"{_first_lines(ev.get('message') or '', 1, 200)}; then triage again (the compiled "
                                 "failure may be the same bug: generated code may not check what eager checks, e.g. "
                                 "an index out of range)", "skill": "overview", "command": None})
        if i == 0 and kind == "compile_only" and (e.source == "signal" or rep.signal) and rep.graphs:
            # compiled code ran (a graph), so a fake kernel may have sized it (review: not for 0 graphs)
            fakes = custom_op_code.fake_kernels(rep)
            if fakes:   # a crash only compiled, and the program declares output shapes itself: check those first
                where_ = ", ".join(f"{os.path.basename(p)}:{ln} ({name})" for p, ln, name in fakes[:3])
                steps.append({"why": f"the program registers fake kernels ({where_}): compiled code is sized by "
                                     "them, so one that returns another shape than the real kernel makes it read or "
                                     "write out of bounds and crash where eager passes. Check each against the real "
                                     "op on inputs like the failing ones (torch.library.opcheck passes only for the "
                                     "inputs it is given): an output whose length depends on the data needs "
                                     "torch.library.get_ctx().new_dynamic_size() in the fake kernel. Bisect only "
                                     "if they match", "skill": None, "command": None})
        unapplied = next((x["fix"] for fr in rep.recompiles for x in fr.fixes
                          if x["title"] == "your recompile_limit did not apply"), None)
        if e.category == "recompile_limit" and unapplied:   # blind A/B batch 53: the limit set on another thread
            steps.append({"why": unapplied, "skill": None, "command": None, "decides": True})
            continue
        if e.category == "custom_op_shared_output":   # opcheck passes on it: the reading of the code is the step
            steps.append({"why": f"return a new tensor from {op or 'the custom op'}: " + e.advice, "skill": None,
                          "command": None, "decides": True})
            continue
        if e.category == "aten_op_no_fake":   # PyTorch's own op, static shapes only (batch 55): its fixes, no bisect
            steps.append({"why": f"{e.title}: {e.advice}", "skill": e.skill, "command": None, "decides": True})
            continue
        if e.category == "inductor_nan_value_range":   # the program's NaN first, minify only if none (batch 62)
            e.next_command = None
            steps.append({"why": f"{e.title}: {e.advice}", "skill": None, "command": None, "decides": True})
            continue
        if e.category == "inference_mode_inside_compile":   # its own fix, no accuracy run or bisect (batch 53)
            steps.append({"why": e.advice, "skill": None, "command": None, "decides": True})
            continue
        if e.side == "custom_op":
            fix = {"custom_op_no_fake": "register a fake kernel (register_fake)",
                   "custom_op_no_autograd": "register a backward (register_autograd)",
                   "custom_op_bad_fake": "make the fake kernel return the real kernel's shape/dtype",
                   "custom_op_mutates_args": "declare every mutated input in mutates_args",
                   "traced_data_access": f"move the data access{' at ' + at if at else ''} into a custom op of its own "
                                         "(custom_op + register_fake) called from the traced formula"
                   }.get(e.category, e.title)
            why = f"{fix} for {op or 'the custom op'}, then check it with torch.library.opcheck(op, args)" + (
                " on inputs that require grad; no bisect" if e.category == "traced_data_access" else "")
            if e.category in ("traced_data_access", "custom_op_kernel_autograd"):
                e.next_command = None
            if e.category == "traced_data_access" and not op and _plain_code(e):
                # no custom op at that line: the program's own Python, traced by export or compile (blind A/B batch 64:
                # an alignment check, x.data_ptr() % 16, on the CPU path of an RMSNorm; the Next said custom op)
                code = (e.location.code or "").strip()
                callee = _KERNEL_ARG.search(code)   # the data handed to a call: a kernel, not a check (review)
                kernel = callee.group(1) if callee and callee.group(1).split(".")[-1] not in _NOT_KERNELS else None
                e.advice = knowledge.advice("traced_data_access_kernel", at=at or "that line", code=clip(code, 90),
                                            callee=kernel) if kernel else \
                    knowledge.advice("traced_data_access_plain", at=at or "that line", code=clip(code, 90))
                steps.append({"why": e.advice, "skill": None, "command": None, "decides": True})
                continue
            bare = "" if "::" in (op or "") and not op.startswith("aten::") else (op or "").split("::")[-1].split(".")[0]
            over = [x for x in custom_op_source.aten_overrides(program_code.program_files(rep)) if x[2] == bare] \
                if e.category == "traced_data_access" and bare else []
            if over:   # PyTorch's own op with a Python kernel of the program's: that kernel reads the data
                p_, ln, _, kernel = over[0]
                why = knowledge.advice("aten_python_override", op=bare, at=f"{os.path.basename(p_)}:{ln}", kernel=kernel)
                e.advice = why
                steps.append({"why": why, "skill": None, "command": None, "decides": True})
                continue
            if e.category == "custom_op_kernel_autograd":   # the row's advice holds the fixes and the workaround
                why = f"{e.title}: {e.advice}"
            if e.category == "triton_kernel_on_cpu":
                defs = custom_op_source.triton_op_defs(program_code.program_files(rep))
                at = ", ".join(f"{os.path.basename(f)}:{i}" for f, i in defs[:3])
                why = ("branch on the device inside the triton_op's body" + (f" ({at})" if at else "") + ": plain torch "
                       "ops when the inputs are not on CUDA, the Triton launch only on CUDA (torch.compile traces the "
                       "body, never the register_kernel(\"cpu\") implementation); or make it a torch.library.custom_op "
                       "with register_fake. Then run it compiled again; no Triton CPU build, no bisect")
                e.next_command = None
                steps.append({"why": why, "skill": None, "command": None, "decides": True})
                continue
            if e.category == "custom_op_bad_fake" and op and op.startswith("aten::"):
                # PyTorch's own op (blind A/B batch 36: aten._transformer_encoder_layer_fwd, nn.TransformerEncoder's
                # eval fast path, whose meta kernel keeps the input's strides): no registration of the user's
                e.next_command = None
                why = knowledge.advice("aten_bad_fake", op=op, fastpath=knowledge.advice("aten_bad_fake_fastpath")
                                       if "_transformer_encoder_layer_fwd" in op or "_native_multi_head_attention" in op
                                       else "")
                grown = custom_op_code.state_sizes_grown(e) if op.endswith("_functional") else None
                if grown:
                    why = knowledge.advice("aten_bad_fake_state", op=op, dims=grown)
                e.advice = why
                steps.append({"why": why, "skill": None, "command": None, "decides": True})
                continue
            dt = re.search(r"expected dtype (torch\.\w+) but got (torch\.\w+)",
                           (e.inner or {}).get("message", "") + "\n" + (e.message or ""))
            if e.category == "custom_op_bad_fake" and dt:
                # which side to change is the question (blind A/B batch 41: np.interp returned float64 in the real
                # kernel; "make the fake kernel return the real kernel's dtype" pointed at the wrong side)
                why = knowledge.advice("custom_op_dtype_mismatch", op=op or "the custom op", fake=dt.group(1),
                                       real=dt.group(2))
            elif e.category == "custom_op_bad_fake":
                why = custom_op_code.bad_fake_step(e, op) or why
            steps.append({"why": why, "skill": e.skill, "command": None})
            continue
        if e.category == "dynamo_internal_error" and kind == "compile_only" and e.location and e.location.code \
                and is_user_file(e.location.file):   # a line to repro alone before any minifier (batch 13)
            under = (e.inner or {}).get("under")     # torch.func transforms the stack passes through: vmap(grad(...))
            nested = "(".join(under) + "(...)" + ")" * (len(under) - 1) if under else ""
            if under:
                e.advice = " ".join(knowledge.advice("dynamo_crash_in_functorch_why", transforms=nested).split())
            steps.append({"why": knowledge.advice("dynamo_crash_in_functorch", at=at, msg=msg, transforms=nested,
                                                  code=clip(e.location.code.strip(), 100))
                          if under else
                          knowledge.advice("dynamo_crash_at_line", at=at, code=clip(e.location.code.strip(), 100),
                                           msg=msg),
                          "skill": e.skill, "command": e.next_command})
            continue
        if inner.get("backend") == "compile_fn" and program_code.uses_ddp(rep):
            # DDPOptimizer.compile_fn (torch/_dynamo/backends/distributed.py) compiles each piece of the graph it
            # split at DDP's buckets: torch's, not the user's (blind A/B batch 24: "your own backend" misled)
            steps.append({"why": knowledge.advice("ddp_optimizer_raised", type=inner.get("type"), at=at, msg=msg),
                          "skill": "trace-dynamo", "command": None, "decides": True})
            continue
        if inner.get("backend") and inner["backend"] not in _BUILTIN_BACKENDS and e.location \
                and is_user_file(e.location.file):
            steps.append({"why": f"your own backend '{inner['backend']}' raised {inner.get('type')} at {at}: {msg}; "
                                 "fix it there (torch.compile's own backends are not involved)",
                          "skill": None, "command": None})
            continue
        reads = program_code.captured_reads(rep) if compile_data_dependent(e) and e.type == "InductorError" else []
        if reads:
            # the unbacked number is the program's own read, captured (capture_scalar_outputs) and then guarded on by
            # a lowering (blind A/B batch 37: int(mask.sum(1).max()) as a slice length, bmm's layout check; the
            # Inductor-pass advice below said to set capture_scalar_outputs, which the program had done)
            path, line, code = reads[0]
            steps.append({"why": knowledge.advice("data_dependent_captured_read", msg=msg, code=clip(code, 100),
                                                  at=f"{os.path.basename(path)}:{line}"),
                          "skill": "trace-dynamo", "command": None, "decides": True})
            continue
        if compile_data_dependent(e) and e.type == "InductorError" and "GuardOnDataDependentSymNode" in (e.message or ""):
            # a lowering guards on a data-dependent size (a mask index's output), not a read of a value (blind A/B
            # batch 57: BART's eos pooling under fullgraph; the read advice below said capture_scalar_outputs)
            lw = (e.inner or {}).get("lowered")
            at = (f" Here: {lw.get('target') or 'the op'} traced from {lw['file']}:{lw['line']}"
                  + (f" `{clip(lw['code'], 120)}`" if lw.get("code") else "") + ".") if lw else ""
            steps.append({"why": knowledge.advice("unbacked_size_in_lowering", msg=msg) + at, "skill": "trace-inductor",
                          "command": None, "decides": True})
            continue
        if compile_data_dependent(e) and e.type == "InductorError":
            # Dynamo traced the program; the read is in Inductor's own pass (blind A/B batch 24: scan lowered to a
            # while_loop reads its index with .item(); "find the read in your code" misled)
            steps.append({"why": knowledge.advice("data_dependent_in_inductor", msg=msg), "skill": "trace-inductor",
                          "command": None, "decides": True})
            continue
        if compile_data_dependent(e):
            # only where the read is transformers' own line ("Caused by: <code>  # transformers/...py:N")
            caused = re.search(r"Caused by: (.*# transformers/\S+)", e.message or "")
            lib = knowledge.library_settings("transformers", caused.group(1)) if caused else []
            steps.append({"why": f"{knowledge.setting_label(lib[0])}: {' '.join(lib[0]['setting'].split())}" if lib
                                 else knowledge.advice("data_dependent_under_compile"), "skill": "trace-dynamo",
                          "command": None})
            continue
        fake = custom_op_code.fake_kernel_of(rep, inner.get("op")) \
            if e.category == "fake_tensor_error" and i == 0 and kind in ("compile_only", "not_checked") else None
        if fake:
            # the program's own fake kernel raised while Dynamo traced the op (blind A/B batch 40: it ran the real
            # formula, whose torch.func.vjp wrapped the fake input; the minify Next led away from it)
            e.next_command = None
            grad = re.search(r"GradTrackingTensor|TensorWrapper", inner.get("message") or "")
            steps.append({"why": knowledge.advice("fake_kernel_raised", op=inner["op"].rsplit(".", 1)[0].replace(
                                                      ".", "::", 1), at=f"{os.path.basename(fake[0])}:{fake[1]}",
                                                  msg=msg, autograd=" " + knowledge.advice("fake_kernel_autograd")
                                                  if grad else ""),
                          "skill": None, "command": None, "decides": True})
            continue
        if e.category == "fake_tensor_error" and i == 0 and kind in ("compile_only", "not_checked") \
                and _FAKE_DATA_RE.search(inner.get("message") or ""):
            # the op needs its inputs' values, which tracing has not (blind A/B batch 40: np.cos of a Python float
            # traced as a 0-d tensor, then the legacy torch.Tensor([[c, -s], [s, c]]) constructor; Next was minify)
            ins = ", ".join(inner.get("inputs") or [])
            e.next_command = None
            op_ = re.sub(r"^<?class '([^']+)'>?$", r"\1(...)", inner.get("op") or "the op")
            steps.append({"why": knowledge.advice("fake_value_read", op=op_,
                                                  at=at or "the user line", inputs=f" ({ins})" if ins else ""),
                          "skill": None, "command": None, "decides": True})
            continue
        if e.category == "fake_tensor_error" and i == 0 and kind == "compile_only" and \
                "Cannot view a tensor" in (inner.get("message") or ""):
            # a view that eager can take fails on the fake input's strides: the op that made the input has a fake
            # kernel keeping another layout than eager's kernel returns (blind A/B batch 58: BatchNorm1d on a
            # transposed input, pytorch#192668; the Next was minify)
            strides = re.search(r"strides (\([\d, ]+\))", inner.get("message") or "")
            e.next_command = None
            steps.append({"why": knowledge.advice("fake_view_strides", at=at or "the user line",
                                                  strides=strides.group(1) if strides else "other strides"),
                          "skill": "trace-dynamo", "command": None, "decides": True})
            continue
        if e.category in ("fake_tensor_error", "shape_mismatch") and i == 0 and kind == "compile_only" \
                and e.side != "custom_op" and inner.get("op") and inner.get("inputs") \
                and (e.category == "shape_mismatch" or _SHAPE_MISMATCH.search(inner.get("message") or "")):
            # (shape_mismatch: the row's own patterns matched the traced op's message, blind A/B batch 55: an
            # in-place squeeze_ on one output of a compiled encode, which compiled returns as the same object as
            # another output, reached decode; the Next was the accuracy run)
            # a core op's shapes disagree only compiled: the traced inputs are other than eager's far more often than
            # its meta kernel is wrong (blind A/B batch 26: a deque's maxlen ignored while tracing, 7 chunks not 6)
            ins = ", ".join(inner.get("inputs") or [])
            e.next_command = None
            why = knowledge.advice("fake_shape_only_compiled", op=inner["op"], at=at or "the user line",
                                   inputs=f" ({ins})" if ins else "")
            shape_ops = program_code.inplace_shape_ops(program_code.program_files(rep))
            if shape_ops:
                why += " In-place shape ops in the program: " + ", ".join(
                    f"{os.path.basename(p_)}:{ln} `{clip(code, 60)}`" for p_, ln, code in shape_ops[:3]) + "."
            traced = program_code.read_text(rep.artifacts.get("stderr")).rsplit("from user code:", 1)
            if len(traced) == 2 and "/transformers/" in traced[1].replace("\\", "/") and "mask" in traced[1]:
                # the op sits in a transformers model: its mask builders branch on is_tracing (blind A/B batch 58: an
                # all-ones mask dropped in eager, built in full while tracing, which Nystromformer's landmark path
                # cannot add; the Next listed deques and in-place ops)
                head, sep, rest = why.partition(" A core op's shape rule")   # the specific cause before the list
                why = f"{head} {knowledge.advice('transformers_traced_mask')}{sep}{rest}"
            steps.append({"why": why, "skill": "trace-dynamo", "command": None})
            continue
        if e.category == "torch_internal_error":   # torch's own code raised: a known cause's fix, else its line
            steps.append({"why": f"{e.title}: " + (e.advice if inner.get("known") else "read torch's message and "
                                 "that line (a setting of yours it checks?); work around it, try a newer torch, "
                                 "report it with a minimal repro"),
                          "skill": None if inner.get("known") else e.skill, "command": None})
            continue
        if e.category == "vectorized_cpu_code":   # measured (extra_runs._check_scalar_cpu): its workaround, then minify
            steps.append({"why": f"{e.type}: {e.title}: {e.advice}", "skill": e.skill, "command": e.next_command,
                          "decides": True})
            continue
        if e.category == "aliased_inputs_view_replay":   # a named open AOTAutograd bug: its workaround and repro, no minify
            steps.append({"why": f"{e.type}: {e.title}: {e.advice}", "skill": e.skill, "command": None, "decides": True})
            continue
        if e.category == "dynamic_number_graph":   # measured (extra_runs._check_static_numbers): keep it out, report it
            steps.append({"why": f"{e.type}: {e.title}: {e.advice}", "skill": None, "command": None, "decides": True})
            continue
        if e.category == "fails_in_dynamo":   # measured (extra_runs.check_rng): Dynamo alone fails the same way
            steps.append({"why": f"{e.title}: {e.advice}", "skill": e.skill, "command": None, "decides": True})
            continue
        if e.category == "warm_cache_only":   # measured (extra_runs._check_cold_cache): the cache, not the compiler
            steps.append({"why": f"{e.type}: {e.title}: {e.advice}", "skill": e.skill, "command": None,
                          "decides": True})
            continue
        if e.category == "export_example_size_one":   # PyTorch's suggested fix would make the dim static
            steps.append({"why": e.advice, "skill": e.skill, "command": None})
            continue
        if e.category == "export_output_not_pytree":   # PyTorch's hint (register a pytree) is rarely the fix
            steps.append({"why": f"{e.title}{' at ' + at if at else ''}: {e.advice}", "skill": e.skill, "command": None,
                          "decides": True})
            continue
        if e.fake_elsewhere:   # the op's fake kernel is in a module of the program's folder it never imports
            e.advice = custom_op_code.fake_elsewhere_words(e.fake_elsewhere, program_code.scripts_of(rep.command)[0])
            e.next_command = None
            steps.append({"why": e.advice, "skill": None, "command": None, "decides": True})
            continue
        if (e.guard_site or {}).get("kind") == "specialized":   # the program's line that made the Dim static
            e.advice, e.next_command = program_code.guard_site_words(e.guard_site), None
            steps.append({"why": e.advice, "skill": e.skill, "command": None, "decides": True})
            continue
        # a divisibility the model may itself need, or a bound (with the line that added it, when known)
        divisible = divisible_advice(e.suggested_fixes, program_code.guard_site_words(e.guard_site) if e.guard_site else None)
        if divisible:
            steps.append({"why": divisible, "skill": e.skill, "command": None})
            continue
        unproven = unproven_guard_advice(e.message, e.suggested_fixes,
                                         program_code.guard_site_words(e.guard_site) if e.guard_site else None)
        if unproven:
            e.next_command = None
            e.advice = ("PyTorch suggests no narrower range for the guard above: Next 1 ("
                        + ("export under backed_size_oblivious=True, your bounds kept)" if "backed_size_oblivious" in unproven
                           else "Dim.DYNAMIC with your bounds)"))
            steps.append({"why": unproven, "skill": e.skill, "command": None, "decides": True})
            continue
        if e.suggested_fixes:
            steps.append({"why": "apply PyTorch's suggested fix: " + "; ".join(e.suggested_fixes[:3]),
                          "skill": e.skill, "command": e.next_command})
            continue
        if i == 0 and v.get("accuracy"):   # measured (accuracy_apply.apply): its verdict routes
            steps.append(_accuracy_step(v["accuracy"], e, at, cli, target_str))
            continue
        gen = program_code.returns_generator(rep.graphs) if i == 0 and kind == "compile_only" and e.side == "user" \
            and verdict.python_value_error(e) else None
        if gen:   # blind A/B batch 22: a streaming sampler's compiled start() returned its generator
            e.next_command = None
            steps.append({"why": f"{e.type}: only fails compiled, on a Python value ({_first_lines(e.message, 1, 120)}); "
                                 + knowledge.advice("compiled_returns_generator", fn=gen[0], gen=gen[1]),
                          "skill": "overview", "command": None, "decides": True})
            continue
        if i == 0 and kind == "compile_only" and e.side == "user" and verdict.python_value_error(e):
            compiled = ", ".join(f"`{g.function}`" + (f" ({os.path.basename(g.location.file)}:{g.location.line})"
                                                      if g.location else "") for g in rep.graphs[:3]) or "?"
            steps.append({"why": f"{e.type}: only fails compiled, on a Python value ({_first_lines(e.message, 1, 120)}); "
                                 f"no accuracy check. {e.advice}" + (f" Compiled here: {compiled}; bisect's first step "
                                 "is that backend=\"eager\" run" if e.next_command else ""),
                          "skill": "bisect", "command": e.next_command})
            continue
        if i == 0 and kind == "compile_only" and e.side in ("user", "custom_op") and \
                knowledge.triage_row_of(e.category).get("only_compiled"):
            # the row explains why the user's code fails only compiled (knowledge/triage.yaml only_compiled)
            steps.append({"why": f"{e.type}: {e.title}" + (f" at {at}" if at else "") + f": {e.advice}",
                          "skill": e.skill, "command": None, "decides": True})
            continue
        if i == 0 and kind == "compile_only" and v.get("compile_counts"):   # runs.run_and_analyze: a compile budget
            what = " and ".join(x for x in (f"the recompiles of {len(rep.recompiles)} function(s)" if rep.recompiles
                                            else "", f"{len(rep.graph_breaks)} graph break site(s)"
                                            if rep.graph_breaks else "") if x) + " (above)"
            e.next_command = None   # (not the accuracy command the row offers)
            e.title = "Fails only when compiled: the program's own check of compile counts (graphs, recompiles)"
            e.advice = f"Not the model's numbers: {what} are what it counts (Next 1)"
            steps.append({"why": knowledge.advice("compile_count_check_failed", msg=_first_lines(e.message, 1, 160),
                                                  what=what), "skill": "trace-dynamo", "command": None})
            continue
        if i == 0 and kind == "compile_only" and v.get("timing"):   # runs.run_and_analyze: a check of time
            compiles = f"{len(rep.recompiles)} function(s) recompiled (above)" if rep.recompiles else \
                f"{len(rep.graphs)} graph(s) compiled, {rep.stats.get('compile_time_s') or 0:.1f} s of compiling"
            e.next_command = None   # (not the accuracy command the row offers)
            then = ("Fix what recompiles (the next step)" if rep.recompiles else
                    "Compile before the timed part (warm up on every shape and setting it will see)")
            steps.append({"why": knowledge.advice("timing_check_failed", msg=_first_lines(e.message, 1, 160),
                                                  compiles=compiles, then=then),
                          "skill": None, "command": None if rep.recompiles or not target_str else
                          template_command("{cli} compile-time --cold-warm -- {target}", target_str)})
            continue
        if i == 0 and kind == "compile_only" and e.side == "user":
            steps.append({"why": f"{e.type}: only fails compiled, not measured yet: torch's accuracy check (one run) "
                                 "tells rounding from a compiled graph that computes differently",
                          "skill": "bisect", "command": template_command("{cli} accuracy -- {target}", target_str)
                          if target_str else None})
            continue
        if e.side == "user" and not e.next_command:
            steps.append({"why": f"{e.type}: {e.title}" + (f" at {at}" if at else "") + f": {msg}",
                          "skill": e.skill, "command": None})
            continue
        same = not e.next_command and any(r["id"] == e.category and r.get("command") == SAME_TRIAGE
                                          for r in knowledge.triage_rows())
        if same and i > 0 and kind == "fails_eager_too" and rep.graph_breaks:
            # the breaks and recompiles "below" are all the program's own error's (dynamo_steps.eager_explained): no
            # step to fix them (blind A/B batch 65: a fullgraph error under torch.func.grad of the failing call)
            gone = dynamo_steps.eager_explained(rep)
            if len(gone["breaks"]) == len(rep.graph_breaks):
                continue
        bug = next((r.get("known_bug") for r in knowledge.triage_rows() if r["id"] == e.category), None) \
            if not same and e.advice else None
        steps.append({"why": f"{e.type}: {e.title}" + ("; the graph breaks and recompiles below are what it is "
                                                        "about: fix them there" if same else "") +
                      (f" ({bug}): {e.advice}" if bug else ""),   # a named bug: its workaround is the step
                      "skill": e.skill, "command": e.next_command})
    return steps


def _accuracy_step(acc, e, at, cli, target_str):
    """The next step a measurement decided: fix the gate (rounding), bisect (a measured miscompile), or
    the cheapest step that can decide (not measured)."""
    if acc.get("emulate_precision_casts") == "passes":
        return {"why": e.advice, "skill": "trace-inductor", "command": None}
    if acc["verdict"] == "rounding" and acc.get("beyond_graphs"):
        return {"why": "each compiled graph is within rounding of torch's eager run of it (first call), but the "
                       "program's difference is far larger than any graph's: " + knowledge.advice("eager_kernel_differs")
                       + f" Or widen the output check{' at ' + at if at else ''}: {acc['gate']}",
                "skill": None, "command": None}
    if acc["verdict"] == "rounding":
        return {"why": f"rounding, measured (not a compiler bug): fix the output check{' at ' + at if at else ''}, "
                       f"no bisect. Gate that fits: {acc['gate']}", "skill": None, "command": None}
    if acc["verdict"] == "miscompile":
        return {"why": f"{acc['summary']} → bisect names the layer, pass and op", "skill": "bisect",
                "command": e.next_command}
    if acc["verdict"] == "noise":
        advice = knowledge.advice({"fix_math_at": "ill_conditioned_value", "fix_math_eager": "eager_less_accurate"}
                                  .get(acc.get("next"), "noise_output"))
        return {"why": f"{acc['summary']}. {advice}",
                "skill": None, "command": None}
    why, _ = accuracy_apply.next_command(acc["next"], cli, target_str or "<your command>")
    if acc.get("int_sites"):
        why = f"made from floats at {'; '.join(acc['int_sites'])}: {why}"
    return {"why": f"{acc['summary']}; {why}", "skill": "bisect" if acc["next"] == "bisect" else None,
            "command": e.next_command}
