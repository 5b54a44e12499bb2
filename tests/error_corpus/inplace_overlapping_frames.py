# expect: inplace_internal_overlap compile_only
"""Audio frontend: mean removal and windowing in place on unfold frames that overlap (hop < window).
Eager computes ill-defined values without an error; torch.compile's functionalization refuses the
mutation (blind A/B batch 9: triage had called it a backend failure and sent it to bisect)."""
import torch

WIN, HOP = 40, 16
window = torch.hann_window(WIN)


@torch.compile(backend="aot_eager")
def frontend(wav):
    frames = wav.unfold(-1, WIN, HOP)
    frames.sub_(frames.mean(dim=-1, keepdim=True))
    frames.mul_(window)
    return torch.fft.rfft(frames).abs()


torch.manual_seed(0)
print(frontend(torch.randn(2, 400)).shape)
