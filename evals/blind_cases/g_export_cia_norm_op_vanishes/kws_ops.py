import torch

_lib = torch.library.Library("kwsops", "DEF")
_lib.define("rms_norm(Tensor x, Tensor weight, float eps) -> Tensor")
_lib.define("gated_dwconv(Tensor x, Tensor weight, Tensor gate_w) -> Tensor")


def _rms_norm(x, weight, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


def _gated_dwconv(x, weight, gate_w):
    # x: (B, T, C); weight: (C, 1, K); gate_w: (C,)
    k = weight.shape[-1]
    y = torch.nn.functional.conv1d(x.transpose(1, 2), weight, padding=k // 2, groups=x.shape[-1])
    return y.transpose(1, 2) * torch.sigmoid(x * gate_w)


_lib.impl("rms_norm", _rms_norm, "CompositeImplicitAutograd")
_lib.impl("gated_dwconv", _gated_dwconv, "CompositeImplicitAutograd")

# ops the NPU delegate has hand-written kernels for
DELEGATED_OPS = {
    torch.ops.kwsops.rms_norm.default: "npu_rms_norm",
    torch.ops.kwsops.gated_dwconv.default: "npu_gated_dwconv",
}
