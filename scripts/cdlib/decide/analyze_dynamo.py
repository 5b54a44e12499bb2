"""Graph breaks of a trace -> report.GraphBreak (their lines in the report's Next list: dynamo_steps; the
recompilations themselves: analyze_recompiles).

Every break and guard failure carries the chain of frames from the user's line through library code
to the line torch stopped at; breaks in code the user does not own get workarounds that do not edit
that code, torch's own hints first. No torch import."""
import os
import re

from . import knowledge
from ..read.frames import (chain, is_stdlib, is_user_file, library_of, loc as _loc, parse_py_frames, qualified_name,
                           src_line)
from ..report import GraphBreak, Location
from .program_code import read_text
from .wrappers import wrapper_label, wrapper_of

# ---- graph breaks -------------------------------------------------------------------------

GB_URL_RE = re.compile(r"/gb/gb(\d+)\.html", re.I)
SITE_RE = re.compile(r"^Graph break in user code at (.+):(\d+)\s*$", re.M)
# torch's generic "tell us about it" hints: no action for the user
BOILERPLATE_HINTS = ("It may be possible to write Dynamo tracing rules", "File an issue to PyTorch")
LOGGER_RE = re.compile(r"method: <Logger ([\w.]+) \(\w+\)>\.(\w+)")


def parse_graph_break(payload):
    """One dynamo_graph_break_reason payload -> dict(site_file, site_line, gb_ids, gb_type,
    explanation, hints, frames, frame_skipped, text)."""
    text = payload or ""
    m = SITE_RE.search(text)
    site_file, site_line = (m.group(1), int(m.group(2))) if m else (None, None)
    body, _, tb = text.partition("\nUser code traceback:")
    primary = body.split("*** While handling this graph break")[0]
    lines = primary.splitlines()
    gb_type, explanation, hints = None, [], []
    ex_i = next((i for i, ln in enumerate(lines) if ln.strip().startswith("Explanation:")), None)
    if ex_i is not None and ex_i > 0:
        gb_type = lines[ex_i - 1].replace("Graph Break Reason:", "").strip()
        mode = "ex"
        for ln in lines[ex_i:]:
            s = ln.strip()
            if s.startswith("Explanation:"):
                explanation.append(s[len("Explanation:"):].strip())
            elif s.startswith("Hint:"):
                mode = "hint"
                hints.append(s[len("Hint:"):].strip())
            elif s.startswith("Developer debug context") or s.startswith("For more details"):
                mode = None
            elif s and mode == "ex":
                explanation.append(s)
            elif s and mode == "hint" and hints:
                hints[-1] += " " + s
    else:
        r = re.search(r"Graph Break Reason:\s*(.+)", primary)
        gb_type = r.group(1).strip() if r else (primary.strip().splitlines() or ["graph break"])[0]
    ids = [f"GB{int(x):04d}" for x in GB_URL_RE.findall(text)]
    frames = parse_py_frames(tb.split("\nTraceback (most recent call last)")[0]) if tb else []
    return {
        "site_file": site_file, "site_line": site_line, "gb_ids": list(dict.fromkeys(ids)),
        "gb_type": gb_type, "explanation": " ".join(explanation).strip(),
        "hints": [h for h in hints if not h.startswith(BOILERPLATE_HINTS)],
        "frames": frames,
        "frame_skipped": "falling back to eager" in text or "frame skipped" in text,
        "text": primary,
    }


def _statement(frame, n=12):
    """The break line plus the next n lines of its file (to see how a value is used). A line inside a
    statement that starts above it (the second line of a `log.debug(f"..." f"...{t.item()}")`) starts
    at the statement's first line: the call it is an argument of decides how the value is used."""
    if not frame or not frame.line:
        return frame.code if frame else ""
    first = _statement_start(frame.file, frame.line)
    if first < frame.line:
        return "\n".join(src_line(frame.file, i) or "" for i in range(first, frame.line + n))
    lines = [src_line(frame.file, frame.line + i) or "" for i in range(n)]
    return "\n".join([frame.code or lines[0]] + lines[1:])


