"""Greedy decoding with a tiny random-init Llama whose forward is compiled with dynamic=False, the way
many serving snippets do it. generate()'s default cache grows by a token per step, so every decode step
has new shapes: one graph per step. CACHE_IMPL=static passes cache_implementation="static" (the fix)."""
import os
import time

import torch
from transformers import LlamaConfig, LlamaForCausalLM

torch.manual_seed(0)
cfg = LlamaConfig(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                  num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=64)
model = LlamaForCausalLM(cfg).eval()
model.forward = torch.compile(model.forward, dynamic=False, backend="eager")
extra = {"cache_implementation": os.environ["CACHE_IMPL"]} if os.environ.get("CACHE_IMPL") else {}
prompt = torch.randint(0, 128, (1, 6))
for trial in range(2):
    t0 = time.perf_counter()
    with torch.no_grad():
        out = model.generate(prompt, max_new_tokens=4, do_sample=False, pad_token_id=0, **extra)
    print(f"trial {trial}: {out.shape[1]} tokens {out[0, -4:].tolist()} in {time.perf_counter() - t0:.2f} s")
