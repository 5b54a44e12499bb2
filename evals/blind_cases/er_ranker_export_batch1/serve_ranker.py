"""Candidate re-ranker: train briefly, export with a dynamic batch dim, replay serving traffic.

The feature service hands us candidate embeddings packed field-major:
    packed[f * B + b] = embedding of field f for request b      -> shape [N_FIELDS * B, D]
and one user embedding per request                             -> shape [B, D]
"""
import os
import time
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.export import Dim

torch.manual_seed(0)

N_FIELDS = 5          # item, category, seller, price bucket, recency bucket
EMB_DIM = 32
HIDDEN = 64
MAX_BATCH = 64


class FieldTower(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.proj = nn.Linear(dim, hidden)
        self.norm = nn.LayerNorm(hidden)

    def forward(self, x):
        return self.norm(F.gelu(self.proj(x)))


class FieldInteractionRanker(nn.Module):
    def __init__(self, n_fields=N_FIELDS, dim=EMB_DIM, hidden=HIDDEN):
        super().__init__()
        self.n_fields = n_fields
        self.dim = dim
        self.user_tower = nn.Sequential(
            nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, hidden), nn.LayerNorm(hidden)
        )
        self.field_towers = nn.ModuleList([FieldTower(dim, hidden) for _ in range(n_fields)])
        self.field_bias = nn.Parameter(torch.zeros(n_fields))
        self.head = nn.Sequential(nn.Linear(2 * n_fields, hidden), nn.GELU(), nn.Linear(hidden, 1))

    def forward(self, packed, user):
        fields = packed.view(self.n_fields, -1, self.dim)
        u = self.user_tower(user)
        sims, gates = [], []
        for f in range(self.n_fields):
            h = self.field_towers[f](fields[f])
            sims.append((h * u).sum(-1) / HIDDEN ** 0.5 + self.field_bias[f])
            gates.append(torch.sigmoid((h - u).pow(2).mean(-1)))
        feats = torch.cat([torch.stack(sims, 1), torch.stack(gates, 1)], dim=1)
        return self.head(feats).squeeze(-1)


def make_batch(batch, gen):
    user = torch.randn(batch, EMB_DIM, generator=gen)
    per_field = torch.randn(N_FIELDS, batch, EMB_DIM, generator=gen)
    per_field[0] = 0.6 * per_field[0] + 0.4 * user          # item embedding correlates with user
    packed = per_field.reshape(N_FIELDS * batch, EMB_DIM).contiguous()
    label = ((per_field[0] * user).sum(-1) > 0).float()
    return packed, user, label


def train(model, steps=60, batch=48):
    gen = torch.Generator().manual_seed(1)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    model.train()
    for step in range(steps):
        packed, user, label = make_batch(batch, gen)
        loss = F.binary_cross_entropy_with_logits(model(packed, user), label)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 20 == 0 or step == steps - 1:
            print(f"train step {step:3d}  loss {loss.item():.4f}")
    model.eval()


def export_for_serving(model, path):
    batch = Dim("batch", min=1, max=MAX_BATCH)
    example = make_batch(8, torch.Generator().manual_seed(2))[:2]
    dynamic_shapes = {"packed": {0: N_FIELDS * batch}, "user": {0: batch}}
    t0 = time.time()
    with torch.no_grad():
        ep = torch.export.export(model, example, dynamic_shapes=dynamic_shapes)
    torch.export.save(ep, path)
    print(f"exported in {time.time() - t0:.1f}s -> {os.path.basename(path)}")
    print("range constraints:", {str(k): str(v) for k, v in ep.range_constraints.items()})
    return path


def replay_traffic(model, path, batch_sizes):
    served = torch.export.load(path).module()
    gen = torch.Generator().manual_seed(3)
    failures = 0
    for bs in batch_sizes:
        packed, user, _ = make_batch(bs, gen)
        with torch.no_grad():
            ref = model(packed, user)
            try:
                out = served(packed, user)
            except Exception as exc:
                failures += 1
                print(f"batch {bs:3d}: FAILED  {type(exc).__name__}: {exc}")
                continue
        err = (out - ref).abs().max().item()
        status = "ok" if err < 1e-4 else "MISMATCH"
        print(f"batch {bs:3d}: max|served-eager| = {err:.2e}  {status}")
        failures += status != "ok"
    return failures


def main():
    model = FieldInteractionRanker()
    train(model)
    with tempfile.TemporaryDirectory() as d:
        path = export_for_serving(model, os.path.join(d, "ranker.pt2"))
        # batch sizes seen in yesterday's request log (peak hours first, then overnight trickle)
        traffic = [64, 32, 17, 8, 3, 2, 1, 5, 1]
        failures = replay_traffic(model, path, traffic)
    print(f"replayed {len(traffic)} batches, {failures} failures")
    raise SystemExit(1 if failures else 0)


if __name__ == "__main__":
    main()
