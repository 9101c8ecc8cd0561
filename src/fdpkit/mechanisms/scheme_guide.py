"""Which scheme was my run? Training-library settings -> fdpkit's sampling scheme and
neighbouring relation, and what each relation protects (one text for the web pages, the CLI
help and the docs; no maths here).

The mapping follows the libraries' documented behaviour: Opacus ``PrivacyEngine.make_private``
replaces the data loader by a ``DPDataLoader`` that samples every example independently
(Poisson, ``poisson_sampling=True`` by default); with ``poisson_sampling=False``, or any plain
``DataLoader(shuffle=True)``, batches are a shuffled partition of the data; jax_privacy's
fixed-size batches draw a fixed number of examples per step. Poisson accounting of shuffled
batches is not a guarantee (Chua et al., ICML 2024; Annamalai et al. 2024).
"""

from __future__ import annotations

#: (how the run was set up, --sampling, --relation to state)
SETTINGS = (
    ("Opacus PrivacyEngine.make_private(...) with its defaults (poisson_sampling=True)", "poisson", "add-remove"),
    ("Opacus with poisson_sampling=False, or a plain PyTorch DataLoader(shuffle=True)", "shuffled",
     "replace-one or zero-out"),
    ("jax_privacy (or any loader) drawing a fixed-size batch at every step", "fixed-size", "replace-one or zero-out"),
    ("TF Privacy / dp_accounting with Poisson-sampled batches", "poisson", "add-remove"),
)

RELATIONS = (
    ("add-remove", "a dataset with or without one example (hides whether someone is in the data at all)"),
    ("replace-one", "one example swapped for any other (hides what someone's record says; sensitivity 2C, "
                    "so μ is twice that of zero-out)"),
    ("zero-out", "one example replaced by one with zero gradient (the add-remove guarantee for fixed batches; "
                 "sensitivity C)"),
)

SHUFFLED_ADVICE = (
    "A shuffled run gets no amplification by sampling, so its honest guarantee is much weaker than the Poisson "
    "number a training library prints. Either retrain with Poisson sampling (Opacus make_private defaults) and "
    "report its guarantee, or report the shuffled run's honest bound (fdpkit's, with --sampling shuffled); never "
    "quote the Poisson figure for a shuffled run.")

STEPS_NOTE = (
    "Epochs of fixed-size or shuffled batches count steps as the data loader ran them: ceil(n/b) per epoch, or "
    "floor(n/b) with drop_last=True (--drop-last).")


def guide_text() -> str:
    """The guide as plain text (CLI help and docs)."""
    rows = "\n".join(f"- {how}: --sampling {s}, --relation {r}" for how, s, r in SETTINGS)
    rel = "\n".join(f"- {name}: {what}" for name, what in RELATIONS)
    return (f"Which scheme was my run?\n{rows}\nWhat each relation protects:\n{rel}\n{STEPS_NOTE}\n"
            f"{SHUFFLED_ADVICE}")
