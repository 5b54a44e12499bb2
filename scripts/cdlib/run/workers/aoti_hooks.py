"""Code triage's AOTI input check runs INSIDE the user's unmodified program through the startup hook
(cdlib.run.proc.startup_env [{"code": ...}]): when a loaded AOTInductor package's call raises, the shapes and
strides of the tensors it was given (input_handles[i] in torch's check message is the i-th) are written as
JSON to `report`, and the error propagates unchanged. torch's AOTI_RUNTIME_CHECK_INPUTS message names a
stride's dim and values but not the sizes; a stride on a size-1 dim reads the same memory."""
import json


def code(report):
    from . import startup_code   # (not at the top: the user's program loads this file by path)
    return startup_code(__file__, "record_inputs", report)


def record_inputs(report):
    import torch
    from torch.utils import _pytree as pytree
    cls = None
    for mod in ("torch.export.pt2_archive._package", "torch._inductor.package.package"):   # 2.9-2.15 / older
        try:
            cls = getattr(__import__(mod, fromlist=["AOTICompiledModel"]), "AOTICompiledModel")
            break
        except (ImportError, AttributeError):
            continue
    if cls is None:
        return
    call = cls.__call__

    def __call__(self, *args, **kwargs):
        try:
            return call(self, *args, **kwargs)
        except Exception:
            try:   # the order torch's call numbers the inputs in: keyword arguments in the exported order
                if kwargs:
                    from torch.export._tree_utils import reorder_kwargs
                    kwargs = reorder_kwargs(kwargs, pytree.treespec_loads(self.loader.get_call_spec()[0]))
                flat = [x for x in pytree.tree_leaves((args, kwargs)) if isinstance(x, torch.Tensor)]
                with open(report, "w", encoding="utf-8") as f:
                    json.dump([{"shape": list(x.shape), "stride": list(x.stride())} for x in flat], f)
            except Exception:   # never change the program's own error
                pass
            raise
    cls.__call__ = __call__
