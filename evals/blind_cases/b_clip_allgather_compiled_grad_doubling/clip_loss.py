import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F


class ClipLoss(nn.Module):
    """Symmetric InfoNCE over the global batch.

    Features from the other ranks are gathered as negatives; the local
    slice is swapped back in so gradients reach this rank's encoders.
    """

    def __init__(self, rank=0, world_size=1):
        super().__init__()
        self.rank = rank
        self.world_size = world_size

    def gather_features(self, image_features, text_features):
        if self.world_size == 1:
            return image_features, text_features
        all_img = [torch.zeros_like(image_features) for _ in range(self.world_size)]
        all_txt = [torch.zeros_like(text_features) for _ in range(self.world_size)]
        dist.all_gather(all_img, image_features)
        dist.all_gather(all_txt, text_features)
        all_img[self.rank] = image_features
        all_txt[self.rank] = text_features
        return torch.cat(all_img), torch.cat(all_txt)

    def forward(self, image_features, text_features, logit_scale):
        all_img, all_txt = self.gather_features(image_features, text_features)
        logits_per_image = logit_scale * all_img @ all_txt.t()
        logits_per_text = logits_per_image.t()
        labels = torch.arange(logits_per_image.shape[0], device=logits_per_image.device)
        return (F.cross_entropy(logits_per_image, labels) + F.cross_entropy(logits_per_text, labels)) / 2
