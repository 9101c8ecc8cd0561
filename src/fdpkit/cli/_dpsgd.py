"""DP-SGD options shared by ``fdpkit report dpsgd`` and ``fdpkit calibrate dpsgd``: parsing
only. Library errors name the Python parameter; here the first word becomes the flag the
user typed (``sample_rate must be ...`` -> ``--sample-rate must be ...``)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable, Optional

import typer

from fdpkit.vocabulary import ADD_REMOVE, EXAMPLE, POISSON

PARAMS = ("noise_multiplier", "sample_rate", "steps", "batch_size", "dataset_size", "epochs", "sampling",
          "relation", "max_batch_size", "unit", "examples_per_user", "mu", "epsilon", "delta", "tpr", "fpr",
          "advantage", "posterior", "prior", "history", "phases", "drop_last")

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


def flagged(message: str) -> str:
    """The message with its leading parameter name written as the CLI flag, and the library's
    keyword spelling of a value to give (``relation='replace-one'``, ``delta=1e-5``) as the option
    to type (``--relation replace-one``, ``--delta 1e-5``).

    >>> flagged("relation 'add-remove' cannot be accounted ...; use relation='replace-one' or 'zero-out'")
    "--relation 'add-remove' cannot be accounted ...; use --relation replace-one or 'zero-out'"
    >>> flagged("an epsilon target needs delta (e.g. delta=1e-5)")
    'an epsilon target needs delta (e.g. --delta 1e-5)'
    """
    m = re.match(r"^(phases\[\d+\]: |history\[\d+\]: )?([a-z_]+)\b", message)
    if m and m.group(2) in PARAMS:
        message = message[: m.start(2)] + "--" + m.group(2).replace("_", "-") + message[m.end(2):]

    def option(k: re.Match) -> str:
        return f"--{k.group(1).replace('_', '-')} {k.group(3)}" if k.group(1) in PARAMS else k.group(0)

    return re.sub(r"(?<![-\w])([a-z][a-z_]*)=('?)([^\s',;)]+)\2", option, message)


def translated(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except ValueError as exc:
        raise ValueError(flagged(str(exc))) from None


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
            try:
                return translated(lambda: dpsgd_from_opacus_history(rows, **common))
            except ValueError as exc:  # "history[...]" / "history must ..." is the file's content
                raise ValueError(re.sub(r"^--history\b", "history", str(exc))) from None
        return translated(lambda: dpsgd_schedule(_json_file(schedule, "--schedule"), **common))
    if noise_multiplier is None:
        raise ValueError("--noise-multiplier is required (or --schedule / --opacus-history)")
    return translated(lambda: fp.dpsgd(noise_multiplier, sample_rate, steps, batch_size=batch_size,
                                       epochs=epochs, max_batch_size=max_batch_size, drop_last=drop_last, **common))
