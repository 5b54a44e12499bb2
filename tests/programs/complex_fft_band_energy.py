"""Band energies from an rfft inside a compiled function: Inductor warns once that it does not generate code for
complex operators (they run as ATen kernels); the results match eager. (Blind A/B batch 65: a report repeated this
warning beside an unrelated miscompile.)"""
import torch


def band_energy(x):
    spec = torch.fft.rfft(x * torch.hann_window(x.shape[-1]), dim=-1)[..., :128]
    return spec.abs().pow(2).reshape(x.shape[0], 8, -1).mean(-1).log1p()


x = torch.randn(4, 256)
diff = (torch.compile(band_energy)(x) - band_energy(x)).abs().max().item()
print(f"max |compiled - eager| = {diff:.2e}")
