import time
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
N_MELS, CLASSES, BATCH = 40, 12, 16


class KWSNet(nn.Module):
    def __init__(self, ch=64):
        super().__init__()
        self.stem = nn.Conv1d(N_MELS, ch, 5, padding=2)
        self.blocks = nn.ModuleList([
            nn.Sequential(nn.Conv1d(ch, ch, 3, padding=d, dilation=d, groups=ch), nn.Conv1d(ch, ch, 1),
                          nn.BatchNorm1d(ch), nn.GELU())
            for d in (1, 4)
        ])
        self.head = nn.Linear(ch, CLASSES)

    def forward(self, feats, frame_mask):
        h = F.gelu(self.stem(feats))
        for blk in self.blocks:
            h = h + blk(h)
        m = frame_mask.unsqueeze(1).to(h.dtype)
        pooled = (h * m).sum(-1) / m.sum(-1).clamp(min=1.0)
        return self.head(pooled)


def bucketed_batches(n_batches):
    g = torch.Generator().manual_seed(1)
    for _ in range(n_batches):
        lengths = torch.randint(40, 200, (BATCH,), generator=g)
        T = int(lengths.max())
        feats = torch.randn(BATCH, N_MELS, T, generator=g)
        mask = torch.arange(T)[None, :] < lengths[:, None]
        labels = torch.randint(0, CLASSES, (BATCH,), generator=g)
        yield feats, mask, labels


model = KWSNet()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
cmodel = torch.compile(model, dynamic=False)

t_start = time.perf_counter()
for step, (feats, mask, labels) in enumerate(bucketed_batches(4)):
    t0 = time.perf_counter()
    loss = F.cross_entropy(cmodel(feats, mask), labels)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    print(f"step {step:2d} T={feats.shape[-1]:3d} loss {loss.item():.4f} step_time {time.perf_counter() - t0:6.2f}s")
print(f"total {time.perf_counter() - t_start:.1f}s")
