"""A scoring script that trains its checkpoint when the file is missing (first run), then scores a batch with the
compiled model and prints the scores. The first run prints its training lines, and the training draws from the
global RNG, so the batch it scores differs from every later run's: run first under torch.compile and then without
it, the two print different output although torch.compile changes nothing (blind A/B batch 48: a parity gate that
trained spk.pt on its first run). A second compiled run, with the checkpoint in place, prints what eager prints."""
import os

import torch
import torch.nn as nn

CKPT = "scorer_ckpt.pt"


def train(model):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        x = torch.randn(16, 8)
        loss = (model(x) - x.sum(-1, keepdim=True)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"train step {step} loss {loss.item():.4f}")


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    if not os.path.exists(CKPT):
        print(f"no checkpoint at {CKPT}, training one")
        train(model)
        torch.save(model.state_dict(), CKPT)
    model.load_state_dict(torch.load(CKPT))
    scorer = torch.compile(model.eval(), backend="aot_eager")
    batch = torch.randn(4, 8)
    with torch.no_grad():
        print("scores", " ".join(f"{v:.4f}" for v in scorer(batch).flatten().tolist()))


if __name__ == "__main__":
    main()
