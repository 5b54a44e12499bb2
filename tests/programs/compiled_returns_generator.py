"""A streaming sampler: start() returns a generator that yields previews and returns the final latents, and
the server compiles start(). Dynamo runs the generator to its end while tracing and returns an iterator over
the yielded previews, so `yield from` gets None (blind A/B batch 22; pytorch#146628)."""
import torch
import torch.nn as nn


class Sampler:
    def __init__(self, net, steps=4):
        self.net, self.steps = net, steps

    def _denoise(self, x):
        for i in range(self.steps):
            x = x - 0.1 * self.net(x)
            if i % 2 == 1:
                yield i, x.mean()
        return x

    def start(self, x):
        return self._denoise(x)


def serve(sampler, x):
    latents = yield from sampler.start(x)
    yield "final", (latents.clamp(-3, 3) + 3) / 6


torch.manual_seed(0)
sampler = Sampler(nn.Sequential(nn.Linear(8, 8), nn.Tanh()))
sampler.start = torch.compile(sampler.start, backend="eager")
with torch.no_grad():
    for tag, value in serve(sampler, torch.randn(2, 8)):
        print(tag, tuple(value.shape) if value.dim() else round(value.item(), 4))
