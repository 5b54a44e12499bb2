"""A tiny random-init Nystromformer classifier compiled on full (unpadded) blocks (blind A/B batch 58's ek): in
eager, transformers' mask builder drops an all-ones attention mask; while tracing it cannot look at the values and
builds the full [B, 1, L, L] mask, which the landmark attention path cannot add to its [B, H, landmarks, L] scores:
a shape error only compiled. FIXED=1: an explicit additive key mask [B, 1, 1, L], which transformers passes through."""
import os

import torch
from transformers import NystromformerConfig, NystromformerForSequenceClassification

torch.manual_seed(0)
cfg = NystromformerConfig(vocab_size=100, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                          intermediate_size=64, max_position_embeddings=70, segment_means_seq_len=64,
                          num_landmarks=8, num_labels=3)
model = NystromformerForSequenceClassification(cfg).eval()
ids = torch.randint(0, 100, (2, 64))
mask = torch.ones(2, 64, dtype=torch.long)
if os.environ.get("FIXED") == "1":
    mask = (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min
with torch.no_grad():
    logits = torch.compile(model)(input_ids=ids, attention_mask=mask).logits
print("logits", tuple(logits.shape))
