"""Recompile in an nn.Sequential compiled with torch.compile(module): frames show up as torch wrappers."""
import torch

seq = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
opt = torch.compile(seq, backend="eager")
opt(torch.randn(2, 4))
opt(torch.randn(2, 4, dtype=torch.float64).float().half().float())
with torch.no_grad():
    opt(torch.randn(2, 4))
