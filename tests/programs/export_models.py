"""Small models for the export/aoti tests: each factory returns (model, args[, kwargs, dynamic_shapes])."""
import torch
from torch.export import Dim


class DataDependent(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:  # data-dependent branch
            return x + 1
        return x - 1


def data_dependent():
    return DataDependent(), (torch.randn(8),)


class Refined(torch.nn.Module):
    def forward(self, x):
        if x.shape[0] > 4:  # refines the range of batch
            return x * 2
        return x


def refined():
    return Refined(), (torch.randn(8, 3),), None, {"x": {0: Dim("batch")}}


class Specialized(torch.nn.Module):
    def forward(self, x):
        return x + torch.ones(8, 3)  # forces x.shape[0] == 8


def specialized():
    return Specialized(), (torch.randn(8, 3),), None, {"x": {0: Dim("batch")}}


@torch.library.custom_op("cdtest::no_fake", mutates_args=())
def no_fake(x: torch.Tensor) -> torch.Tensor:
    return x.sin()


class CustomOp(torch.nn.Module):
    def forward(self, x):
        return no_fake(x) + 1  # custom op without a fake kernel


def custom_op():
    return CustomOp(), (torch.randn(8),)


class Clean(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 3)

    def forward(self, x, y):
        return self.lin(x).relu() + y


def clean():
    torch.manual_seed(0)
    return Clean(), (torch.randn(6, 4), torch.randn(6, 3))


def clean_dynamic():
    torch.manual_seed(0)
    b = Dim("batch", min=2, max=64)
    return Clean(), (torch.randn(6, 4), torch.randn(6, 3)), None, {"x": {0: b}, "y": {0: b}}


def raises():
    raise ValueError("factory failed on purpose")


def not_a_tuple():
    return Clean()


def clean_wrong_shape():
    """The inputs of clean() with another batch size: a package built for batch 6 must reject them."""
    torch.manual_seed(0)
    return Clean(), (torch.randn(7, 4), torch.randn(7, 3))


class Relu(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2


def tiny_relu():
    """Smallest graph with a relu (for inductor's inject_relu_bug_TESTING_ONLY)."""
    torch.manual_seed(0)
    return Relu(), (torch.randn(16),)


class ReluOnly(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)


def relu_only():
    """One op: the cheapest graph to minify (each minifier step is an AOTI compile)."""
    return ReluOnly(), (torch.randn(16),)


@torch.library.custom_op("cdtest::bad_fake", mutates_args=())
def bad_fake(x: torch.Tensor) -> torch.Tensor:
    return x[: x.shape[0] // 2].clone()


@bad_fake.register_fake
def _(x):
    return torch.empty_like(x)  # wrong: the real op returns half the rows


class BadFake(torch.nn.Module):
    def forward(self, x):
        return bad_fake(x) * 2


def bad_fake_kernel():
    return BadFake(), (torch.randn(8, 3),)


class StrictOnly(torch.nn.Module):
    def forward(self, x):
        torch._dynamo.graph_break()  # fine in non-strict export, an error in strict mode
        return x + 1


def strict_only():
    return StrictOnly(), (torch.randn(4),)


class SkipCat(torch.nn.Module):
    """One pooling stage and a skip connection concatenated after upsampling: only even sizes line up."""
    def __init__(self):
        super().__init__()
        self.pool, self.up = torch.nn.MaxPool2d(2), torch.nn.Upsample(scale_factor=2)

    def forward(self, x):
        return torch.cat([x, self.up(self.pool(x))], 1)


def divisible():
    return SkipCat(), (torch.randn(1, 2, 16, 20),), None, {"x": {2: Dim("height", min=8, max=256),
                                                                 3: Dim("width", min=8, max=256)}}
