"""An EEG window tagger (64 channels, Conv1d stem over time, then a per-step nn.Linear over the channels) is compiled
with dynamic=True and warmed up once on a 64-sample window, then serves under set_stance("fail_on_recompile"): the
first request of 318 samples raises "Detected recompile ... tensor 'x' size mismatch at index 2. expected 64, actual
318". At the warm-up the time dim was 64 like the channels: one symbol for both (duck sizing), and nn.Linear(64, 32)
fixed it (blind A/B batch 48). FIXED=1 marks the time dim dynamic on the warm-up input: every request is served."""
import os

import torch
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self, channels=64, hidden=32, n_events=4):
        super().__init__()
        self.proj = nn.Linear(channels, hidden)
        self.head = nn.Linear(hidden, n_events)

    def forward(self, x):                    # x: (batch, channels, time)
        h = torch.relu(self.proj(x.transpose(1, 2)))
        return self.head(h.mean(1))


def main():
    torch.manual_seed(0)
    model = torch.compile(Tagger().eval(), dynamic=True, backend="eager")
    warm = torch.randn(1, 64, 64)
    if os.environ.get("FIXED"):
        torch._dynamo.mark_dynamic(warm, 2)
    with torch.no_grad():
        model(warm)
        print("warm-up done: window 64 samples")
        torch.compiler.set_stance("fail_on_recompile")
        for n in (318, 142, 448):
            print(f"request of {n} samples: event {model(torch.randn(1, 64, n)).argmax().item()}")


if __name__ == "__main__":
    main()
