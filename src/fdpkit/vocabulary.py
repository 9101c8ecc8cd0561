"""The vocabulary strings of fdpkit, in one place (issue 23: one naming grammar).

Neighbouring relations, sampling schemes and privacy units are plain strings in the public
API (``fp.dpsgd(..., sampling="poisson", relation="add-remove", unit="example")``), in the web
forms, the CLI options and the ledger. They are defined here once, and mechanisms, ledger,
web and CLI import them, so that "add-remove" means one thing everywhere; so are the few
settings that a front end states in its help (:data:`DASK_CONNECT_TIMEOUT`). This module is
the bottom layer: it imports nothing from fdpkit.

Examples
--------
>>> RELATIONS
('add-remove', 'replace-one', 'zero-out')
>>> canonical_relation("add-or-remove")  # the ledger's old spelling
'add-remove'
"""

from __future__ import annotations

from typing import Any, Literal, get_args

#: Neighbouring datasets differ by adding or removing one privacy unit.
ADD_REMOVE = "add-remove"
#: Neighbouring datasets differ by replacing one privacy unit with any other.
REPLACE_ONE = "replace-one"
#: Neighbouring datasets differ by replacing one privacy unit with one whose gradient is zero.
ZERO_OUT = "zero-out"
#: Every neighbouring relation fdpkit accounts.
RELATIONS = (ADD_REMOVE, REPLACE_ONE, ZERO_OUT)
#: The relations a ledger dataset may declare.
LEDGER_RELATIONS = (ADD_REMOVE, REPLACE_ONE)
#: Old spellings still read (inputs, stored ledger rows) and mapped to the canonical one.
RELATION_ALIASES = {"add-or-remove": ADD_REMOVE}

#: Each step's batch has every unit independently with probability ``sample_rate``.
POISSON = "poisson"
#: Poisson sampling, batches larger than ``max_batch_size`` cut down.
TRUNCATED_POISSON = "truncated-poisson"
#: A fixed-size batch drawn uniformly without replacement at every step.
FIXED_SIZE = "fixed-size"
#: The data shuffled and cut into fixed-size batches, each unit used once per epoch.
SHUFFLED = "shuffled"
#: Every sampling scheme of :func:`fdpkit.dpsgd`.
SAMPLINGS = (POISSON, TRUNCATED_POISSON, FIXED_SIZE, SHUFFLED)
#: The sampling schemes with batches of a fixed size (counted in whole batches per epoch).
FIXED_BATCH_SAMPLINGS = (FIXED_SIZE, SHUFFLED)
#: Key of an Opacus accountant state dict (fdpkit's accountant writes it) naming the scheme of
#: the loader the run used where it was not Poisson: such a history is not a Poisson run.
OPACUS_SAMPLING_KEY = "fdpkit_sampling"
#: Key of an Opacus accountant state dict (fdpkit's accountant writes it, a BudgetGuard fills it)
#: naming the ledger releases that already hold the history's first steps (a resumed run).
OPACUS_RECORDED_KEY = "fdpkit_recorded"

#: The privacy unit is one example (record).
EXAMPLE = "example"
#: The privacy unit is one user (all of a user's examples).
USER = "user"
#: Every privacy unit of :func:`fdpkit.dpsgd`.
UNITS = (EXAMPLE, USER)

#: Seconds a sweep waits for a Dask scheduler before giving up (:func:`fdpkit.sweep.executors.dask_client`
#: says so in its error, ``fdpkit sweep --scheduler`` in its help: here, where ``--help`` reads it
#: without importing the sweep's maths).
DASK_CONNECT_TIMEOUT = 10.0

# The same vocabularies as types, for static checkers and pydantic models (mypy cannot read a
# Literal built from the tuples above); checked equal to the tuples below at import.
#: A neighbouring relation, as a type.
Relation = Literal["add-remove", "replace-one", "zero-out"]
#: A relation the ledger records, old spelling accepted on input, as a type.
LedgerRelationInput = Literal["add-remove", "replace-one", "add-or-remove"]
#: A sampling scheme, as a type.
Sampling = Literal["poisson", "truncated-poisson", "fixed-size", "shuffled"]
#: A privacy unit, as a type.
Unit = Literal["example", "user"]
if (get_args(Relation) != RELATIONS or get_args(Sampling) != SAMPLINGS or get_args(Unit) != UNITS
        or get_args(LedgerRelationInput) != LEDGER_RELATIONS + tuple(RELATION_ALIASES)):
    raise ImportError("fdpkit.vocabulary: the Literal types disagree with the vocabulary tuples")


def spelling(value: Any) -> Any:
    """The spelling fdpkit reads a choice in (a sampling scheme, relation or unit): stripped,
    lower case, ``-`` for ``_`` (``"Fixed_Size"`` -> ``"fixed-size"``); not a string: as it is.

    Examples
    --------
    >>> spelling(" Truncated_Poisson "), spelling(3)
    ('truncated-poisson', 3)
    """
    return value.strip().lower().replace("_", "-") if isinstance(value, str) else value


def canonical_relation(value: Any, *, name: str = "relation", allowed: tuple[str, ...] = RELATIONS) -> str:
    """The canonical spelling of a neighbouring relation, old spellings accepted.

    Parameters
    ----------
    value : str
        A relation (``"add-remove"``, ``"replace-one"``, ``"zero-out"``) or an old spelling
        (``"add-or-remove"``).
    name : str, default "relation"
        The public argument named in the error.
    allowed : tuple of str, default RELATIONS
        The relations accepted here (the ledger accepts :data:`LEDGER_RELATIONS`).

    Returns
    -------
    str
        One of ``allowed``.

    Raises
    ------
    ValueError
        If ``value`` is not a relation in ``allowed`` (nor an old spelling of one).

    Examples
    --------
    >>> canonical_relation("replace-one")
    'replace-one'
    >>> canonical_relation("swap")
    Traceback (most recent call last):
    ...
    ValueError: relation must be one of add-remove, replace-one, zero-out, got 'swap'
    """
    out = RELATION_ALIASES.get(value, value) if isinstance(value, str) else value
    if not isinstance(out, str) or out not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    return out
