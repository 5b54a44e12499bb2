import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
N_NUM, N_CAT, CARD, EMB, HIDDEN = 24, 6, 50, 8, 128


def make_norm(d):
    return nn.BatchNorm1d(d, momentum=None)


class TabularNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.embs = nn.ModuleList([nn.Embedding(CARD, EMB) for _ in range(N_CAT)])
        self.num_norm = make_norm(N_NUM)
        d = N_NUM + N_CAT * EMB
        self.mlp = nn.Sequential(
            nn.Linear(d, HIDDEN), make_norm(HIDDEN), nn.SiLU(), nn.Dropout(0.1),
            nn.Linear(HIDDEN, HIDDEN), make_norm(HIDDEN), nn.SiLU(),
            nn.Linear(HIDDEN, 1),
        )

    def forward(self, x_num, x_cat):
        e = [emb(x_cat[:, i]) for i, emb in enumerate(self.embs)]
        return self.mlp(torch.cat([self.num_norm(x_num)] + e, dim=1)).squeeze(1)


def batches(n, bs=256, seed=1):
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(N_NUM, generator=g)
    for _ in range(n):
        x_num = torch.randn(bs, N_NUM, generator=g) * 3 + 1
        x_cat = torch.randint(0, CARD, (bs, N_CAT), generator=g)
        y = ((x_num @ w) + (x_cat[:, 0] % 7 == 0).float() * 2 > 0).float()
        yield x_num, x_cat, y


model = TabularNet()
opt = torch.optim.AdamW(model.parameters(), lr=2e-3)
compiled = torch.compile(model, fullgraph=True)

model.train()
for step, (x_num, x_cat, y) in enumerate(batches(20)):
    loss = F.binary_cross_entropy_with_logits(compiled(x_num, x_cat), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if step % 5 == 0:
        print(f"step {step:2d} loss {loss.item():.4f}")

model.eval()
with torch.no_grad():
    x_num, x_cat, y = next(batches(1, bs=2048, seed=7))
    acc = ((compiled(x_num, x_cat) > 0).float() == y).float().mean()
print(f"eval acc {acc.item():.3f}  num_norm.running_mean[:4] {model.num_norm.running_mean[:4].tolist()}")
