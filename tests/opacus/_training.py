"""Tiny real Opacus training runs on synthetic data (CPU, well under a second each)."""

from __future__ import annotations

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

N_FEATURES = 4


def synthetic(n: int = 256, seed: int = 0) -> TensorDataset:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, N_FEATURES, generator=g)
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).long()
    return TensorDataset(x, y)


def model(seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(N_FEATURES, 8), nn.ReLU(), nn.Linear(8, 2))


def train(module, optimizer, loader, epochs: int) -> int:
    """Plain training loop; returns the number of batches seen."""
    loss_fn = nn.CrossEntropyLoss()
    seen = 0
    for _ in range(epochs):
        for x, y in loader:
            if len(x) == 0:
                continue
            optimizer.zero_grad()
            loss_fn(module(x), y).backward()
            optimizer.step()
            seen += 1
    return seen


def private(engine, *, n: int = 256, batch_size: int = 32, noise_multiplier: float = 1.0,
            poisson: bool = True, shuffle: bool = True, drop_last: bool = False, seed: int = 0):
    m = model(seed)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    loader = DataLoader(synthetic(n, seed), batch_size=batch_size, shuffle=shuffle, drop_last=drop_last)
    return engine.make_private(module=m, optimizer=opt, data_loader=loader, noise_multiplier=noise_multiplier,
                               max_grad_norm=1.0, poisson_sampling=poisson)
