"""Blind A/B batch 44: a keyword-spotting front end (torch.stft, hop 160) exported with a named Dim on the
waveform length. torch 2.14-2.15: "Constraints violated (samples)! ... satisfy the generated guard
(1 % (1 + (L['wav'].size()[1] // 160))) != 0" with no suggested fix (rfft's reshape; true on the whole
range). torch 2.9.1 exports it. DYNAMIC=1 declares the dim Dim.DYNAMIC with the same bounds."""
import os

import torch
from torch.export import Dim


class Frontend(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("window", torch.hann_window(512))
        self.proj = torch.nn.Conv1d(257, 16, 3, stride=2)

    def forward(self, wav):
        spec = torch.stft(wav, 512, hop_length=160, window=self.window, return_complex=True)
        return self.proj(spec.abs().clamp_min(1e-6).log()).mean(-1)


torch.manual_seed(0)
model = Frontend().eval()
samples = Dim.DYNAMIC(min=8000, max=64000) if os.environ.get("DYNAMIC") else Dim("samples", min=8000, max=64000)
ep = torch.export.export(model, (torch.randn(1, 16000),), dynamic_shapes={"wav": {1: samples}})
print("range", sorted(str(v) for v in ep.range_constraints.values()))
worst = 0.0
for n in (8000, 12345, 64000):
    x = torch.randn(1, n)
    worst = max(worst, float((ep.module()(x) - model(x)).abs().max()))
print(f"exported vs eager {worst:.1e}")