def _statement_start(path, line):
    """The first line of the innermost simple statement (not a compound one: if/for/def) spanning `line`."""
    from ..read.frames import _tree
    import ast
    tree = _tree(path)
    best = line
    if tree is None:
        return best
    compound = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.FunctionDef,
                ast.AsyncFunctionDef, ast.ClassDef) + ((ast.Match,) if hasattr(ast, "Match") else ())
    for nd in ast.walk(tree):
        if isinstance(nd, ast.stmt) and not isinstance(nd, compound) and \
                nd.lineno <= line <= (nd.end_lineno or nd.lineno) and nd.lineno < best:
            best = nd.lineno
    return best


def _workarounds(gb, recipe, stack, site, entries=()):
    """Ways around a break, in order: torch's hints verbatim, then (for library code) what the user
    can do without editing the library: a known library setting (it removes the cause), a derived config
    line (it drops the call), torch.compiler.disable on the named library function, an upgrade."""
    out = [{"source": "pytorch", "text": h} for h in gb["hints"]]
    site = owner_frame(stack, site)
    lib = library_of(site.file) if site else None
    if not lib:
        return out
    # a library setting first: in the blind A/B (Llama + gradient checkpointing) the line that only drops
    # the warning_once call was listed above use_cache=False, the setting that removes its cause
    for s in knowledge.library_settings(lib, gb["text"] + "\n" + "\n".join(f.code or "" for f in stack)):
        out.append({"source": "knowledge", "text": " ".join(s["setting"].split()), "label": knowledge.setting_label(s)})
    m = LOGGER_RE.search(gb["text"])
    if m:
        logger, method = m.group(1), m.group(2)
        out.append({"source": "derived", "text": f"`{lib}` logs through `{logger}`.{method}(); to skip that call "
                    "(its log line is lost), add this to your script before the compiled call:",
                    "code": f"import logging\ntorch._dynamo.config.ignore_logging_functions.add(logging.Logger.{method})"})
    # torch.compiler.disable on the library function that contains the breaking line, when it can be
    # imported and patched and is not itself the compiled function (that would turn compilation off)
    q = None if site.user or _is_property(site) or (site.file, site.function) in entries else \
        qualified_name(site.file, site.line, site.function)
    if q:
        from ..read.frames import module_of
        out.append({"source": "derived", "text": f"Run `{q}` eagerly (the graph still splits around its call, "
                    "but Dynamo stops tracing into it); patch it once at start-up, before the first compiled call:",
                    "code": f"import {module_of(site.file)}\n{q} = torch.compiler.disable({q})"})
    if lib == "torch":
        i = max((k for k, f in enumerate(stack) if f.user), default=None)
        user = stack[i] if i is not None else None
        callee = stack[i + 1].file.replace("\\", "/") if i is not None and i + 1 < len(stack) else ""
        if user and callee and "/torch/nn/modules/" not in callee:   # (a torch function the program calls)
            # (blind A/B batch 55: nn.init.trunc_normal_ became a rejection loop in 2.15; a compiler.disable'd call
            # is a graph break too, so under fullgraph=True only moving the call out of the graph works. Its inputs
            # may come from the graph (review: Normal(mu, ..., validate_args=True)): then an argument of its own)
            out.append({"source": "derived", "text": f"Where the inputs of the call at {os.path.basename(user.file)}:"
                        f"{user.line} do not come from the graph (a tensor to fill, a shape), make that call outside "
                        "the compiled function (in eager code) and pass its result in; else look for an argument of "
                        "that function that avoids the breaking code, or replace the call with tensor ops Dynamo "
                        "traces."})
        out.append({"source": "derived", "kind": "upgrade_torch",
                    "text": "A newer torch may trace this (check the release notes for this graph-break id)."})
    elif not is_stdlib(site.file):
        out.append({"source": "derived", "text": f"A newer `{lib}` may avoid this break (`pip install -U {lib}`; "
                    "check its changelog for torch.compile fixes)."})
    return out


