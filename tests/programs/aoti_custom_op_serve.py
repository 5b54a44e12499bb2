"""An AOTInductor package whose model calls a Python custom op. `--export PATH` imports the op's module and
builds the package; without it, a serving process loads PATH and never imports that module, so the package's
call to cdtest::scaled_relu finds no op (blind A/B batch 23: an int8 intent-classifier worker)."""
import sys

import torch

if sys.argv[1] == "--export":
    import aoti_op_lib  # noqa: F401  (registers cdtest::scaled_relu)

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(8, 4)

        def forward(self, x):
            return torch.ops.cdtest.scaled_relu(self.lin(x), 2.0)

    ep = torch.export.export(M().eval(), (torch.randn(2, 8),))
    torch._inductor.aoti_compile_and_package(ep, package_path=sys.argv[2])
    print("exported", sys.argv[2])
else:
    runner = torch._inductor.aoti_load_package(sys.argv[1])
    print(runner(torch.randn(2, 8)).shape)
