"""torch wrappers (DDP, FSDP2, torch.optim) whose own code breaks the graph or installs guards under
torch.compile by design: which break / guard / compiled function is theirs, by the frames it passes
through (knowledge/graph_breaks.yaml `wrappers`). No torch import."""
import os

from . import knowledge


def wrapper_of(stack):
    """(knowledge entry, frame) of the torch wrapper (DDP, FSDP2, torch.optim: graph_breaks.yaml `wrappers`)
    whose code the chain passes through, innermost frame first; None when the chain has none."""
    for f in reversed(stack or []):
        path = (f.file or "").replace("\\", "/")
        for w in knowledge.load("graph_breaks").get("wrappers") or []:
            if any("/site-packages/" + p in path or (f.display or "").startswith(p) for p in w["paths"]):
                return w, f
    return None


def wrapper_label(w, frame):
    return {"id": w["id"], "name": w["name"], "frame": f"{frame.display or frame.file}:{frame.line}",
            "function": frame.function, "expected": " ".join(w["expected"].split()),
            "setup": " ".join(w["setup"].split())}


def split_by_wrapper(tr, frame_id, sites):
    """A function compiled on its own because a wrapper's hooks broke the graph at its call site
    (FSDP2: each sharded block's forward): a label, else None."""
    if not sites:
        return None
    for e in tr.of("dynamo_start"):
        if e.meta.get("frame_id") != frame_id:
            continue
        for f in tr.frames(e.data.get("stack"))[:-1]:
            hit = sites.get((f[0], f[1]))
            if hit:
                w, at = hit
                code = f" `{at.code.strip()}`" if at.code else ""
                return (f"{w['name']} (its hooks break the graph at {os.path.basename(at.file)}:{at.line}{code}, "
                        "so this function is compiled on its own)")
        break
    return None
