"""The graph-break and recompile lines of the report's Next list, from the breaks analyze_dynamo read: the block a
break sits in, torch's hints and our recipe, where a static-shape switch applies. No torch import."""
import os
import re

from . import knowledge


BLOCK_WORD = {"try": "`try` block", "with": "`with` block", "loop": "loop"}


def block_where(blk):
    """"the `try` block at line 16" or, for a caller's block, "the `try` block at prog.py:16 (around the call at
    line 17, in forward)": the words views_dynamo and the Next step use for fix["skipped_in"]."""
    if blk.get("call"):
        return (f"the {BLOCK_WORD[blk['kind']]} at {blk['file']}:{blk['line']} (around the call at line {blk['call']}, "
                f"in {blk['function']})")
    return f"the {BLOCK_WORD[blk['kind']]} at line {blk['line']}"


def eager_explained(rep):
    """{breaks, recompiles}: ids of the graph breaks and recompiled functions that the program's own error explains,
    where it fails the same way without torch.compile: fixing that error removes them, so they get no Next of their
    own. GB0088 "Observed exception" (Dynamo met the exception; blind A/B batch 63: flex_attention's CPU backward
    check, the break's Next offered torch.compiler.disable on transformers' wrapper); a break whose text is the eager
    error's; a recompile whose new compiles all failed (blind A/B batch 65: torch.func.grad over a register_autograd
    custom op, "must override the setup_context staticmethod" as GB0149 and a dispatch-key recompile that failed)."""
    if (rep.verdict or {}).get("kind") != "fails_eager_too":
        return {"breaks": set(), "recompiles": set()}
    said = " ".join(((rep.verdict.get("eager") or {}).get("message") or "").split())[:60]
    breaks = {id(b) for b in rep.graph_breaks if b.gb_id == "GB0088" or (
        len(said) >= 20 and said in " ".join(f"{b.gb_type} {b.explanation or ''}".split()))}
    failed = {g.compile_id for g in rep.graphs if g.failed}
    recompiles = set()
    for f in rep.recompiles:
        ids = [i for c in f.causes for i in c.get("compile_ids") or []]
        if ids and all(i in failed for i in ids):
            recompiles.add(id(f))
    return {"breaks": breaks, "recompiles": recompiles}