_NN_INIT = re.compile(r"/torch/nn/modules/(\w+)\.py$")


def _module_built_here(gb_id, stack, site, user_frames):
    """(the program's line that builds a module inside the compiled code, the module's name, built lazily?) where
    Dynamo broke on an nn.Parameter (GB0264) in a torch.nn module's __init__ called right from the program's code
    (not from another library's); the line is the first one up the stack that is not an __init__ of the program's
    own module class (`Proj(d)(x)` in forward, not `self.lin = nn.Linear(d, d)` in Proj.__init__). None otherwise."""
    if gb_id != "GB0264" or not user_frames or site is None:
        return None
    j = next((k for k, f in enumerate(stack) if f.function == "__init__"
              and _NN_INIT.search((f.file or "").replace("\\", "/"))), None)
    if not j or not stack[j - 1].user:   # (another library between the program and torch.nn builds it)
        return None
    k = j - 1
    while k > 0 and stack[k].function == "__init__" and stack[k - 1].user:
        k -= 1
    line = stack[k]
    if line.function == "__init__":
        return None
    m = re.search(r"\b(?:nn\.|torch\.nn\.)?([A-Z]\w*)\s*\(", line.code or "")
    name = (f"nn.{m.group(1)}" if re.search(r"\bnn\." + m.group(1), line.code or "") else m.group(1)) if m else \
        "a torch.nn module"
    # built and stored (`self.norm = nn.LayerNorm(d)`, `cache["n"] = ...`): once, not per call (no `(...)(x)` on it)
    code = (line.code or "").split("#")[0].strip()
    lazy = bool(re.match(r"[\w.\[\]\"']+\s*=\s*(?:torch\.)?(?:nn\.)?[A-Z]\w*\s*\(.*\)$", code)) and \
        not re.search(r"\)\s*\(", code)
    return line, name, lazy


def owner_frame(stack, site):
    """The library frame the user would name: when torch broke inside torch or the standard library
    on behalf of a third-party package (transformers -> torch/utils/hooks.py), that package's
    innermost frame; else the break site."""
    if site is None or site.user:
        return site
    if library_of(site.file) == "torch" or is_stdlib(site.file):
        third = [f for f in stack if not f.user and library_of(f.file) not in (None, "torch") and not is_stdlib(f.file)]
        if third:
            return third[-1]
    return site


def _is_property(frame):
    from ..read.frames import _tree
    tree = _tree(frame.file)
    if tree is None:
        return False
    import ast
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == frame.function and \
                n.lineno <= frame.line <= (n.end_lineno or n.lineno):
            return any(isinstance(d, ast.Name) and d.id in ("property", "cached_property") or
                       isinstance(d, ast.Attribute) and d.attr in ("setter", "getter") for d in n.decorator_list)
    return False


def _construct(gb_id, site, gb):
    """A recipe matched to the construct at the break line (a data-dependent value used as a size,
    as a branch condition, printed), more specific than the recipe of the registry id."""
    if site is None:
        return None
    return knowledge.construct_recipe(gb_id, _statement(site), gb["gb_type"] or "")


