"""Batched image preprocessing for the OCR recognizer (torch backend, no PIL)."""
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F


@dataclass
class ProcessorConfig:
    height: int = 48
    width: int = 320
    do_resize: bool = True
    do_rescale: bool = True
    rescale_factor: float = 1 / 255
    do_normalize: bool = True
    image_mean: tuple = field(default_factory=lambda: (0.5, 0.5, 0.5))
    image_std: tuple = field(default_factory=lambda: (0.5, 0.5, 0.5))
    resample: str = "bilinear"


class OCRImageProcessor:
    def __init__(self, config: ProcessorConfig):
        self.config = config

    def resize(self, images: torch.Tensor, size) -> torch.Tensor:
        # antialias off to stay aligned with the cv2.resize reference used at training time
        return F.interpolate(images, size=size, mode=self.config.resample, align_corners=False, antialias=False)

    def rescale(self, images: torch.Tensor) -> torch.Tensor:
        return images.to(torch.float32) * self.config.rescale_factor

    def normalize(self, images: torch.Tensor) -> torch.Tensor:
        mean = torch.tensor(self.config.image_mean, dtype=images.dtype, device=images.device).view(1, -1, 1, 1)
        std = torch.tensor(self.config.image_std, dtype=images.dtype, device=images.device).view(1, -1, 1, 1)
        return (images - mean) / std

    def preprocess(self, images: torch.Tensor) -> torch.Tensor:
        """images: uint8 tensor [B, C, H, W] straight from the decoder."""
        cfg = self.config
        if cfg.do_resize:
            images = self.resize(images, (cfg.height, cfg.width))
        if cfg.do_rescale:
            images = self.rescale(images)
        if cfg.do_normalize:
            images = self.normalize(images)
        return images.contiguous()

    __call__ = preprocess
