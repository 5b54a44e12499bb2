"""A parity gate that fails with or without torch.compile: the model masks its input batch in place
(masked_fill_), the gate runs eager first and then compiled on the same batch tensors, so the second
run trains on labels the first one overwrote (blind A/B batch 9, a BERT MLM parity script)."""
import sys

import torch

MASK = 3


class TinyMLM(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(16, 8)
        self.out = torch.nn.Linear(8, 16)

    def forward(self, ids, positions):
        labels = torch.where(positions, ids, -100)
        ids.masked_fill_(positions, MASK)           # the bug: writes into the caller's batch
        logits = self.out(self.emb(ids))
        return torch.nn.functional.cross_entropy(logits.view(-1, 16), labels.view(-1))


def train(model, batches):
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    losses = []
    for ids, pos in batches:
        loss = model(ids, pos)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


torch.manual_seed(0)
batches = [(torch.randint(4, 16, (4, 6)), torch.rand(4, 6) < 0.3) for _ in range(6)]
init = TinyMLM().state_dict()
eager, compiled = TinyMLM(), TinyMLM()
eager.load_state_dict(init)
compiled.load_state_dict(init)
a = train(eager, batches)
b = train(torch.compile(compiled, backend="eager"), batches)
print("eager    " + " ".join(f"{x:.4f}" for x in a))
print("compiled " + " ".join(f"{x:.4f}" for x in b))
diff = max(abs(x - y) for x, y in zip(a, b))
print(f"max |diff| = {diff:.4f}")
sys.exit("PARITY FAILED" if diff > 1e-4 else 0)