def _graph_breaks(tr):
    sites, seen = {}, set()
    entries = set()   # (file, function) of the functions called through torch.compile's wrapper
    for e in tr.of("dynamo_start"):
        fr = tr.frames(e.data.get("stack"))
        if len(fr) > 1 and "/torch/_dynamo/" in fr[-2][0].replace("\\", "/"):
            entries.add((fr[-1][0], fr[-1][2]))
    for e in tr.artifacts("dynamo_graph_break_reason"):
        gb = parse_graph_break(e.payload)
        key_ev = (e.compile_id, gb["site_file"], gb["site_line"], gb["gb_type"], e.rank)
        if key_ev in seen:  # the same break logged again on a restart of the same frame
            continue
        seen.add(key_ev)
        gb_id = gb["gb_ids"][0] if gb["gb_ids"] else None
        key = (gb["site_file"], gb["site_line"], gb_id or gb["gb_type"])
        if key not in sites:
            sites[key] = make_break(gb, gb_id, entries=entries)
        b = sites[key]
        b.count += 1
        if e.compile_id and e.compile_id not in b.frames:
            b.frames.append(e.compile_id)
    # a frame that broke and then produced no graph at all was skipped: it runs eagerly
    metrics = [e for e in tr.of("compilation_metrics") if e.data.get("graph_op_count") is None]
    no_graph = {e.compile_id for e in metrics}
    no_graph_fns = {(e.data.get("co_name"), os.path.abspath(str(e.data.get("co_filename")))) for e in metrics}
    for b in sites.values():
        if b.frames and all(f in no_graph for f in b.frames):
            b.fix["frame_skipped"] = True
        if b.fix.get("frame_skipped") and b.location and b.location.line and is_user_file(b.location.file):
            b.fix.update(_skipped_block(b, no_graph_fns) or {})
    return sorted(sites.values(), key=lambda b: -b.count)


def _skipped_block(b, no_graph_fns):
    """{"skipped_in": block} for a skipped frame whose break is inside a try/with/loop: the break's own function,
    or a caller of it that Dynamo compiled with no graph (the helper that breaks was inlined into it and called
    from inside its try; review of batch 21). Callers outside the compiled frames are not looked at: a training
    loop around model(x) is not compiled."""
    outer = [f for f in reversed(b.user_stack[:-1]) if f.line and is_user_file(f.file)
             and (f.function, os.path.abspath(f.file)) in no_graph_fns]
    for i, f in enumerate([b.location] + outer):
        block = enclosing_block(f.file, f.line)
        if block:
            if i:
                block.update(file=os.path.basename(f.file), function=f.function, call=f.line)
            return {"skipped_in": block}
    return None


_RESUMABLE_WITH = re.compile(r"\b(?:no_grad|enable_grad|set_grad_enabled|inference_mode|autocast)\b")


def enclosing_block(path, line):
    """{"kind": "try"|"with"|"loop", "line"} of the outermost try / with / for / while block of the function that
    holds `line`, or None: Dynamo cannot resume after a graph break inside one, so it runs the whole function
    eagerly (blind A/B batch 21: an int(lengths.max()) inside a try, 0 graphs; the fix is to move the line out).
    The outermost, as moving the line out of an inner block inside a loop still leaves it in the loop; `with`
    blocks of grad-mode and autocast managers are left out: Dynamo resumes inside those (review)."""
    import ast
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return None
    kinds = {ast.Try: "try", ast.With: "with", ast.For: "loop", ast.While: "loop"}
    if hasattr(ast, "TryStar"):
        kinds[ast.TryStar] = "try"
    best = None

    def walk(node, in_fn):
        nonlocal best
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                if child.lineno <= line <= (child.end_lineno or child.lineno):
                    best = None     # only blocks inside the innermost function count
                    walk(child, True)
                continue
            kind = kinds.get(type(child))
            if kind == "with" and all(_RESUMABLE_WITH.search(ast.unparse(it.context_expr)) for it in child.items):
                kind = None
            if kind and in_fn and best is None and child.lineno < line <= (child.end_lineno or child.lineno):
                best = {"kind": kind, "line": child.lineno}
            walk(child, in_fn)
    walk(tree, False)
    return best


