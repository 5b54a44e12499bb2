"""A tiny random-init Llama with dynamic NTK RoPE (rope_type "dynamic") scored under torch.compile(fullgraph=True)
(blind A/B batch 27, a perplexity filter): transformers' dynamic_rope_update branches in Python on the longest
position seen (`if seq_len > max_seq_len_cached`), a data-dependent branch: an error under fullgraph.
REGIONAL=1 compiles the decoder layers only (fullgraph=True each), the rotary update stays eager, and the
scores equal eager's (--no-compile)."""
import os
import sys

import torch
from transformers import LlamaConfig, LlamaForCausalLM

torch.manual_seed(0)
cfg = LlamaConfig(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                  num_key_value_heads=1, max_position_embeddings=16,
                  rope_parameters={"rope_type": "dynamic", "factor": 2.0, "rope_theta": 10000.0})
model = LlamaForCausalLM(cfg).eval()
if "--no-compile" in sys.argv:
    fn = model
elif os.environ.get("REGIONAL") == "1":
    for layer in model.model.layers:
        layer.compile(fullgraph=True, backend="eager")
    fn = model
else:
    fn = torch.compile(model, fullgraph=True, backend="eager")
with torch.no_grad():
    for n in (8, 24):
        ids = torch.randint(0, 128, (2, n))
        logits = fn(input_ids=ids, use_cache=False).logits
        print(f"len {n}: nll {torch.nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1), ids[:, 1:].flatten()):.5f}")
