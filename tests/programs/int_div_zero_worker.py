"""A scoring worker: per-stop averages by integer trunc division; a request with zero stops makes eager raise a
catchable ZeroDivisionError that the worker rejects, while the compiled kernel divides unchecked and the process
dies of SIGFPE (blind A/B batch 38)."""
import torch


def per_stop(planned_s, n_stops):
    return torch.div(planned_s, n_stops, rounding_mode="trunc") * 2 + 1


fn = torch.compile(per_stop)
batches = [(torch.tensor([600, 900, 1200]), torch.tensor([3, 4, 5])),
           (torch.tensor([600, 900, 1200]), torch.tensor([3, 0, 5]))]
for planned, stops in batches:
    try:
        print("scored", fn(planned, stops).tolist())
    except RuntimeError as e:
        print("rejected batch:", str(e).splitlines()[0][:80])
print("worker exit OK")
