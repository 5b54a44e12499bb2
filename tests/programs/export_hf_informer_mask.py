"""A tiny random-init Hugging Face Informer forecaster (attention_type="full", distil on by default) exported for
serving. Eagerly transformers leaves the encoder's all-visible mask as None; while exporting (masking_utils checks
is_torchdynamo_exporting()) it builds a 48x48 mask, and the distil conv halves the length to 24 before the second
encoder layer adds it: "Attempting to broadcast a dimension of length 48". (Blind A/B batch 64.)
EAGER_CHECK=1 calls the model eagerly with that check patched to True (it fails the same way);
FIXED=1 returns no mask for the encoder while exporting, as eager computes."""
import math
import os
from unittest import mock

import torch
import torch.nn as nn
from transformers import InformerConfig, InformerForPrediction
from transformers.models.informer import modeling_informer

CONTEXT, HORIZON, LAGS = 48, 12, [1, 2, 3, 24]


class Scorer(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, past_values, past_time_features, past_observed_mask, future_values, future_time_features):
        out = self.model(past_values=past_values, past_time_features=past_time_features,
                         past_observed_mask=past_observed_mask, future_values=future_values,
                         future_time_features=future_time_features, return_dict=True)
        return out.params


def inputs(n=4):
    past, total = CONTEXT + max(LAGS), CONTEXT + max(LAGS) + HORIZON
    h = torch.arange(total, dtype=torch.float32)[None, :].expand(n, total)
    tf = torch.stack([(h % 24 / 24 * 2 * math.pi).sin(), (h % 24 / 24 * 2 * math.pi).cos(),
                      (h % 168 / 168 * 2 * math.pi).sin(), (h % 168 / 168 * 2 * math.pi).cos()], -1)
    y = 20 + 5 * torch.sin(h / 24 * 2 * math.pi) + torch.randn(n, total)
    return (y[:, :past], tf[:, :past], torch.ones(n, past), y[:, past:], tf[:, past:])


torch.manual_seed(0)
config = InformerConfig(prediction_length=HORIZON, context_length=CONTEXT, lags_sequence=LAGS, num_time_features=4,
                        d_model=16, encoder_layers=2, decoder_layers=1, encoder_attention_heads=2,
                        decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32, attention_type="full")
scorer = Scorer(InformerForPrediction(config).eval())
args = inputs()
with torch.no_grad():
    scorer(*args)
print("eager call: ok")
if os.environ.get("EAGER_CHECK") == "1":
    with mock.patch("transformers.masking_utils.is_torchdynamo_exporting", return_value=True), torch.no_grad():
        scorer(*args)
    print("eager call with the export path: ok")
    raise SystemExit(0)
original = modeling_informer.create_bidirectional_mask


def no_mask_for_the_encoder(*a, **kw):
    if kw.get("attention_mask") is None and kw.get("encoder_hidden_states") is None:
        return None
    return original(*a, **kw)


if os.environ.get("FIXED") == "1":
    with mock.patch.object(modeling_informer, "create_bidirectional_mask", no_mask_for_the_encoder):
        ep = torch.export.export(scorer, args)
else:
    ep = torch.export.export(scorer, args)
with torch.no_grad():
    diff = max((a - b).abs().max().item() for a, b in zip(ep.module()(*args), scorer(*args)))
print(f"exported, max |exported - eager| = {diff:.2e}")
