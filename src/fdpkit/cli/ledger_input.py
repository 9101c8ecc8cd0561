"""The mechanism of ``fdpkit ledger propose`` and ``fdpkit ledger check``: a spec file or
inline JSON, a Gaussian or Laplace mechanism, an Opacus accountant file, or a DP-SGD run
described as it was trained (the options of ``fdpkit report dpsgd``: noise multiplier; sample
rate or batch and dataset size; steps or epochs; sampling scheme, relation and unit). A run
given without ``--relation`` is accounted under the dataset's relation (zero-out, its
analogue for shuffled and fixed-size batches, on an add-remove dataset). Parsing only: the
mechanisms are the library's, and the ledger refuses a relation its dataset does not
declare (:func:`fdpkit.ledger.rules.check_relation`)."""

from __future__ import annotations

import functools
import inspect
from pathlib import Path
from typing import Any, Callable, Optional

import typer

from fdpkit.cli import _dpsgd as _dp
from fdpkit.cli._common import err, fail, load_spec
from fdpkit.vocabulary import ADD_REMOVE, EXAMPLE, FIXED_BATCH_SAMPLINGS, POISSON, ZERO_OUT, spelling

MechOpt = typer.Option(None, "--mechanism", "-m", help="Mechanism spec file (JSON or TOML), as for `fdpkit report`; "
                                                       "or a saved report, calibration or plan JSON.")
SpecOpt = typer.Option(None, "--spec", help="Mechanism spec as inline JSON.")
GaussOpt = typer.Option(None, "--gaussian", help="A Gaussian mechanism with this σ (sensitivity 1).")
LapOpt = typer.Option(None, "--laplace", help="A Laplace mechanism with this scale (sensitivity 1).")
FromOpacusOpt = typer.Option(None, "--from-opacus", help="A training run: an Opacus accountant state_dict, "
                                                         "checkpoint or history, saved with torch.save or as "
                                                         "JSON (Poisson sampling, add/remove).")
RelationOpt = typer.Option(None, "--relation", help=(
    "DP-SGD: add-remove, replace-one or zero-out (default: the dataset's relation; zero-out for shuffled or "
    "fixed-size batches on an add-remove dataset)."))

#: The DP-SGD options of a release, in the order ``--help`` lists them: (parameter, type,
#: option). Those of ``fdpkit report dpsgd`` (its ``_dpsgd.build`` reads them), except that
#: ``--relation`` defaults to the dataset's.
DPSGD_PARAMETERS: tuple[tuple[str, Any, Any], ...] = (
    ("noise_multiplier", Optional[float], _dp.NoiseOpt), ("sample_rate", Optional[float], _dp.RateOpt),
    ("steps", Optional[float], _dp.StepsOpt), ("batch_size", Optional[float], _dp.BatchOpt),
    ("dataset_size", Optional[int], _dp.DatasetOpt), ("epochs", Optional[float], _dp.EpochsOpt),
    ("sampling", str, _dp.SamplingOpt), ("relation", Optional[str], RelationOpt),
    ("max_batch_size", Optional[float], _dp.MaxBatchOpt), ("unit", str, _dp.UnitOpt),
    ("examples_per_user", Optional[float], _dp.PerUserOpt), ("schedule", Optional[Path], _dp.ScheduleOpt),
    ("opacus_history", Optional[Path], _dp.HistoryOpt), ("drop_last", bool, _dp.DropLastOpt))

#: The DP-SGD options' parameter names.
DPSGD_OPTIONS = tuple(name for name, _, _ in DPSGD_PARAMETERS)

#: The default of a command's parameter ``run``, which :func:`with_dpsgd_options` replaces.
DPSGD_RUN: Any = None


def with_dpsgd_options(command: Callable) -> Callable:
    """Declare the :data:`DPSGD_PARAMETERS` for a command, once for ``fdpkit ledger propose``
    and ``fdpkit ledger check``: they take the place of the command's parameter ``run``
    (typer reads the signature), and the command receives them as one dict ``run``."""
    signature = inspect.signature(command)
    if "run" not in signature.parameters:
        raise TypeError(f"{command.__name__} has no parameter run for the DP-SGD options")
    params: list[inspect.Parameter] = []
    for param in signature.parameters.values():
        if param.name == "run":
            params += [inspect.Parameter(name, param.kind, default=option, annotation=kind)
                       for name, kind, option in DPSGD_PARAMETERS]
        else:
            params.append(param)

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        run = {name: kwargs.pop(name) for name in DPSGD_OPTIONS}
        return command(*args, run=run, **kwargs)

    annotations = {k: v for k, v in command.__annotations__.items() if k != "run"}
    wrapper.__annotations__ = {**annotations, **{name: kind for name, kind, _ in DPSGD_PARAMETERS}}
    wrapper.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    return wrapper


def gives_run(options: dict) -> bool:
    """Whether the DP-SGD options describe a run (a noise multiplier, a schedule or a history)."""
    return any(options.get(k) is not None for k in ("noise_multiplier", "schedule", "opacus_history"))


def declared_relation(ledger: Any, name: str, run: dict) -> Optional[str]:
    """The dataset's relation when ``run`` gives a DP-SGD run (its default relation), else None."""
    return ledger.dataset(name).relation_name if gives_run(run) else None


def default_relation(declared: str, sampling: Any) -> str:
    """The relation a DP-SGD run given without ``--relation`` is accounted under: the
    dataset's, except zero-out for shuffled or fixed-size batches on an add-remove dataset
    (add-remove itself cannot be accounted for them; zero-out is its analogue)."""
    if declared == ADD_REMOVE and spelling(sampling) in FIXED_BATCH_SAMPLINGS:
        return ZERO_OUT
    return declared


