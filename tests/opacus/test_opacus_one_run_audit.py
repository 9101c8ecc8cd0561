"""End to end: one Opacus training run with white-box Dirac gradient canaries (Steinke, Nasr &
Jagielski 2023, Sec. 6), audited with fp.audit_one_run against the run's own certified
curve (FdpkitAccountant's report). A loop whose noise is halved behind the accountant's
back must be flagged.

Design: a linear model w in R^(d + m), no bias. Ordinary examples live in the first d
coordinates; canary j is the input 10 e_(d+j) with label +1 under the loss -y <w, x>, so
its clipped per-example gradient is exactly -e_(d+j) (norm C = 1) and touches nothing else.
Each canary is in the training set with probability 1/2 (the coin flips). Full-batch
Poisson sampling (q = 1), T steps: per canary the run is exactly the T-fold Gaussian
mechanism, and the white-box score w_T - w_0 at the canary's coordinate is its
likelihood-ratio statistic. The guesses (5% of the canaries, half at each end) are fixed
before the run, so no Bonferroni correction is needed.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("opacus")

import numpy as np  # noqa: E402
from opacus import PrivacyEngine  # noqa: E402
from torch import nn  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

import fdpkit as fp  # noqa: E402
import fdpkit.opacus  # noqa: E402,F401  (registers "fdpkit")

CANARIES = 8000
ORDINARY = 200
D_ORDINARY = 8
STEPS = 4
SIGMA = 4.0  # certified mu = sqrt(4) / 4 = 0.5
DELTA = 1e-5
GUESSES = (CANARIES // 40, CANARIES // 40)  # 5% of the canaries, fixed in advance


def _signed_dot(out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return -(out.squeeze(-1) * y).sum()


def _canary_run(seed: int, *, broken: bool):
    gen = torch.Generator().manual_seed(seed)
    included = torch.rand(CANARIES, generator=gen) < 0.5
    dim = D_ORDINARY + CANARIES
    x_ord = torch.zeros(ORDINARY, dim)
    x_ord[:, :D_ORDINARY] = torch.randn(ORDINARY, D_ORDINARY, generator=gen)
    y_ord = torch.sign(x_ord[:, 0] + 1e-9)
    idx = torch.nonzero(included).squeeze(1)
    x_can = torch.zeros(len(idx), dim)
    x_can[torch.arange(len(idx)), D_ORDINARY + idx] = 10.0
    data = TensorDataset(torch.cat([x_ord, x_can]), torch.cat([y_ord, torch.ones(len(idx))]))
    torch.manual_seed(seed)
    model = nn.Linear(dim, 1, bias=False)
    w0 = model.weight.detach().clone()
    engine = PrivacyEngine(accountant="fdpkit")
    loader = DataLoader(data, batch_size=len(data))  # one batch: Opacus samples with q = 1
    model, opt, loader = engine.make_private(module=model, optimizer=torch.optim.SGD(model.parameters(), lr=1.0),
                                             data_loader=loader, noise_multiplier=SIGMA, max_grad_norm=1.0,
                                             loss_reduction="sum",
                                             noise_generator=torch.Generator().manual_seed(seed + 1))
    if broken:  # the noise is halved; the accountant is still told SIGMA
        opt.noise_multiplier = SIGMA / 2
        opt.attach_step_hook(lambda o: engine.accountant.step(noise_multiplier=SIGMA, sample_rate=1.0))
    for _ in range(STEPS):
        for x, y in loader:
            opt.zero_grad()
            _signed_dot(model(x), y).backward()
            opt.step()
    scores = (model._module.weight.detach() - w0)[0, D_ORDINARY:].numpy()
    return scores, included.numpy(), engine


def test_correct_run_is_compatible_with_its_certified_curve():
    scores, included, engine = _canary_run(11, broken=False)
    report = engine.accountant.report()
    assert engine.accountant.history == [(SIGMA, 1.0, STEPS)]
    assert report.mu == pytest.approx(np.sqrt(STEPS) / SIGMA, rel=1e-6)
    audit = fp.audit_one_run(scores, included, delta=DELTA, mechanism=report, guesses=GUESSES)
    assert audit.violation is False
    assert 0 < audit.epsilon_lower < engine.get_epsilon(DELTA)


def test_halved_noise_is_flagged():
    scores, included, engine = _canary_run(12, broken=True)
    assert engine.accountant.history == [(SIGMA, 1.0, STEPS)]  # the accountant was fooled
    audit = fp.audit_one_run(scores, included, delta=DELTA, mechanism=engine.accountant.report(),
                             guesses=GUESSES)
    assert audit.violation is True, audit.verdict


def test_an_opacus_engine_as_the_mechanism_is_named():
    # before: a plain ValueError without the parameter's name or a hint, for the engine or accountant
    engine = PrivacyEngine(accountant="fdpkit")
    rng = np.random.default_rng(0)
    inc = rng.random(200) < 0.5
    for given in (engine, engine.accountant):
        with pytest.raises(fp.ParameterError, match=r"engine\.accountant\.report\(\)") as info:
            fp.audit_one_run(rng.normal(size=200), inc, mechanism=given)
        assert info.value.parameter == "mechanism"
