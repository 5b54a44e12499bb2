import argparse
import time
import torch
import torch.nn as nn
import torch.nn.functional as F

p = argparse.ArgumentParser()
p.add_argument("--compile", action="store_true")
p.add_argument("--steps", type=int, default=30)
args = p.parse_args()

NUM_NODES, NUM_EDGES, FEAT, HIDDEN, CLASSES = 3000, 24000, 32, 64, 5


class MeanConv(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.msg = nn.Linear(d_in, d_out)
        self.upd = nn.Linear(d_in + d_out, d_out)

    def forward(self, h, src, dst, inv_deg):
        m = F.gelu(self.msg(h))[src]
        agg = torch.empty(h.shape[0], m.shape[1], dtype=h.dtype, device=h.device)
        agg.index_add_(0, dst, m)
        agg = agg * inv_deg.unsqueeze(1)
        return F.gelu(self.upd(torch.cat([h, agg], dim=1)))


class NodeClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleList([MeanConv(FEAT, HIDDEN), MeanConv(HIDDEN, HIDDEN), MeanConv(HIDDEN, HIDDEN)])
        self.norm = nn.LayerNorm(HIDDEN)
        self.head = nn.Linear(HIDDEN, CLASSES)

    def forward(self, x, src, dst, inv_deg):
        h = x
        for conv in self.convs:
            h = conv(h, src, dst, inv_deg)
        return self.head(self.norm(h))


def make_graph(seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(NUM_NODES, FEAT, generator=g)
    src = torch.randint(0, NUM_NODES, (NUM_EDGES,), generator=g)
    dst = torch.randint(0, NUM_NODES, (NUM_EDGES,), generator=g)
    deg = torch.zeros(NUM_NODES).index_add_(0, dst, torch.ones(NUM_EDGES))
    inv_deg = 1.0 / deg.clamp(min=1)
    y = (x[:, :CLASSES] + 0.1 * torch.randn(NUM_NODES, CLASSES, generator=g)).argmax(1)
    return x, src, dst, inv_deg, y


torch.manual_seed(0)
model = NodeClassifier()
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
step_fn = torch.compile(model) if args.compile else model
x, src, dst, inv_deg, y = make_graph(1)
train_mask = torch.rand(NUM_NODES, generator=torch.Generator().manual_seed(2)) < 0.7

t0 = time.time()
for step in range(args.steps):
    logits = step_fn(x, src, dst, inv_deg)
    loss = F.cross_entropy(logits[train_mask], y[train_mask])
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if step % 5 == 0 or step == args.steps - 1:
        with torch.no_grad():
            acc = (step_fn(x, src, dst, inv_deg).argmax(1)[~train_mask] == y[~train_mask]).float().mean()
        print(f"step {step:3d} loss {loss.item():.4f} val_acc {acc.item():.3f}")
print(f"done in {time.time() - t0:.1f}s (compile={args.compile})")
