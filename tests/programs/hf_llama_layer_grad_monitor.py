"""A tiny random-init Llama trained under torch.compile with a gradient monitor of the program's own: a full backward
hook on each decoder layer. The hooks break the graph (GB0083) where transformers calls the layers; the
output-capturing wrapper around them then runs eagerly, and on Python 3.11 its dict comprehension gets a frame of its
own that Dynamo skips (GB9493 'dict_keyiterator'): that second break goes with the first (fresh check after blind
A/B batch 38: it carried a note about output_hidden_states, which the program never passes)."""
import torch
from transformers import LlamaConfig, LlamaForCausalLM

torch.manual_seed(0)
cfg = LlamaConfig(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, max_position_embeddings=128)
model = LlamaForCausalLM(cfg)
model.config.use_cache = False
grad_norms = {}
for i, layer in enumerate(model.model.layers):
    layer.register_full_backward_hook(lambda mod, gin, gout, i=i: grad_norms.__setitem__(i, gout[0].norm().item()))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
compiled = torch.compile(model, backend="eager")
ids = torch.randint(0, 256, (2, 16))
for step in range(2):
    loss = compiled(input_ids=ids, labels=ids).loss
    loss.backward()
    opt.step()
    opt.zero_grad()
    print(f"step {step} loss {loss.item():.4f} grad norms {[round(grad_norms[i], 4) for i in sorted(grad_norms)]}")
