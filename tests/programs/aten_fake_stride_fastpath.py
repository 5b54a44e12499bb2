"""A keyword-spotting encoder served in eval mode under inference_mode: a Conv1d front end, transposed and
layer-normed into nn.TransformerEncoder. Eager takes the encoder's fast path (aten._transformer_encoder_layer_fwd);
compiled, Inductor's stride check fails on it: the op's meta kernel keeps the transposed input's strides, the
real kernel returns a contiguous tensor (pytorch#193966, open on 2.15). FIXED=1 turns the fast path off."""
import os

import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.front = nn.Conv1d(8, d, kernel_size=3, padding=1)
        self.norm = nn.LayerNorm(d)
        layer = nn.TransformerEncoderLayer(d, nhead=2, dim_feedforward=32, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=1, enable_nested_tensor=False)
        self.head = nn.Linear(d, 5)

    def forward(self, x):
        h = self.norm(torch.nn.functional.gelu(self.front(x)).transpose(1, 2))
        return self.head(self.encoder(h).mean(1))


if os.environ.get("FIXED") == "1":
    torch.backends.mha.set_fastpath_enabled(False)
torch.manual_seed(0)
model = Encoder().eval()
x = torch.randn(1, 8, 24)
with torch.inference_mode():
    eager = model(x)
    out = torch.compile(model)(x)
print("max diff vs eager", float((out - eager).abs().max()))
