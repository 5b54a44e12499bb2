"""Loss functions for the student/teacher distillation runs."""
from dataclasses import dataclass

import torch
import torch.nn.functional as F


@dataclass
class DistillSettings:
    temperature: float = 4.0
    alpha: float = 0.3          # weight of the hard-label CE term
    label_smoothing: float = 0.05


# shared by the trainer and the loss; the trainer updates it every epoch
SETTINGS = DistillSettings()


@torch.compiler.allow_in_graph
def soft_target_kl(student_logits, teacher_logits):
    """Hinton-style KD term, scaled by T^2 so its gradient magnitude stays
    comparable across temperatures."""
    t = SETTINGS.temperature
    log_p_s = F.log_softmax(student_logits / t, dim=-1)
    log_p_t = F.log_softmax(teacher_logits / t, dim=-1)
    kl = F.kl_div(log_p_s, log_p_t, reduction="batchmean", log_target=True)
    return kl * (t * t)


def distillation_loss(student_logits, teacher_logits, labels):
    ce = F.cross_entropy(student_logits, labels,
                         label_smoothing=SETTINGS.label_smoothing)
    kd = soft_target_kl(student_logits, teacher_logits)
    a = SETTINGS.alpha
    return a * ce + (1.0 - a) * kd, ce.detach(), kd.detach()