def mechanism_from_opacus_file(path: Path, ledger: Any = None, dataset: Optional[str] = None,
                               warnings: Optional[list[str]] = None) -> dict:
    """The DP-SGD run recorded in an Opacus accountant file, as a mechanism spec.

    JSON (``{"history": [...], "mechanism": ...}`` or a bare list of (noise_multiplier,
    sample_rate, steps)) or a ``torch.save`` file (an accountant ``state_dict`` or a
    ``PrivacyEngine.save_checkpoint`` checkpoint; loaded with ``weights_only=True``).
    With a ``ledger`` and ``dataset``: a resumed run's steps that a BudgetGuard already
    recorded and the ledger released in ``dataset`` are left out (said on stderr); a file
    with no step left is an error. What is said on stderr is also appended to ``warnings``
    (``--format json``'s ``warnings``)."""
    # imported when used: the CLI starts without the mechanisms (tests/cli/test_cli_startup.py)
    from fdpkit.mechanisms import dpsgd_from_opacus_history
    from fdpkit.mechanisms._opacus_state import after_prefix, recorded_for, recorded_marker, state_history

    data = _dp.opacus_state_file(path, "--from-opacus")
    history = state_history(data, f"--from-opacus {path}")
    if ledger is not None and dataset is not None:
        dpsgd_from_opacus_history(history)  # validated before the ledger is read
        rec = recorded_for(ledger, dataset, history, recorded_marker(data))
        if rec.released:
            ids = ", ".join(str(rid) for rid, _ in rec.released)
            history = after_prefix(history, rec.prefix)
            if not history:
                fail(f"every step of --from-opacus {path} is already released in {dataset!r} (release {ids}): "
                     "nothing new to record")
            said = [f"note: the first {sum(t for _, _, t in rec.prefix)} steps of {path} are already released in "
                    f"{dataset!r} (release {ids}); only the {sum(t for _, _, t in history)} steps after them are "
                    "taken"]
        else:
            said = []
        said += [f"! release {rid} ({dataset!r}, not released) holds earlier steps of this run, which this one holds "
                 "too: withdraw it, or they count twice" for rid in rec.pending]
        for line in said:
            err.print(line, highlight=False, soft_wrap=True, markup=False)
        if warnings is not None:
            warnings += [line.removeprefix("note: ").removeprefix("! ") for line in said]
    return dpsgd_from_opacus_history(history).to_dict()  # anything else: its ValueError names history


def _noise(spec: dict, option: str) -> dict:
    """``spec``, checked: a bad noise is refused naming ``option`` (``--gaussian -1: sigma must be
    > 0``; the library's own words named ``sigma``, which the command line does not have)."""
    from fdpkit.mechanisms import mechanism_from_dict  # imported when used: the CLI starts without it

    try:
        mechanism_from_dict(spec)
    except ValueError as exc:
        raise ValueError(f"{option} {next(v for k, v in spec.items() if k != 'kind'):g}: {exc}") from None
    return spec


def release_mechanism(declared: Optional[str], mechanism: Optional[Path], spec: Optional[str],
                      gaussian: Optional[float], laplace: Optional[float], from_opacus: Optional[Path] = None,
                      *, ledger: Any = None, dataset: Optional[str] = None, warnings: Optional[list[str]] = None,
                      **dpsgd: Any) -> dict:
    """The spec of the one mechanism the options give (exit 2 with one line otherwise).

    ``declared`` is the dataset's relation (the default of a DP-SGD run's; None: add-remove);
    ``dpsgd`` holds the :data:`DPSGD_OPTIONS`; ``ledger`` and ``dataset`` let an Opacus file
    leave out the steps already released there (:func:`mechanism_from_opacus_file`, which appends
    what it says on stderr to ``warnings``)."""
    run = any(dpsgd.get(k) is not None for k in ("noise_multiplier", "schedule", "opacus_history"))
    chosen = [x is not None for x in (mechanism, spec, gaussian, laplace, from_opacus)] + [run]
    if sum(chosen) != 1:
        fail("give exactly one of --mechanism FILE, --spec JSON, --gaussian SIGMA, --laplace SCALE, --from-opacus "
             "FILE, or a DP-SGD run (--noise-multiplier with --sample-rate or --batch-size and --dataset-size, "
             "and --steps or --epochs)")
    if mechanism is not None:
        return load_spec(mechanism)
    if spec is not None:
        from fdpkit._inputs import load_json

        return load_json(spec, "--spec", parameter="spec")
    if gaussian is not None:
        return _noise({"kind": "gaussian", "sigma": gaussian}, "--gaussian")
    if laplace is not None:
        return _noise({"kind": "laplace", "scale": laplace}, "--laplace")
    if from_opacus is not None:
        return mechanism_from_opacus_file(from_opacus, ledger, dataset, warnings)
    unknown = set(dpsgd) - set(DPSGD_OPTIONS)
    if unknown:
        raise TypeError(f"unknown DP-SGD options: {sorted(unknown)}")
    opts: dict[str, Any] = {k: dpsgd.get(k) for k in DPSGD_OPTIONS}
    opts["sampling"] = opts["sampling"] or POISSON
    opts["unit"] = opts["unit"] or EXAMPLE
    opts["drop_last"] = bool(opts["drop_last"])
    if opts["relation"] is None:
        opts["relation"] = default_relation(declared or ADD_REMOVE, opts["sampling"])
    mech = _dp.build(opts["noise_multiplier"], opts["sample_rate"], opts["steps"], opts["batch_size"],
                     opts["dataset_size"], opts["epochs"], opts["sampling"], opts["relation"],
                     opts["max_batch_size"], opts["unit"], opts["examples_per_user"], opts["schedule"],
                     opts["opacus_history"], opts["drop_last"])
    return mech.to_dict()
