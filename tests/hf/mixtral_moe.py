"""Mixtral mixture-of-experts LM: forward with router logits (aux load-balancing loss) and labels."""
import torch
from transformers import MixtralConfig, MixtralForCausalLM

torch.manual_seed(0)
config = MixtralConfig(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                       num_attention_heads=2, num_key_value_heads=1, num_local_experts=4,
                       num_experts_per_tok=2, max_position_embeddings=64, output_router_logits=True)
model = MixtralForCausalLM(config)
model = torch.compile(model, backend="eager")

for step in range(2):
    input_ids = torch.randint(0, config.vocab_size, (2, 16))
    out = model(input_ids=input_ids, labels=input_ids)
    out.loss.backward()
    print(f"step {step} loss {out.loss.item():.4f} aux {out.aux_loss.item():.4f}")
