"""A tiny random-init Mixtral compiled with fullgraph=True for a training step, its config asking for the
"eager" experts (blind A/B batch 25): transformers' eager MoE loops in Python over the experts that the
router hit (`expert_hit = ....nonzero()`; `for expert_idx in expert_hit:`), a data-dependent error under
fullgraph (FULLGRAPH=0: graph breaks). EXPERTS=grouped_mm (transformers 5's default) is the library setting."""
import os

import torch
from transformers import MixtralConfig, MixtralForCausalLM

torch.manual_seed(0)
cfg = MixtralConfig(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                    num_attention_heads=2, num_key_value_heads=1, num_local_experts=4, num_experts_per_tok=2,
                    max_position_embeddings=64, experts_implementation=os.environ.get("EXPERTS", "eager"))
model = MixtralForCausalLM(cfg)
step = torch.compile(model, fullgraph=os.environ.get("FULLGRAPH", "1") == "1", backend="eager")
ids = torch.randint(0, 128, (2, 16))
loss = step(input_ids=ids, labels=ids).loss
loss.backward()
print("loss", round(float(loss), 4))
