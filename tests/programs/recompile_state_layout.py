"""A stateful sequence model trained chunk by chunk (truncated BPTT): the state is a fresh zeros tensor on the
first chunk and, after it, the last time step of the previous chunk's output (a strided slice), detached. The
compiled forward recompiles once on the state's strides, then every chunk reuses one of the two graphs."""
import torch
import torch.nn as nn

torch.manual_seed(0)
B, T, H, V = 4, 16, 32, 50


class Cell(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, H)
        self.inp = nn.Linear(H, H)
        self.gate = nn.Linear(H, H)
        self.head = nn.Linear(H, V)

    def forward(self, x, h):
        e = self.emb(x)
        outs = []
        for t in range(T):
            z = torch.sigmoid(self.gate(e[:, t]))
            h = (1 - z) * h + z * torch.tanh(self.inp(e[:, t]))
            outs.append(h)
        seq = torch.stack(outs, 1)
        return self.head(seq), seq[:, -1]


model = Cell()
fwd = torch.compile(model, backend="eager")
opt = torch.optim.SGD(model.parameters(), lr=0.1)
data = torch.randint(0, V, (8, B, T + 1))
h = torch.zeros(B, H)
for step in range(8):
    x, y = data[step, :, :-1], data[step, :, 1:]
    logits, h = fwd(x, h)
    h = h.detach()
    loss = nn.functional.cross_entropy(logits.reshape(-1, V), y.reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
