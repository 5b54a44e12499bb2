"""Parity gate for the streaming order-book move classifier.

The model is trained offline on fixed windows (Conv1d path) and served tick by
tick through `StreamSession`, which keeps per-instrument delay lines so every
tick costs O(taps) instead of re-running the whole window. Before a release we
run the same tick stream through the eager step and the torch.compile'd step
and require the logits to agree.
"""
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

N_FEAT = 12       # L1-L3 bid/ask size imbalance, spread, microprice delta, ...
TAPS = 9
HIDDEN = 32
N_CLASSES = 3     # down / flat / up over the next 20 ticks
N_INSTR = 16
WINDOW = 64
STREAM_TICKS = 48
ATOL = 1e-4


class LOBMoveNet(nn.Module):
    def __init__(self, n_feat=N_FEAT, taps=TAPS, hidden=HIDDEN, n_classes=N_CLASSES):
        super().__init__()
        self.taps = taps
        self.dw1 = nn.Conv1d(n_feat, n_feat, taps, groups=n_feat)
        self.pw = nn.Conv1d(n_feat, hidden, 1)
        self.dw2 = nn.Conv1d(hidden, hidden, taps, groups=hidden)
        self.norm = nn.LayerNorm(hidden)
        self.head = nn.Linear(hidden, n_classes)

    # offline / training path: x is [B, F, T], returns [B, T, classes]
    def forward(self, x):
        h = self.dw1(F.pad(x, (self.taps - 1, 0)))
        h = F.gelu(self.pw(h))
        h = self.dw2(F.pad(h, (self.taps - 1, 0)))
        h = self.norm(F.gelu(h).transpose(1, 2))
        return self.head(h)

    # streaming path: one tick, delay lines hold the newest sample at index 0
    def step(self, line1, line2, x_t):
        line1[:, :, 1:] = line1[:, :, :-1]
        line1[:, :, 0] = x_t
        h = (line1 * self.dw1.weight[:, 0].flip(-1)).sum(-1) + self.dw1.bias
        h = F.gelu(F.linear(h, self.pw.weight[:, :, 0], self.pw.bias))

        line2[:, :, 1:] = line2[:, :, :-1]
        line2[:, :, 0] = h
        h2 = (line2 * self.dw2.weight[:, 0].flip(-1)).sum(-1) + self.dw2.bias
        return self.head(self.norm(F.gelu(h2)))


class StreamSession:
    def __init__(self, model, n_instr, step_fn=None):
        self.model = model
        self.step_fn = step_fn if step_fn is not None else model.step
        self.line1 = torch.zeros(n_instr, N_FEAT, model.taps)
        self.line2 = torch.zeros(n_instr, HIDDEN, model.taps)

    @torch.no_grad()
    def push(self, x_t):
        return self.step_fn(self.line1, self.line2, x_t)


def synthetic_lob(n_instr, t, seed):
    g = torch.Generator().manual_seed(seed)
    base = torch.randn(n_instr, N_FEAT, t, generator=g).cumsum(-1) * 0.05
    noise = torch.randn(n_instr, N_FEAT, t, generator=g) * 0.3
    x = base + noise
    fwd = x[:, 4].roll(-20, dims=-1) - x[:, 4]
    y = torch.full((n_instr, t), 1, dtype=torch.long)
    y[fwd > 0.15] = 2
    y[fwd < -0.15] = 0
    return x, y


def train(model, steps=40):
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    model.train()
    for i in range(steps):
        x, y = synthetic_lob(32, WINDOW, seed=1000 + i)
        logits = model(x)
        loss = F.cross_entropy(logits[:, TAPS:-20].reshape(-1, N_CLASSES), y[:, TAPS:-20].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if i % 10 == 0 or i == steps - 1:
            print(f"train step {i:3d} loss {loss.item():.4f}")
    model.eval()
    return model


def run_stream(session, ticks):
    outs = []
    for t in range(ticks.shape[-1]):
        outs.append(session.push(ticks[:, :, t]))
    return torch.stack(outs, 1)   # [B, T, classes]


def parity_gate(model):
    ticks, _ = synthetic_lob(N_INSTR, STREAM_TICKS, seed=7)

    eager = StreamSession(model, N_INSTR)
    t0 = time.perf_counter()
    ref = run_stream(eager, ticks)
    t_eager = time.perf_counter() - t0

    compiled_step = torch.compile(model.step)
    comp = StreamSession(model, N_INSTR, step_fn=compiled_step)
    t0 = time.perf_counter()
    out = run_stream(comp, ticks)
    t_comp = time.perf_counter() - t0

    diff = (ref - out).abs()
    agree = (ref.argmax(-1) == out.argmax(-1)).float().mean().item()
    print(f"eager stream   {t_eager:6.2f}s  compiled stream {t_comp:6.2f}s (incl. compile)")
    print(f"max |eager - compiled| = {diff.max().item():.3e}  (atol {ATOL:.0e})")
    print(f"first tick over tolerance: {int((diff.amax(dim=(0, 2)) > ATOL).float().argmax())}")
    print(f"argmax agreement: {agree * 100:.1f}%")
    return diff.max().item() <= ATOL


def main():
    torch.manual_seed(0)
    print(f"torch {torch.__version__}")
    model = train(LOBMoveNet())
    ok = parity_gate(model)
    if not ok:
        print("PARITY GATE FAILED: compiled streaming step does not match eager")
        sys.exit(1)
    print("PARITY GATE PASSED")


if __name__ == "__main__":
    main()
