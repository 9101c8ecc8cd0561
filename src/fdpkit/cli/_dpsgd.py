"""DP-SGD options shared by ``fdpkit report dpsgd``, ``fdpkit calibrate dpsgd`` and ``fdpkit
ledger propose``/``check``: parsing only. Library errors name the Python parameter; they
reach the user in the options' words (``sample_rate must be ...`` -> ``--sample-rate must be
...``) through :func:`fdpkit.cli._option_words.in_option_words`, the one translator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Optional

import typer

from fdpkit.cli._option_words import in_option_words
from fdpkit.errors import ParameterError
from fdpkit.vocabulary import ADD_REMOVE, EXAMPLE, POISSON

NoiseOpt = typer.Option(None, "--noise-multiplier", help="Noise standard deviation / clipping norm (sigma).")
RateOpt = typer.Option(None, "--sample-rate", help="Sampling probability q in (0, 1]; or --batch-size with --dataset-size.")
StepsOpt = typer.Option(None, "--steps", help="Number of optimizer steps; or --epochs.")
BatchOpt = typer.Option(None, "--batch-size", help="Batch size (expected size for Poisson sampling).")
DatasetOpt = typer.Option(None, "--dataset-size", help="Number of examples (or users) in the training set.")
EpochsOpt = typer.Option(None, "--epochs", help=(
    "Epochs: steps = ceil(epochs x dataset size / batch size) for Poisson; ceil(n/b) batches per epoch for "
    "shuffled or fixed-size batches (floor with --drop-last)."))
SamplingOpt = typer.Option(POISSON, "--sampling", help=(
    "poisson, truncated-poisson, fixed-size or shuffled. Which was my run? Opacus make_private defaults: poisson; "
    "Opacus poisson_sampling=False or DataLoader(shuffle=True): shuffled; jax_privacy fixed batches: fixed-size."))
RelationOpt = typer.Option(ADD_REMOVE, "--relation", help=(
    "add-remove (hides membership), replace-one (hides a record's content; 2x the mu of zero-out) or zero-out "
    "(add-remove's analogue for fixed batches). Shuffled and fixed-size runs need replace-one or zero-out."))
DropLastOpt = typer.Option(False, "--drop-last", help=(
    "Shuffled or fixed-size batches in epochs: the loader dropped the last, smaller batch (floor(n/b) steps per "
    "epoch instead of ceil(n/b))."))
MaxBatchOpt = typer.Option(None, "--max-batch-size", help="Truncated Poisson: largest batch kept.")
UnitOpt = typer.Option(EXAMPLE, "--unit", help="Privacy unit: example or user.")
PerUserOpt = typer.Option(None, "--examples-per-user", help="With --unit user: most examples one user has (group privacy).")
ScheduleOpt = typer.Option(None, "--schedule", help="JSON file: a list of phases (dicts with the per-phase options).")
HistoryOpt = typer.Option(None, "--opacus-history", help=(
    "An Opacus accountant's history: JSON (a list of (sigma, q, steps) triples, or a state_dict) or a torch.save "
    "file (an accountant state_dict or a PrivacyEngine.save_checkpoint checkpoint)."))


#: The DP-SGD options as ``{parameter: flag}``, for the errors of :func:`build` (``fdpkit ledger
#: propose`` and ``check`` read them outside :func:`fdpkit.cli._common.guarded`).
FLAGS = {name: option.param_decls[0] for name, option in (
    ("noise_multiplier", NoiseOpt), ("sample_rate", RateOpt), ("steps", StepsOpt), ("batch_size", BatchOpt),
    ("dataset_size", DatasetOpt), ("epochs", EpochsOpt), ("sampling", SamplingOpt), ("relation", RelationOpt),
    ("drop_last", DropLastOpt), ("max_batch_size", MaxBatchOpt), ("unit", UnitOpt),
    ("examples_per_user", PerUserOpt), ("schedule", ScheduleOpt), ("opacus_history", HistoryOpt))}


def translated(fn: Callable[[], Any]) -> Any:
    """``fn()``, its ValueError in the options' words (:func:`fdpkit.cli._option_words.in_option_words`
    with :data:`FLAGS`), still naming the library's arguments (``parameter``)."""
    try:
        return fn()
    except ValueError as exc:
        raise ParameterError(in_option_words(FLAGS, exc, str(exc)), getattr(exc, "parameter", None),
                             getattr(exc, "parameters", None)) from None


