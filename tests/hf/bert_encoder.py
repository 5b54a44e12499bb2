"""BERT encoder, inference with Inductor: batches padded to the longest sentence, so the
sequence length changes from batch to batch (a typical embedding / classification service)."""
import torch
from transformers import BertConfig, BertModel

torch.manual_seed(0)
config = BertConfig(vocab_size=128, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                    intermediate_size=64, max_position_embeddings=64)
model = BertModel(config).eval()
model = torch.compile(model)                     # default backend: Inductor

with torch.no_grad():
    for seq_len in (16, 24):
        input_ids = torch.randint(0, config.vocab_size, (4, seq_len))
        attention_mask = torch.ones_like(input_ids)
        attention_mask[0, seq_len // 2:] = 0     # one padded sentence
        out = model(input_ids=input_ids, attention_mask=attention_mask)
        print(seq_len, tuple(out.last_hidden_state.shape), float(out.pooler_output.abs().mean()))
