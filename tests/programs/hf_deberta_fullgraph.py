"""A tiny random-init DeBERTa-v2 classifier compiled with fullgraph=True and given labels (blind A/B batch
12): with config.problem_type None its loss takes (labels >= 0).nonzero() and branches on the count, a
data-dependent error under fullgraph. PROBLEM_TYPE=single_label_classification is the library setting."""
import os

import torch
from transformers import DebertaV2Config, DebertaV2ForSequenceClassification

torch.manual_seed(0)
cfg = DebertaV2Config(vocab_size=128, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                      intermediate_size=64, max_position_embeddings=64, num_labels=3,
                      problem_type=os.environ.get("PROBLEM_TYPE"))
model = DebertaV2ForSequenceClassification(cfg).eval()
fwd = torch.compile(model, fullgraph=True, backend="eager")
ids = torch.randint(0, 128, (4, 16))
labels = torch.tensor([0, 2, 1, 0])
with torch.no_grad():
    print("loss", round(float(fwd(input_ids=ids, labels=labels).loss), 4))
