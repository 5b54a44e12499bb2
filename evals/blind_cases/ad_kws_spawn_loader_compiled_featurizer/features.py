"""Waveform -> log-mel style features (pure torch, so it can run in loader workers)."""
import math

import torch


def _mel_filterbank(n_fft, n_mels, sr):
    def hz_to_mel(f):
        return 2595.0 * math.log10(1.0 + f / 700.0)
    mels = torch.linspace(hz_to_mel(20.0), hz_to_mel(sr / 2), n_mels + 2)
    hz = 700.0 * (10 ** (mels / 2595.0) - 1.0)
    bins = torch.floor((n_fft + 1) * hz / sr).long()
    fb = torch.zeros(n_mels, n_fft // 2 + 1)
    for m in range(1, n_mels + 1):
        l, c, r = bins[m - 1].item(), bins[m].item(), bins[m + 1].item()
        for k in range(l, c):
            fb[m - 1, k] = (k - l) / max(c - l, 1)
        for k in range(c, r):
            fb[m - 1, k] = (r - k) / max(r - c, 1)
    return fb


N_FFT, HOP, N_MELS, SR = 400, 160, 40, 16000
MEL_FB = _mel_filterbank(N_FFT, N_MELS, SR)
WINDOW = torch.hann_window(N_FFT)


def log_mel(wave):
    spec = torch.stft(wave, N_FFT, HOP, window=WINDOW, return_complex=True).abs().pow(2)
    mel = MEL_FB @ spec
    feat = torch.log(mel + 1e-6)
    return (feat - feat.mean(dim=-1, keepdim=True)) / (feat.std(dim=-1, keepdim=True) + 1e-5)


# featurization is the hot spot of the input pipeline
fast_log_mel = torch.compile(log_mel, dynamic=False)