_HOP_RE = re.compile(r"^Higher Order Operator: ([\w.]+)")
# higher-order ops whose whole call runs eagerly after a break in their body (checkpoint is @torch._disable_dynamo in
# torch/utils/checkpoint.py); torch names other ops too on an Unsupported raised in their handler, where an
# autograd.Function's forward, say, is still compiled as frames of its own around the break (review)
_EAGER_HOPS = ("torch.utils.checkpoint.checkpoint",)
_COMPREHENSIONS = ("<dictcomp>", "<listcomp>", "<setcomp>", "<genexpr>")
_BACKWARD_HOOK_RE = re.compile(r"\.register_(?:full_)?backward_hook\(")


def make_break(gb, gb_id, location=None, entries=()):
    stack = chain(gb["frames"])
    user_frames = [f for f in stack if f.user]
    site = stack[-1] if stack else (_loc(gb["site_file"], gb["site_line"]) if gb["site_file"] else None)
    if site is not None and site.display is None:
        chain([site])
    loc = location or (user_frames[-1] if user_frames else site) or Location(file="?")
    if loc.code is None and loc.line:
        loc.code = src_line(loc.file, loc.line)
    recipe = _construct(gb_id, site, gb) or knowledge.graph_break_recipe(gb_id, f"{gb['gb_type']}\n{gb['text']}")
    fix = dict(recipe)
    hop = _HOP_RE.match(gb["gb_type"] or "")
    if hop and hop.group(1) in _EAGER_HOPS and fix.get("fix"):   # a break inside a higher-order op's body is reported under the op's name (blind A/B
        # batch 58: "GB0170: Higher Order Operator: torch.utils.checkpoint.checkpoint" read as checkpoint being the cause)
        fix["fix"] = knowledge.advice("break_inside_hop", hop=hop.group(1)) + " " + fix["fix"]
    if gb_id and "recipe_id" not in recipe:   # no curated recipe: torch's page for this break id
        fix["url"] = f"https://meta-pytorch.github.io/compile-graph-break-site/gb/gb{gb_id[2:].lower()}.html"
    also = gb["gb_ids"][1:]
    if also:
        fix["also"] = [{"gb_id": i, "gb_type": knowledge.gb_type_of(i),
                        "fix": knowledge.graph_break_recipe(i, "").get("fix")} for i in also]
    if gb["frame_skipped"]:
        fix["frame_skipped"] = True
    in_lib = site is not None and not site.user
    if in_lib and "/torch/_library/" in (site.file or "").replace("\\", "/") and gb_id == "GB0112":
        # a custom op's fake kernel raised: the fake is the user's code, torch's custom-op call is not at fault
        # (blind A/B batch 15: "in library code (torch)" and a workaround disabling CustomOpDef.__call__)
        in_lib = False
    if in_lib and gb_id == "GB0083" and any(_BACKWARD_HOOK_RE.search(read_text(f)) for f in {x.file for x in user_frames}):
        # the program registers the module backward hooks itself; the break is only reported inside the library
        # that calls the hooked module (blind A/B batch 38: "in library code (transformers), not yours")
        in_lib = False
    if (in_lib and user_frames and is_stdlib(owner_frame(stack, site).file) and not LOGGER_RE.search(gb["text"] or "")
            and not wrapper_of(stack)):
        # the break is in the standard library, with no third-party frame between it and the program (the program
        # calls copy.deepcopy(t), or torch's own helper does for it): the fix is at the program's line, not "a patch
        # upstream" of copy or a global torch.compiler.disable(copy.deepcopy) (blind A/B batch 44). Under DDP's / FSDP's
        # forward (contextlib in _run_ddp_forward) the break is the wrapper's, labelled below (test_multirank)
        in_lib = False
    built = _module_built_here(gb_id, stack, site, user_frames) if in_lib else None
    if built:
        # the program constructs a torch.nn module inside the compiled code; its __init__ makes the Parameters (blind
        # A/B batch 64: `nn.LayerNorm(d)(t)` in a QK-norm helper was "in library code (torch), for a patch upstream")
        line, name, lazy = built
        in_lib, loc = False, line
        where_ = f"{os.path.basename(line.file)}:{line.line}"
        text = knowledge.advice("module_built_lazily", module=name, at=where_) if lazy else \
            knowledge.advice("module_built_in_compiled", module=name, at=where_)
        fix = dict({k: v for k, v in fix.items() if k in ("frame_skipped", "also", "url")}, category="module built in "
                   "compiled code", recipe_id="module_built_lazily" if lazy else "module_built_in_compiled", fix=text)
    wr = wrapper_of(stack) if in_lib else None
    skipped = _SKIPPED_FILE_RE.search(gb["explanation"] or "") if gb_id == "GB0007" and not in_lib else None
    if skipped and _OPTIMIZER_STEP_RE.match(skipped.group(1)):
        # the user's line calls optimizer.step(), which an LR scheduler wrapped (torch/optim/lr_scheduler.py, a
        # file Dynamo skips): the wrapper's, expected. A scheduler's own method called there (`LambdaLR.step`,
        # `get_last_lr`) is not: it can move out of the compiled function (review of batch 16's fix)
        fr = chain([Location(file=skipped.group(2))])
        wr = wrapper_of(fr)
        if wr:
            stack, in_lib, site = stack + fr, True, fr[0]
    if wr:  # DDP's / FSDP's own code breaks by design: its facts replace the break id's recipe and workarounds
        label = wrapper_label(*wr)
        fix = {k: v for k, v in fix.items() if k in ("frame_skipped", "also", "url")}
        fix.update(category=wr[0]["category"], fix="", recipe_id=f"wrapper:{wr[0]['id']}", wrapper=label)
        ways = [{"source": "knowledge", "text": label["expected"]},
                {"source": "knowledge", "text": label["setup"]}] + [{"source": "pytorch", "text": h} for h in gb["hints"]]
    elif site is not None and site.function in _COMPREHENSIONS and "implements '__next__' in C" in gb["explanation"]:
        fix = {"category": "comprehension frame", "fix": knowledge.advice("comprehension_frame"),
               "recipe_id": "comprehension_frame", "follows_break": True,
               **{k: v for k, v in fix.items() if k in ("url", "frame_skipped")}}
        ways = []
    elif not in_lib and site is not None and not site.user:
        ways = [{"source": "pytorch", "text": h} for h in gb["hints"]]
    else:
        ways = _workarounds(gb, recipe, stack, site, entries) if site else [{"source": "pytorch", "text": h} for h in gb["hints"]]
    return GraphBreak(
        site=f"{gb['site_file']}:{gb['site_line']}", gb_id=gb_id,
        gb_type=gb["gb_type"] or knowledge.gb_type_of(gb_id) or "graph break",
        category=fix.get("category", "other graph break"), location=loc, explanation=gb["explanation"],
        hints=gb["hints"], count=0, frames=[], fix=fix, user_stack=user_frames[-4:], stack=stack,
        in_library=in_lib, library=library_of((wr[1] if wr else owner_frame(stack, site)).file) if in_lib else None,
        workarounds=ways)


