import argparse
import sys

import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, vocab=1000, dim=128, heads=4, layers=2, classes=10, max_len=64):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.randn(1, max_len, dim) * 0.02)
        layer = nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.0, batch_first=True, norm_first=True)
        self.enc = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.cls = nn.Linear(dim, classes)

    def forward(self, ids):
        x = self.tok(ids) + self.pos[:, : ids.shape[1]]
        x = self.enc(x)
        return self.cls(self.norm(x).mean(1))


def run(model, ids, amp):
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=amp):
        return model(ids)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--no-amp", action="store_true")
    args = ap.parse_args()
    amp = not args.no_amp

    torch.manual_seed(0)
    model = Encoder().eval()
    ids = torch.randint(0, 1000, (args.batch, args.seq))

    eager_out = run(model, ids, amp)
    compiled = torch.compile(model)
    comp_out = run(compiled, ids, amp)

    print(f"amp={amp} out dtype={eager_out.dtype}")
    diff = (eager_out.float() - comp_out.float()).abs()
    print(f"max abs diff eager vs compiled: {diff.max().item():.3e}")
    print(f"argmax agreement: {(eager_out.argmax(-1) == comp_out.argmax(-1)).float().mean().item():.1%}")
    try:
        torch.testing.assert_close(comp_out.float(), eager_out.float())
    except AssertionError as e:
        print("PARITY CHECK FAILED")
        print(str(e).splitlines()[0:4])
        sys.exit(1)
    print("PARITY CHECK PASSED")


if __name__ == "__main__":
    main()
