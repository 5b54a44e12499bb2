"""Two compiled models served from two threads: one thread runs its loop inside
torch.compiler.set_stance(skip_guard_eval_unsafe=True); the stance is process-wide, so the other thread's classifier,
warmed up with policy "standard" only, serves "strict" requests from the standard graph (no guard checked, no
recompile). Its audit against the model run directly fails (exit 1). FIXED=1 drops the stance.
(Blind A/B batch 65.)"""
import os
import threading

import torch
import torch.nn as nn

FIXED = os.environ.get("FIXED") == "1"


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 3)

    def forward(self, x, policy):
        logits = self.lin(x)
        if policy == "strict":
            logits = logits / 0.5 + 0.25
        return logits.softmax(-1)


class Embedder(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 4)

    def forward(self, x):
        return self.lin(x).tanh()


torch.manual_seed(0)
clf, emb = Classifier().eval(), Embedder().eval()
clf_c, emb_c = torch.compile(clf, backend="eager"), torch.compile(emb, backend="eager")
x = torch.randn(2, 8)
inside, leave = threading.Event(), threading.Event()


def embed_worker():
    with torch.no_grad():
        emb_c(x)
        if FIXED:
            inside.set()
            leave.wait()
            return
        with torch.compiler.set_stance(skip_guard_eval_unsafe=True):
            inside.set()
            leave.wait()
            emb_c(x)


with torch.no_grad():
    clf_c(x, "standard")   # warm-up
    t = threading.Thread(target=embed_worker)
    t.start()
    inside.wait()
    strict = clf_c(x, "strict")
    leave.set()
    t.join()
    ref = clf(x, "strict")
print("strict scores:", [round(v, 4) for v in strict[0].tolist()])
if not torch.allclose(strict, ref, atol=1e-5):
    print(f"AUDIT FAIL: strict scores off by {(strict - ref).abs().max().item():.4f} from the model run directly")
    raise SystemExit(1)
print("AUDIT PASS")
