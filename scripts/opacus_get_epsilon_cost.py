"""Per-call cost of FdpkitAccountant.get_epsilon during training (issue 26).

Trains a tiny model with Opacus (Poisson, q = 1/64, noise 1.0) for EPOCHS epochs and asks
get_epsilon(1e-5) after every epoch (a new history: one composition) and then again at
once (same history: cached), next to Opacus's own RDP and PRV accountants on the same
history.

    python scripts/opacus_get_epsilon_cost.py
"""

from __future__ import annotations

import statistics
import time
import warnings

import torch
from opacus import PrivacyEngine
from opacus.accountants import PRVAccountant, RDPAccountant
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import fdpkit.opacus  # noqa: F401  (registers "fdpkit")

EPOCHS = 5
warnings.simplefilter("ignore")


def main() -> None:
    torch.manual_seed(0)
    x = torch.randn(4096, 16)
    data = TensorDataset(x, (x[:, 0] > 0).long())
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2))
    engine = PrivacyEngine(accountant="fdpkit")
    model, opt, loader = engine.make_private(module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
                                             data_loader=DataLoader(data, batch_size=64), noise_multiplier=1.0,
                                             max_grad_norm=1.0)
    fresh, cached, rdp_t, prv_t = [], [], [], []
    for epoch in range(EPOCHS):
        for xb, yb in loader:
            if len(xb) == 0:
                continue
            opt.zero_grad()
            nn.functional.cross_entropy(model(xb), yb).backward()
            opt.step()
        t = time.perf_counter(); eps = engine.get_epsilon(1e-5); fresh.append(time.perf_counter() - t)
        t = time.perf_counter(); engine.get_epsilon(1e-5); cached.append(time.perf_counter() - t)
        others = []
        for cls, store in ((RDPAccountant, rdp_t), (PRVAccountant, prv_t)):
            acc = cls()
            acc.history = list(engine.accountant.history)
            t = time.perf_counter(); others.append(acc.get_epsilon(1e-5)); store.append(time.perf_counter() - t)
        print(f"epoch {epoch + 1}: {len(engine.accountant)} steps, eps={eps:.4f} (fdpkit) vs RDP "
              f"{others[0]:.4f}, PRV {others[1]:.4f}; fdpkit new history "
              f"{fresh[-1] * 1e3:.0f} ms, cached {cached[-1] * 1e6:.0f} us; RDP {rdp_t[-1] * 1e3:.1f} ms, "
              f"PRV {prv_t[-1] * 1e3:.0f} ms")
    print(f"median per epoch: fdpkit {statistics.median(fresh) * 1e3:.0f} ms (cached {statistics.median(cached) * 1e6:.0f} us),"
          f" RDP {statistics.median(rdp_t) * 1e3:.1f} ms, PRV {statistics.median(prv_t) * 1e3:.0f} ms")


if __name__ == "__main__":
    main()
