"""A tiny random-init GPT-2 (transformers, no download) trained with torch.compile (Inductor) on batches
whose sequence length changes: the first new length recompiles once with that dim dynamic (automatic
dynamic), a recompile torch expects; nothing to fix. Optional argv[1]: number of layers (default 1)."""
import sys

import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
n_layer = int(sys.argv[1]) if len(sys.argv) > 1 else 1
model = GPT2LMHeadModel(GPT2Config(n_layer=n_layer, n_embd=32, n_head=2, n_positions=64, vocab_size=128))
model.train()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
step = torch.compile(model)
for seq in (16, 24, 32):
    ids = torch.randint(0, 128, (2, seq))
    loss = step(input_ids=ids, labels=ids).loss
    loss.backward()
    opt.step()
    opt.zero_grad()
    print("seq", seq, "loss", round(loss.item(), 3))