def _json_file(path: Path, what: str) -> Any:
    from fdpkit._inputs import load_json
    from fdpkit.cli._common import read_input_text

    return load_json(read_input_text(path, what, encoding="utf-8-sig"), what)


def opacus_history_file(path: Path, what: str) -> Any:
    """The history in an Opacus accountant file: JSON (``{"history": [...], "mechanism": ...}``
    or a bare list of (noise_multiplier, sample_rate, steps)) or a ``torch.save`` file (an
    accountant ``state_dict`` or a ``PrivacyEngine.save_checkpoint`` checkpoint; loaded with
    ``weights_only=True``). Lists of lists become lists of tuples; the rows are validated by
    :func:`fdpkit.dpsgd_from_opacus_history`."""
    from fdpkit.mechanisms._opacus_state import state_history  # no torch, no maths: the file's history

    return state_history(opacus_state_file(path, what), f"{what} {path}")


def opacus_state_file(path: Path, what: str) -> Any:
    """The plain data of an Opacus accountant file (as :func:`opacus_history_file` reads it)."""
    from fdpkit.cli._common import MAX_STATE_BYTES, read_input_bytes

    raw = read_input_bytes(Path(path), f"{what} {path}", limit=MAX_STATE_BYTES, text=False)
    from fdpkit._inputs import DuplicateKeyError, _unique_keys

    try:  # a key named twice ({"history": [...], "history": []}) is refused, as in every JSON spec
        data = json.loads(raw.decode("utf-8-sig"), object_pairs_hook=_unique_keys)
    except DuplicateKeyError as exc:
        raise ValueError(f"{what} {path} {exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        try:
            import io

            import torch
        except ModuleNotFoundError:
            raise ValueError(f"{what} {path} is not JSON, and reading torch.save files needs the extra "
                             "fdpkit[opacus] (torch)") from None
        try:
            data = torch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
        except Exception:  # noqa: BLE001 - any unreadable pickle
            raise ValueError(f"{what} {path} is neither JSON nor a torch.save file of plain data (an accountant "
                             "state_dict or a PrivacyEngine checkpoint)") from None
    return data


def build(noise_multiplier: Optional[float], sample_rate: Optional[float], steps: Optional[float],
          batch_size: Optional[float], dataset_size: Optional[int], epochs: Optional[float], sampling: str,
          relation: str, max_batch_size: Optional[float], unit: str, examples_per_user: Optional[float],
          schedule: Optional[Path] = None, history: Optional[Path] = None, drop_last: bool = False):
    """The DP-SGD mechanism the options describe."""
    import fdpkit as fp
    from fdpkit.mechanisms import dpsgd_from_opacus_history, dpsgd_schedule

    common = dict(dataset_size=dataset_size, sampling=sampling, relation=relation, unit=unit,
                  examples_per_user=examples_per_user)
    if schedule is not None or history is not None:
        if schedule is not None and history is not None:
            raise ValueError("give --schedule or --opacus-history, not both")
        if any(v is not None for v in (noise_multiplier, sample_rate, steps, batch_size, epochs, max_batch_size)):
            raise ValueError("--schedule/--opacus-history describe every phase: drop --noise-multiplier, "
                             "--sample-rate, --batch-size, --steps, --epochs and --max-batch-size")
        if history is not None:
            rows = opacus_history_file(history, "--opacus-history")
            return translated(lambda: dpsgd_from_opacus_history(rows, **common))
        return translated(lambda: dpsgd_schedule(_json_file(schedule, "--schedule"), **common))
    if noise_multiplier is None:
        raise ValueError("--noise-multiplier is required (or --schedule / --opacus-history)")
    return translated(lambda: fp.dpsgd(noise_multiplier, sample_rate, steps, batch_size=batch_size,
                                       epochs=epochs, max_batch_size=max_batch_size, drop_last=drop_last, **common))
