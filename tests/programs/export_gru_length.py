"""Export a small stylus-gesture classifier (Conv1d front end, 2-layer nn.GRU, mean pool) with the number of
points dynamic, then check the exported program against eager at two other lengths. SCAN=1 runs the GRU's
recurrence with torch._higher_order_ops.scan while exporting (same weights)."""
import os

import torch
import torch.nn as nn
from torch.export import Dim

torch.manual_seed(0)


class GestureNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.front = nn.Conv1d(3, 16, 5, padding=2)
        self.rnn = nn.GRU(16, 24, num_layers=2, batch_first=True)
        self.head = nn.Linear(24, 6)

    def forward(self, strokes):
        h = torch.relu(self.front(strokes.transpose(1, 2))).transpose(1, 2)
        if os.environ.get("SCAN") and torch.compiler.is_exporting():
            seq = self._gru_scan(h)
        else:
            seq, _ = self.rnn(h)
        return self.head(seq.mean(dim=1))

    def _gru_scan(self, x):
        from torch._higher_order_ops.scan import scan
        for k in range(self.rnn.num_layers):
            w_ih, w_hh = getattr(self.rnn, f"weight_ih_l{k}"), getattr(self.rnn, f"weight_hh_l{k}")
            b_ih, b_hh = getattr(self.rnn, f"bias_ih_l{k}"), getattr(self.rnn, f"bias_hh_l{k}")
            gi = (x @ w_ih.t() + b_ih).transpose(0, 1)          # (time, batch, 3 * hidden)

            def step(h, g, w_hh=w_hh, b_hh=b_hh):
                r_i, z_i, n_i = g.chunk(3, dim=-1)
                r_h, z_h, n_h = (h @ w_hh.t() + b_hh).chunk(3, dim=-1)
                r, z = torch.sigmoid(r_i + r_h), torch.sigmoid(z_i + z_h)
                h = (1 - z) * torch.tanh(n_i + r * n_h) + z * h
                return h, h.clone()

            h0 = x.new_zeros(x.shape[0], self.rnn.hidden_size)
            _, ys = scan(step, h0, gi)
            x = ys.transpose(0, 1)
        return x


def main():
    model = GestureNet().eval()
    points = Dim("points", min=8, max=1024)
    ep = torch.export.export(model, (torch.randn(2, 40, 3),), dynamic_shapes=({1: points},))
    for n in (23, 311):
        x = torch.randn(2, n, 3)
        print(f"length {n}: max|diff| {(ep.module()(x) - model(x)).abs().max().item():.2e}")


if __name__ == "__main__":
    main()
