"""A distillation loss whose temperature anneals to 0, with a try/except ZeroDivisionError around 1 / T for the
hard-label fallback (blind A/B batch 40). Compiled: after T's first change it is a dynamic float, 1 / T is traced
into the graph, gives inf at T = 0 instead of raising, and the loss is nan; eager takes the fallback."""
import torch
import torch.nn.functional as F


def kd_loss(student, teacher, labels, temperature):
    try:
        inv_t = 1.0 / temperature
    except ZeroDivisionError:
        return F.cross_entropy(student, labels)
    soft = F.kl_div(F.log_softmax(student * inv_t, -1), F.softmax(teacher * inv_t, -1), reduction="batchmean")
    return 0.5 * soft * temperature ** 2 + 0.5 * F.cross_entropy(student, labels)


loss_fn = torch.compile(kd_loss)
torch.manual_seed(0)
s, t, y = torch.randn(16, 10), torch.randn(16, 10), torch.randint(0, 10, (16,))
for temperature in (4.0, 2.0, 1.0, 0.0):
    print(f"T={temperature:.1f} loss={loss_fn(s, t, y, temperature).item():.4f}")
