"""A tiny random-init GPT-2 (transformers, no download) compiled whole: the compile-time test bed."""
import sys

import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
n_layer = int(sys.argv[1]) if len(sys.argv) > 1 else 4
cfg = GPT2Config(n_layer=n_layer, n_embd=64, n_head=4, n_positions=64, vocab_size=512)
model = GPT2LMHeadModel(cfg).eval()
compiled = torch.compile(model)
ids = torch.randint(0, 512, (2, 32))
with torch.no_grad():
    for _ in range(2):
        logits = compiled(input_ids=ids).logits
print("logits", tuple(logits.shape))
