"""Llama: compile the forward, then call model.generate() (greedy decoding with a KV cache)."""
import torch
from transformers import LlamaConfig, LlamaForCausalLM

torch.manual_seed(0)
config = LlamaConfig(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                     num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=64,
                     pad_token_id=0, bos_token_id=1, eos_token_id=2)
model = LlamaForCausalLM(config).eval()
model.forward = torch.compile(model.forward, backend="eager")

prompt = torch.randint(3, config.vocab_size, (1, 8))
out = model.generate(prompt, max_new_tokens=4, do_sample=False)
print(out.shape, out[0, -4:].tolist())
