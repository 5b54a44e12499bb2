import torch
from transformers import DistilBertConfig, DistilBertForSequenceClassification

# a small random-init DistilBERT (the real one is loaded from the hub; same code paths)
torch.manual_seed(0)
cfg = DistilBertConfig(vocab_size=500, dim=64, n_layers=2, n_heads=2, hidden_dim=128, max_position_embeddings=128)
model = DistilBertForSequenceClassification(cfg).eval()
cmodel = torch.compile(model, backend="aot_eager")

requests = [(12, False), (20, False), (28, True), (36, False), (44, True), (52, False)]
with torch.no_grad():
    for seq, debug in requests:
        ids = torch.randint(0, 500, (2, seq))
        mask = torch.ones_like(ids)
        mask[1, seq // 2:] = 0
        out = cmodel(input_ids=ids, attention_mask=mask, output_hidden_states=debug)
        print(seq, out.logits.shape, len(out.hidden_states) if debug else "-")
