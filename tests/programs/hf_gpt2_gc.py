"""transformers GPT-2 (tiny random init) trained with gradient checkpointing and use_cache=True:
transformers logs warning_once inside forward, a graph break in library code."""
import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
model = GPT2LMHeadModel(GPT2Config(n_embd=32, n_layer=1, n_head=2, vocab_size=99, n_positions=64))
model.gradient_checkpointing_enable()
model.train()
step = torch.compile(model, backend="eager")
ids = torch.randint(0, 99, (2, 6))
out = step(ids, use_cache=True, labels=ids)
out.loss.backward()
print("loss", round(out.loss.item(), 3))