# GB0007's explanation: "... marked that the function `Adam.step` in file `/.../torch/optim/lr_scheduler.py` ..."
_SKIPPED_FILE_RE = re.compile(r"the function `([^`]*)` in file `([^`]+)`")
# an optimizer's step by its qualname (`Adam.step`); LR schedulers' classes end in LR / Scheduler / Plateau
_OPTIMIZER_STEP_RE = re.compile(r"^(?!\w*(?:LR|Scheduler|Plateau)\.)\w+\.step$")


_FAKE_RAISED_RE = re.compile(r"fake tensor raised (\w+)[\s\S]*?^(?:\S+\s+\S+\s+\d+\s+\S+\]\s+(?:\[[^\]]*\]\s+)?)?"
                             r"(\1: .+)$", re.M)


def fake_kernel_errors(rep, stderr):
    """Put the exception a fake kernel raised (torch logs it, the break's explanation is empty) on the
    GB0112 breaks it caused."""
    m = _FAKE_RAISED_RE.search(stderr or "")
    if not m:
        return
    for b in rep.graph_breaks:
        if b.gb_id == "GB0112" and not b.explanation:
            b.explanation = f"the fake kernel raised {m.group(2).strip()[:300]}"


def breaks_from_errors(rep, stderr=""):
    """Under fullgraph=True the first break is an exception, not a logged break: list it too."""
    from ..read.frames import parse_exception
    exc = None
    for err in rep.errors:
        if err.category != "graph_break_fullgraph":
            continue
        if err.location and any(b.location.file == err.location.file and b.location.line == err.location.line
                                for b in rep.graph_breaks):
            continue
        full = err.message or ""
        if exc is None:
            exc = parse_exception(stderr) or {}
        msg = exc.get("message") or full
        head, _, user = msg.partition("from user code:")
        gb = parse_graph_break("Graph Break Reason: " + head)
        gb["frames"] = parse_py_frames(user)
        gb["gb_ids"] = gb["gb_ids"] or ([err.gb_id] if err.gb_id else [])
        gb["gb_type"] = gb["gb_type"] or knowledge.gb_type_of(err.gb_id) or (full.splitlines() or ["graph break"])[0]
        if gb["frames"]:
            gb["site_file"], gb["site_line"] = gb["frames"][-1].file, gb["frames"][-1].line
        elif err.location:
            gb["site_file"], gb["site_line"] = err.location.file, err.location.line
        b = make_break(gb, err.gb_id or (gb["gb_ids"] or [None])[0], location=err.location)
        b.count, b.frames = 1, [err.compile_id] if err.compile_id else []
        rep.graph_breaks.append(b)


