"""A tiny decoder benchmarked through `generate`, called on the torch.compile wrapper: the wrapper passes
`generate` to the original module, whose own calls are not compiled, so nothing ever compiles."""
import time

import torch
import torch.nn as nn


class TinyDecoder(nn.Module):
    def __init__(self, vocab=64, d=32):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.mix = nn.Linear(d, d)
        self.out = nn.Linear(d, vocab)

    def forward(self, ids):
        h = torch.tanh(self.mix(self.emb(ids))).mean(dim=1)
        return self.out(h)

    @torch.no_grad()
    def generate(self, ids, steps=8):
        for _ in range(steps):
            nxt = self(ids).argmax(-1, keepdim=True)
            ids = torch.cat([ids, nxt], dim=1)
        return ids


torch.manual_seed(0)
model = TinyDecoder().eval()
compiled = torch.compile(model)
prompt = torch.randint(0, 64, (2, 5))
t0 = time.perf_counter()
out = compiled.generate(prompt)
print(f"generated {tuple(out.shape)} in {time.perf_counter() - t0:.3f} s")
