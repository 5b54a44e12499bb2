"""Model targets for `perf` (file.py:factory -> (model, args)). Sizes are chosen so the numbers are
robust on a loaded 2-core CPU box, and compile in a few seconds."""
import torch


class Chain(torch.nn.Module):
    """A long pointwise chain: eager makes ~24 passes over memory, Inductor fuses it into one kernel."""

    def forward(self, x):
        for _ in range(6):
            x = torch.sigmoid(x * 1.01 + 0.1) * torch.tanh(x) - x.cos() * 0.5
        return x


def chain():
    torch.manual_seed(0)
    return Chain(), (torch.randn(512, 1024),)


class MLP(torch.nn.Module):
    def __init__(self, d=256):
        super().__init__()
        self.fc1 = torch.nn.Linear(d, 4 * d)
        self.fc2 = torch.nn.Linear(4 * d, d)
        self.ln = torch.nn.LayerNorm(d)

    def forward(self, x):
        return self.ln(x + self.fc2(torch.nn.functional.gelu(self.fc1(x))))


def mlp():
    torch.manual_seed(0)
    return MLP(), (torch.randn(64, 256),)


class BreakInLoop(torch.nn.Module):
    """Pointwise blocks with a data-dependent Python float read in the loop: `.item()` breaks the
    graph on every iteration, so the loop runs as 4 small graphs with eager glue in between."""

    def forward(self, x):
        for _ in range(4):
            x = torch.sigmoid(x * 1.01 + 0.1) * torch.tanh(x) - x.cos() * 0.5
            scale = x.abs().mean().item()   # graph break: Tensor.item()
            x = x / (scale + 1.0)
        return x


def gb_loop():
    torch.manual_seed(0)
    return BreakInLoop(), (torch.randn(256, 256),)


class BreakInLoopFixed(torch.nn.Module):
    """The same computation, the scale kept as a tensor: one graph."""

    def forward(self, x):
        for _ in range(4):
            x = torch.sigmoid(x * 1.01 + 0.1) * torch.tanh(x) - x.cos() * 0.5
            scale = x.abs().mean()
            x = x / (scale + 1.0)
        return x


def gb_loop_fixed():
    torch.manual_seed(0)
    return BreakInLoopFixed(), (torch.randn(256, 256),)


class BreakSplit(torch.nn.Module):
    """Graph breaks outside a loop: the forward is split into 3 graphs with eager glue between."""

    def forward(self, x):
        x = torch.sigmoid(x * 1.01 + 0.1) * torch.tanh(x) - x.cos() * 0.5
        s1 = x.abs().mean().item()      # graph break 1
        x = torch.sigmoid(x / (s1 + 1.0)) * torch.tanh(x) - x.cos() * 0.5
        s2 = x.abs().mean().item()      # graph break 2
        return x / (s2 + 1.0)


def gb_split():
    torch.manual_seed(0)
    return BreakSplit(), (torch.randn(256, 256),)


# ---- CUDA models (GPU tests) -----------------------------------------------------------------

def cuda_chain():
    torch.manual_seed(0)
    return Chain().cuda(), (torch.randn(2048, 2048, device="cuda"),)


class MutatesInput(torch.nn.Module):
    """Mutates its (non-parameter) input in place: CUDA graph trees cannot replay that, so
    reduce-overhead skips cudagraphs ("skipping cudagraphs due to mutated inputs")."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(256, 256)

    def forward(self, x):
        x.mul_(0.5)
        return torch.relu(self.fc(x))


def cuda_mutates_input():
    torch.manual_seed(0)
    return MutatesInput().cuda(), (torch.randn(64, 256, device="cuda"),)


class DropoutMLP(MLP):
    """The MLP with dropout, timed in train mode: compiled on CPU, Inductor draws the dropout mask with
    its own per-element generator (normalized_rand_cpu) instead of eager's bernoulli_."""

    def __init__(self, d=256):
        super().__init__(d)
        self.drop = torch.nn.Dropout(0.1)

    def forward(self, x):
        return self.ln(x + self.drop(self.fc2(self.drop(torch.nn.functional.gelu(self.fc1(x))))))


def dropout_mlp():
    torch.manual_seed(0)
    return DropoutMLP().train(), (torch.randn(64, 256),)
