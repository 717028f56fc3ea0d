"""train_models.py — models for test_train.py, loaded as `train_models:NAME` (module:callable).

  plain_cnn   convolutions, ReLU and max pooling only (no batch norm): a chain the FT
              tiler can tile, for the refusal of tiled plans.
  diverging   a CNN whose forward takes another path from its fourth call on (the export
              records the second call: warm-up, then the recorded iteration), so that
              sfc-train --check sees the model leave the graph in its second iteration.
"""
import torch
from torch import nn


def plain_cnn(batch=2, image_size=32):
    m = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1),
                      nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(),
                      nn.MaxPool2d(2), nn.Flatten(), nn.Linear(8 * (image_size // 4) ** 2, 10))
    x = torch.randn(batch, 3, image_size, image_size)
    y = torch.randint(0, 10, (batch,))
    return m, ((x,), y), nn.functional.cross_entropy


class Diverging(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.fc = nn.Linear(4, 10)
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        h = self.conv(x)
        h = torch.tanh(h) if self.calls >= 4 else torch.relu(h)
        return self.fc(h.mean((2, 3)))


def diverging(batch=2, image_size=8):
    x = torch.randn(batch, 3, image_size, image_size)
    y = torch.randint(0, 10, (batch,))
    return Diverging(), ((x,), y), nn.functional.cross_entropy
