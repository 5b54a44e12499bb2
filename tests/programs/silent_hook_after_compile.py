"""Silent difference: a forward hook registered after the first compiled call is never called.
Dynamo skips guards on nn.Module hook dicts by default (torch._dynamo.config.skip_nnmodule_hook_guards),
so the graph compiled without the hook keeps running without it. Exits 0 either way; only the
printed hook counts differ (eager: 1 from step 2 on; compiled: 0)."""
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
compiled = torch.compile(model)
x = torch.randn(4, 8)
calls = []
for step in range(4):
    hook = None
    if step == 2:   # log the first layer's activations once, after warm-up
        hook = model[0].register_forward_hook(lambda mod, inp, out: calls.append(out.detach().abs().mean()))
    compiled(x)
    if hook is not None:
        hook.remove()
    print(f"step {step}: activation-hook calls so far {len(calls)}")