def wrapper_break_sites(tr):
    """(file, line) of the user's line where a wrapper's own code broke the graph -> the wrapper."""
    sites = {}
    for e in tr.artifacts("dynamo_graph_break_reason"):
        gb = parse_graph_break(e.payload)
        stack = chain(gb["frames"])
        wr = wrapper_of(stack)
        user = [f for f in stack if f.user]
        if wr and user:
            sites.setdefault((user[-1].file, user[-1].line), (wr[0], user[-1]))
    return sites


_ATEN_UNSUPPORTED = re.compile(r"unsupported operator: (aten\.[\w.]+)|UnsupportedOperatorException: (aten\.[\w.]+)")


def aten_op_without_fake(rep):
    """custom_op_no_fake raised for one of PyTorch's own operators (aten.*): not a custom op. With static shapes
    tracing runs such an op's real kernel on stand-in data; a compile with a dynamic size cannot, so it fails where
    the first, static compile worked (blind A/B batch 55: Dirichlet.rsample's aten._sample_dirichlet in a VAE loss,
    after the short last batch made the batch dim dynamic; the row said "custom op" and register_fake)."""
    e = rep.errors[0] if rep.errors else None
    m = _ATEN_UNSUPPORTED.search(e.message or "") if e is not None and e.category == "custom_op_no_fake" else None
    if not m:
        return
    op = (m.group(1) or m.group(2)).removesuffix(".default")
    dyn = next((c for fr in rep.recompiles for c in fr.causes
                if e.compile_id in (c.get("compile_ids") or []) and c.get("kind") in ("shape", "stride")), None)
    made = (f": the compile that failed ({e.compile_id}) is the recompile for {dyn['cause']}, which automatic dynamic "
            "made symbolic" if dyn else "")
    e.category, e.side, e.skill, e.next_command = "aten_op_no_fake", "user", "trace-dynamo", None
    e.title = f"PyTorch's own operator `{op}` has no fake (meta) kernel: it traces only at static shapes"
    e.advice = knowledge.advice("aten_op_no_fake", op=op, made=made, name=op.split(".", 1)[1])
