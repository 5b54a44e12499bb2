"""Late-interaction passage reranker: build the serving package and replay traffic.

Step 1 exports the reranker with torch.export and packages it with AOTInductor
(the artifact the serving pods load). Step 2 replays a slice of logged traffic
through the package and through the eager model and reports MRR@10.
"""
import math
import os
import random
import tempfile
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.export import Dim

VOCAB = 4000
HIDDEN = 128
HEADS = 4
LAYERS = 2
PAD = 0
MAX_TOKENS = 256
EXPORT_PAD_LEN = 32

# Dynamic axes, same layout as the old ONNX export config.
DYNAMIC_AXES = {
    "query_ids": {0: "batch", 1: "tokens"},
    "query_mask": {0: "batch", 1: "tokens"},
    "doc_ids": {0: "batch", 1: "tokens"},
    "doc_mask": {0: "batch", 1: "tokens"},
}


class Block(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x, mask):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        attn_mask = mask[:, None, None, :].bool()
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
        x = x + 0.5 * self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + 0.5 * self.ff(self.ln2(x))


class LateInteractionReranker(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, HIDDEN, padding_idx=PAD)
        self.pos = nn.Embedding(MAX_TOKENS, HIDDEN)
        self.blocks = nn.ModuleList([Block(HIDDEN, HEADS) for _ in range(LAYERS)])
        self.out = nn.Linear(HIDDEN, 64, bias=False)

    def encode(self, ids, mask):
        pos = torch.arange(ids.shape[1], device=ids.device)
        x = self.tok(ids) + 0.1 * self.pos(pos)[None]
        for blk in self.blocks:
            x = blk(x, mask)
        return F.normalize(self.out(x), dim=-1) * mask[..., None].to(x.dtype)

    def forward(self, query_ids, query_mask, doc_ids, doc_mask):
        qv = self.encode(query_ids, query_mask)
        dv = self.encode(doc_ids, doc_mask)
        sim = torch.einsum("bqh,bdh->bqd", qv, dv)
        sim = sim.masked_fill(doc_mask[:, None, :] == 0, -1e4)
        best = sim.amax(dim=-1) * query_mask.to(sim.dtype)
        return best.sum(-1) / query_mask.sum(-1).clamp(min=1).to(sim.dtype)


def build_dynamic_shapes(axes):
    dims = {}

    def get(name):
        if name not in dims:
            dims[name] = Dim(name, min=1, max=MAX_TOKENS if name != "batch" else 512)
        return dims[name]

    return {inp: {ax: get(n) for ax, n in spec.items()} for inp, spec in axes.items()}


def pad_batch(seqs, length=None):
    length = length or max(len(s) for s in seqs)
    ids = torch.full((len(seqs), length), PAD, dtype=torch.long)
    mask = torch.zeros((len(seqs), length), dtype=torch.long)
    for i, s in enumerate(seqs):
        s = s[:length]
        ids[i, : len(s)] = torch.tensor(s)
        mask[i, : len(s)] = 1
    return ids, mask


def make_traffic(n_requests, n_cands, rng):
    """Logged requests: a query and candidate passages, one of them clicked."""
    reqs = []
    for _ in range(n_requests):
        topic = rng.sample(range(1, VOCAB), 12)
        q = rng.sample(topic, rng.randint(4, 10))
        cands = []
        pos_idx = rng.randrange(n_cands)
        for c in range(n_cands):
            n = rng.randint(30, 110)
            body = [rng.randrange(1, VOCAB) for _ in range(n)]
            k = 2 * len(q) if c == pos_idx else rng.choice([0, 0, 1, 3, len(q)])
            for j in rng.sample(range(n), k):
                body[j] = rng.choice(q)
            cands.append(body)
        reqs.append((q, cands, pos_idx))
    return reqs


def export_package(model, workdir):
    ex_q, ex_qm = pad_batch([[5, 6, 7, 8]] * 2, EXPORT_PAD_LEN)
    ex_d, ex_dm = pad_batch([list(range(10, 40)), list(range(50, 70))], EXPORT_PAD_LEN)
    example = (ex_q, ex_qm, ex_d, ex_dm)
    ds = build_dynamic_shapes(DYNAMIC_AXES)
    t0 = time.time()
    ep = torch.export.export(model, example, dynamic_shapes=ds)
    path = torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(workdir, "reranker.pt2"))
    print(f"[export] package written in {time.time() - t0:.1f}s -> {os.path.basename(path)}")

    runner = torch._inductor.aoti_load_package(path)
    with torch.no_grad():
        ref = model(*example)
        got = runner(*example)
    diff = (ref - got).abs().max().item()
    status = "OK" if diff < 1e-4 else "FAIL"
    print(f"[export] smoke test vs eager: max|diff| = {diff:.2e}  {status}")
    return path


def mrr_at_10(score_fn, traffic):
    rr = []
    for q, cands, pos in traffic:
        qi, qm = pad_batch([q] * len(cands))
        di, dm = pad_batch(cands)
        with torch.no_grad():
            s = score_fn(qi, qm, di, dm)
        rank = int((s > s[pos]).sum().item()) + 1
        rr.append(1.0 / rank if rank <= 10 else 0.0)
    return sum(rr) / len(rr)


def main():
    torch.manual_seed(0)
    rng = random.Random(7)
    model = LateInteractionReranker().eval()
    with tempfile.TemporaryDirectory() as wd:
        ckpt = os.path.join(wd, "reranker_step42000.pt")
        torch.save(model.state_dict(), ckpt)
        model.load_state_dict(torch.load(ckpt))

        path = export_package(model, wd)

        traffic = make_traffic(60, 16, rng)
        runner = torch._inductor.aoti_load_package(path)
        t0 = time.time()
        served = mrr_at_10(runner, traffic)
        t_served = time.time() - t0
        offline = mrr_at_10(model, traffic)
        print(f"[replay] {len(traffic)} requests x 16 candidates")
        print(f"[replay] MRR@10 offline (eager model) : {offline:.3f}")
        print(f"[replay] MRR@10 served  (AOTI package): {served:.3f}   ({t_served:.2f}s)")
        if served < offline - 0.02:
            print("[replay] REGRESSION: served ranking quality below offline eval")


if __name__ == "__main__":
    main()
