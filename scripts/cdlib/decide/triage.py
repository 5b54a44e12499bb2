"""triage --from-text: a pasted error or log classified without a run (knowledge rows), with PyTorch's
own warning lines in it and the graph breaks it prints. No torch import."""
import re

from . import knowledge
from .analyze_dynamo import parse_graph_break
from .error_rows import make_error
from ..read.frames import is_user_file, parse_exception
from .printed import torch_warnings
from ..cmdline import cli_command


def classify_text(text):
    """The result of `triage --from-text` for the pasted text: its error, the graph breaks it prints,
    PyTorch's warnings (text without an exception)."""
    found = []
    exc = parse_exception(text)
    sig = next((s for s in ("SIGSEGV", "SIGABRT", "SIGBUS") if s in text), None)
    err = make_error(exc, output=text, signal=sig, source="text")
    warned = []
    if exc is not None and err.category == "user_error" and not sig:
        _no_verdict(err, exc["frames"])
    last = exc["frames"][-1].file.replace("\\", "/") if exc and exc["frames"] else ""
    if err.category == "compiled_runtime_error" and "/torch/_inductor/" in last and \
            not re.search(r"/torch/_inductor/(output_code|utils)\.py$", last):
        # raised inside Inductor's own compiler code (its scheduler, lowerings), not by the compiled graph running: a
        # code line naming `compiled_fn` matched the runtime row (review of 0.33.181: a KeyError in scheduler.py)
        row = knowledge.triage_row("inductor_compile_error")
        _use_row(err, row)
        err.side = row.get("side", "compiler")
    if exc is None and err.category == "user_error":
        # no exception in the text: the first row any of whose patterns occurs anywhere
        row = knowledge.classify_error(text, text)
        err = make_error({"full_type": "text", "type": "text", "message": text.strip().splitlines()[0],
                                  "frames": [], "block": text}, output=text, source="text")
        _use_row(err, row)
        warned = torch_warnings(text)   # PyTorch's own words first
        if row["id"] == "user_error" and not sig:
            # nothing matched: a log without an exception is not "an error in the program" (a CompileQA
            # answer's log of a slowdown was called one)
            err.category, err.title, err.skill, err.next_command = "no_error", "No exception or crash in this text", \
                "overview", None
            err.advice = ("Nothing here raised: paste the whole error from 'Traceback (most recent call last)', or "
                          "run the program itself with triage (`" + cli_command("triage", "--") +
                          " <your command>`), which measures what a log cannot show (graph breaks, recompiles, compiled vs eager).")
    found.append(err)
    # graph breaks / recompiles pasted from TORCH_LOGS output
    breaks = [parse_graph_break(b) for b in _split_log_breaks(text)]
    result = {"command": "triage --from-text", "run_dir": None, "status": "classified",
              "errors": [e.__dict__ | {"location": e.location.__dict__ if e.location else None} for e in found],
              "graph_breaks": [{"site": f"{b['site_file']}:{b['site_line']}", "gb_id": (b["gb_ids"] or [None])[0],
                                "gb_type": b["gb_type"],
                                "fix": knowledge.graph_break_recipe((b["gb_ids"] or [None])[0], b["text"])} for b in breaks]}
    if warned:
        result["warnings"] = warned
    result["exception_parsed"] = bool(exc)   # the text held a Python exception (its type, message: errors[0])
    return result


def _use_row(err, row):
    """The text's error takes a triage row's class: its id, title, skill, advice and command."""
    err.category, err.title, err.skill = row["id"], row["title"], row.get("skill")
    err.next_command = knowledge.render_command(row, cli_command(), None)
    err.advice = " ".join((row.get("advice") or "").split())


# frames of torch.compile's own machinery: a traceback through them was raised inside a compiled call
# (not torch/fx alone: a plain torch.fx.symbolic_trace is no compiled call; review of 0.33.181)
_COMPILE_FRAMES = re.compile(r"torch/(_dynamo|_inductor|_functorch|export|_export|_higher_order_ops)/")


def _no_verdict(err, frames):
    """A pasted exception no row knows: "Error in the program itself" is the verdict of a run that failed eagerly
    too; a text has no such run (CompileQA J1-3: torch.fx's error from DDPOptimizer's graph split, raised under
    torch.compile, was called the program's). Where the traceback passes through torch.compile's frames and its
    innermost frame is not the program's own, say which side is unknown and that triage measures it."""
    if not any(_COMPILE_FRAMES.search(f.file.replace("\\", "/")) for f in frames):
        return
    last = frames[-1].file.replace("\\", "/") if frames else ""
    # (a PyTorch source checkout's /home/u/pytorch/torch/_dynamo/... is torch's, not the program's: review of 0.33.181)
    if last and is_user_file(last) and "/torch/" not in last:
        err.title = "Raised in the program's own code while a compiled call ran (no known compiler error class)"
    else:
        err.category, err.side = "unknown_under_compile", "either"
        err.title = ("No known error class; raised inside a torch.compile call (compiler or program: not known from "
                     "a text)")
    err.advice = ("A pasted traceback cannot show whether this also fails without torch.compile. Triage the program "
                  "(it runs it compiled, then without torch.compile, and says which side fails), or run it once with "
                  "torch.compiler.set_stance(\"force_eager\") at the top.")
    err.next_command = cli_command("triage", "--") + " <your command>"


def _split_log_breaks(text):
    parts = text.split("Graph break in user code at ")
    return ["Graph break in user code at " + p for p in parts[1:]]
