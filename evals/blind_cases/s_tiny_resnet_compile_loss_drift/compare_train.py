"""Pre-merge check: does `--compile` change training?

Trains the same small ResNet twice from the same seed on the same synthetic batches - once eager, once with
torch.compile - and compares the loss curves and final weights. (Our real job trains on CIFAR crops with
batch 4 per worker; this script mirrors its model and optimizer settings.)
"""
import argparse
import copy
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.short = None
        if stride != 1 or cin != cout:
            self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        sc = x if self.short is None else self.short(x)
        return F.relu(out + sc)


class TinyResNet(nn.Module):
    def __init__(self, n_classes=10, width=16):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3, 1, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU())
        self.layer1 = BasicBlock(width, width, 1)
        self.layer2 = BasicBlock(width, 2 * width, 2)
        self.layer3 = BasicBlock(2 * width, 4 * width, 2)
        self.fc = nn.Linear(4 * width, n_classes)

    def forward(self, x):
        x = self.stem(x)
        x = self.layer3(self.layer2(self.layer1(x)))
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


def make_batches(n_steps, batch, seed=0):
    g = torch.Generator().manual_seed(seed)
    protos = torch.randn(10, 3, 16, 16, generator=g)
    out = []
    for _ in range(n_steps):
        y = torch.randint(0, 10, (batch,), generator=g)
        x = protos[y] + 0.8 * torch.randn(batch, 3, 16, 16, generator=g)
        out.append((x, y))
    return out


def train(model, batches, lr, clip, compile_model):
    model = copy.deepcopy(model)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=15, gamma=0.5)
    fwd = torch.compile(model) if compile_model else model
    losses, gnorms = [], []
    model.train()
    t0 = time.perf_counter()
    for x, y in batches:
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(fwd(x), y)
        loss.backward()
        gn = torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        sched.step()
        losses.append(loss.item())
        gnorms.append(gn.item())
    return model, losses, gnorms, time.perf_counter() - t0


def flat_params(m):
    return torch.cat([p.detach().reshape(-1) for p in m.parameters()])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--clip", type=float, default=0.1)
    args = ap.parse_args()

    torch.manual_seed(0)
    base = TinyResNet()
    batches = make_batches(args.steps, args.batch)

    m_e, l_e, g_e, t_e = train(base, batches, args.lr, args.clip, compile_model=False)
    m_e2, l_e2, _, _ = train(base, batches, args.lr, args.clip, compile_model=False)
    m_c, l_c, g_c, t_c = train(base, batches, args.lr, args.clip, compile_model=True)

    print(f"eager vs eager (rerun): max |loss diff| = {max(abs(a - b) for a, b in zip(l_e, l_e2)):.3e}")
    print(" step |  eager loss | compiled loss |   |diff| | eager gnorm | compiled gnorm")
    for i in list(range(0, args.steps, 5)) + [args.steps - 1]:
        print(f" {i:4d} | {l_e[i]:11.5f} | {l_c[i]:13.5f} | {abs(l_e[i] - l_c[i]):8.2e} | {g_e[i]:11.4f} | {g_c[i]:14.4f}")
    pe, pc = flat_params(m_e), flat_params(m_c)
    rel = (torch.linalg.norm(pe - pc) / torch.linalg.norm(pe)).item()
    print(f"final weights: rel. L2 distance eager vs compiled = {rel:.3e}")
    print(f"mean loss last 10 steps: eager {sum(l_e[-10:]) / 10:.4f}  compiled {sum(l_c[-10:]) / 10:.4f}")
    print(f"time: eager {t_e:.1f}s  compiled {t_c:.1f}s (incl. compile)")
    if rel > 1e-3:
        print("FAIL: compiled training diverges from eager")
        raise SystemExit(1)
    print("OK")


if __name__ == "__main__":
    main()
