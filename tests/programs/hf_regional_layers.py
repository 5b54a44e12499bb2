"""Regional compilation of a tiny random-init Llama (every decoder layer compiled on its own) used as a
scorer: a forward with the default use_cache=True builds a DynamicCache, and each layer's slot of it is
its own guard, so the layers' shared code recompiles per layer up to the limit (blind A/B batch 14's
pattern, written fresh; tests/test_triage.py). use_cache=False fixes it."""
import torch
from transformers import LlamaConfig, LlamaModel

torch.manual_seed(0)
cfg = LlamaConfig(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=10,
                  num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64)
model = LlamaModel(cfg).eval()
for layer in model.layers:
    layer.compile(backend="eager")
with torch.no_grad():
    for n in (12, 17, 23):
        ids = torch.randint(0, 128, (2, n))
        out = model(input_ids=ids, attention_mask=torch.ones_like(ids))
        print(f"len {n}: {tuple(out.last_hidden_state.shape)}")
