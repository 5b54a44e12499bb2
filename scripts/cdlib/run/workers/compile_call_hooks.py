"""Code triage's never-ran check runs INSIDE the user's unmodified program through the startup hook
(cdlib.run.proc.startup_env [{"code": ...}]): each exception a torch.compile(...) call raises (an invalid
argument: `mode` together with `options`, an unknown backend or mode) is appended as one JSON line to `report`
with the program's line that made the call, and re-raised unchanged. A program that catches it and goes on
uncompiled then shows what it swallowed (blind A/B batch 36: a try/except around torch.compile logged one
warning and ran eagerly). model.compile() goes through torch.compile too."""
import json
import os


def code(report):
    from . import startup_code   # (not at the top: the user's program loads this file by path)
    return startup_code(__file__, "record_raises", report)


def record_raises(report):
    import functools
    import traceback
    import torch
    orig = torch.compile

    @functools.wraps(orig)
    def compile_(*args, **kwargs):
        try:
            return orig(*args, **kwargs)
        except Exception as e:
            here = os.path.dirname(os.path.abspath(__file__))
            frames = [f for f in traceback.extract_stack()[:-1]
                      if os.path.dirname(os.path.abspath(f.filename)) != here and "/torch/" not in f.filename]
            at = frames[-1] if frames else None
            try:
                with open(report, "a", encoding="utf-8") as f:
                    f.write(json.dumps({"type": type(e).__name__, "message": str(e)[:600],
                                        "file": at.filename if at else None, "line": at.lineno if at else None,
                                        "code": (at.line or "") if at else ""}) + "\n")
            except OSError:
                pass
            raise

    torch.compile = compile_