def next_steps(rep):
    """The graph-break / recompile lines of the report's "Next" list."""
    steps = []
    # DDP/FSDP internals: not the user's; a comprehension's own frame: goes with the break before it
    own = [b for b in rep.graph_breaks if not b.fix.get("wrapper") and not b.fix.get("follows_break")]
    explained = eager_explained(rep)
    for b in rep.graph_breaks:
        if id(b) in explained["breaks"]:
            b.fix["explained_by_eager"] = True   # the report says so at the break instead of its fix
    own = [b for b in own if id(b) not in explained["breaks"]]
    bad = [f for f in rep.recompiles if (f.limit_hit or (f.recompiles and not f.expected_only))
           and id(f) not in explained["recompiles"]]
    # recompiles on a value carried across a graph break go with that break: it is the one to fix first
    carried = {(f.location.file, int(m.group(1))) for f in bad
               for m in [re.search(r"resumed after the graph break at line (\d+)\)", f.function)]
               if m and any(c["kind"] == "graph_break_value" and not c["expected"] for c in f.causes)}
    if own:
        b = next((b for b in own if (b.location.file, b.location.line) in carried), own[0])
        where = f"{os.path.basename(b.location.file)}:{b.location.line}" + b.inside_library()
        blk = b.fix.get("skipped_in")
        inside = (f": it is inside {block_where(blk)}, where Dynamo cannot resume "
                  "after a break, so the whole function runs eagerly; " + (
                      "compute it before or after the loop, keep the loop outside torch.compile and compile its body "
                      "as a function of its own, or remove the break" if blk["kind"] == "loop" else
                      f"move the {'call' if blk.get('call') else 'line'} out of that block first (the rest then compiles), or remove the break")
                  if blk and not b.in_library else "")
        # a library setting from knowledge/graph_breaks.yaml, whole (blind A/B batch 27: transformers' dynamic RoPE)
        known = [w for w in b.workarounds if w["source"] == "knowledge"] if b.in_library else []
        steps.append({"why": f"fix graph break at {where} ({b.gb_id or b.category}){inside}; "
                             + (f"{known[0].get('label') or knowledge.setting_label({})}: {known[0]['text']}" if known else
                                "workarounds above (no library edit)" if b.in_library else "recipe above"),
                      "skill": "trace-dynamo", "command": None, "fixable": True, "code_edit": not b.in_library})
    else:
        names = list(dict.fromkeys(b.fix["wrapper"]["name"] for b in rep.graph_breaks if b.fix.get("wrapper")))
        if names:
            steps.append({"why": f"nothing of yours to fix in the graph breaks: they are {' and '.join(names)}'s own, "
                                 "expected with torch.compile (what you can change is above)",
                          "skill": "trace-dynamo", "command": None})
    if bad:
        causes = [c["cause"] + (f" made static at {os.path.basename(c['specialized_at'].file)}:"
                                f"{c['specialized_at'].line}" if c.get("specialized_at") else
                                f" pinned by float math at {os.path.basename(c['location'].file)}:{c['location'].line}"
                                if c.get("kind") == "size_arithmetic" and getattr(c.get("location"), "line", None) else "")
                  for f in bad for c in f.causes if not c["expected"] and not (carried and c["kind"] == "graph_break_value")]
        if carried:
            causes.append(f"values carried across the graph break at line {', '.join(str(x[1]) for x in sorted(carried))}"
                          ": fixing that break stops them")
        fams = {}
        for x in dict.fromkeys(causes):      # one per layer (`layers[0]`…`layers[7]`): once, with a count
            fams.setdefault(re.sub(r"\[\d+\]", "[i]", x), []).append(x)
        causes = [f"{k} (one per index, {len(v)} in all)" if len(v) > 1 else v[0] for k, v in fams.items()]
        what = f" ({', '.join(dict.fromkeys(causes))[:200]})" if causes else ""
        static = [f for f in bad if any(c.get("static_option") for c in f.causes)]
        lost = [c["mark_lost"] for f in bad for c in f.causes if c.get("mark_lost")]
        if lost:
            what += (f": the program marks the dim dynamic at {os.path.basename(lost[0][0])}:{lost[0][1]}, but the "
                     "tensor compiled carried no mark")
        elif static:
            what += ": " + _static_where(rep, static[0].function.split(" ")[0]) + ", so each size is a graph"
        if any(f.limit_hit and any(c["kind"] == "parameter_shape" for c in f.causes) for f in bad):
            # parameters of other shapes: other models of one class, whose graphs share the function's cache
            what += ("; models of one class with other parameter shapes share one cache (graphs are kept per code "
                     "object, not per model or torch.compile call): in a test or sweep over configs, "
                     "torch._dynamo.reset() before each model")
        if any(c["fix"].startswith("A library setting avoids it:") for f in bad for c in f.causes if not c["expected"]):
            short = [c.get("setting") for f in bad for c in f.causes if not c["expected"] and c.get("setting")]
            what += "; a library setting avoids it" + (f": {short[0]}" if short else "")
        # sizes the program itself made static: no config switch keeps them dynamic, the fix is an edit
        edit_only = all(c.get("specialized_at") or c.get("kind") == "size_arithmetic"
                        for f in bad for c in f.causes if not c["expected"]) \
            and not any(f.limit_hit and not f.recompiles for f in bad) and bool(causes) or bool(lost)
        made = [c for f in bad for c in f.causes if not c["expected"]]
        if made and all(c.get("specialized_at") and c.get("primary", 1) <= 1 for c in made) \
                and not any(f.limit_hit for f in bad):
            # one recompile per dim so far: the cost is per new size (review of batch 45: a run with two sizes only)
            what += "; one recompile per dim in this run, and each further size adds another"
        steps.append({"why": f"stop the recompiles{what} (fix per cause above)", "skill": "trace-dynamo",
                      "command": None, "fixable": not edit_only, "edit_only": edit_only})
    return steps


def _static_where(rep, function):
    """What in the program's source turned automatic dynamic shapes off for `function`: its own
    dynamic=False compile, else a config assignment, else the only dynamic=False compile; no line when the
    source does not say which."""
    from ..cmdline import script_of
    from ..read import never_ran
    script = script_of(rep.command)
    found = never_ran.static_compiles([script] if script else [])
    own = [x for x in found if x[2] == function]
    glob = [x for x in found if x[2] is None]
    calls = [x for x in found if x[2] is not None]
    if len(own) == 1:
        return f"the function is compiled with dynamic=False at {os.path.basename(own[0][0])}:{own[0][1]}"
    if glob:
        return (f"automatic dynamic shapes are off (torch._dynamo.config.automatic_dynamic_shapes = False at "
                f"{os.path.basename(glob[0][0])}:{glob[0][1]})")
    if len(calls) == 1:
        return f"the function is compiled with dynamic=False at {os.path.basename(calls[0][0])}:{calls[0][1]}"
    return "automatic dynamic shapes are off for this function (dynamic=False, or the config)"
