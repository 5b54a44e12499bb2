"""An export of a scorer whose forward returns, beside the logits, a cache object of a plain class (as transformers'
DynamicCache with use_cache on): torch.export cannot flatten it ("Found <class ...> in output, which is not a known
type"). (Blind A/B batch 39: LlamaForCausalLM exported for scoring.)
  --no-cache   the forward returns the logits only (the fix)"""
import sys

import torch


class KVCache:
    def __init__(self, k, v):
        self.k, self.v = k, v


class Scorer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj, self.head = torch.nn.Linear(16, 16), torch.nn.Linear(16, 4)

    def forward(self, x, use_cache=True):
        h = torch.tanh(self.proj(x))
        logits = self.head(h)
        return (logits, KVCache(h, h * 2)) if use_cache else logits


use_cache = "--no-cache" not in sys.argv
ep = torch.export.export(Scorer().eval(), (torch.randn(2, 5, 16),), {"use_cache": use_cache})
print(f"exported: {len(ep.graph_signature.output_specs)} output(s)")
