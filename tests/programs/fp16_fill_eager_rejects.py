"""An fp16 attention mask filled with -1e9: eager's masked_fill rejects the value (it overflows float16), the
compiled graph folds it to -inf. The script's own eager parity check fails; so does the run without torch.compile,
at its first call, before it printed anything."""
import torch

torch.manual_seed(0)


def attend(q, k, keep):
    scores = q @ k.transpose(-1, -2)
    scores = scores.masked_fill(~keep[:, None, :], -1e9)
    return scores.softmax(-1)


q, k = torch.randn(2, 4, 8, dtype=torch.float16), torch.randn(2, 4, 8, dtype=torch.float16)
keep = torch.tensor([[True, True, True, False], [True, True, True, True]])
out = torch.compile(attend)(q, k, keep)
print(f"compiled attention rows sum to {out.float().sum().item():.3f}")
ref = attend(q, k, keep)
print(f"parity: max diff {(out - ref).abs().max().item():.2e}")
