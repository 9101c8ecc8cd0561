"""The one translator of the library's argument names into the command line's options
(``sample_rate must be ...`` -> ``--sample-rate must be ...``): :func:`in_option_words`, with
the options of a command read by :func:`option_flags`. :func:`fdpkit.cli._common.guarded` runs
every command's errors through it; ``fdpkit ledger propose``/``check`` their DP-SGD run's
(:func:`fdpkit.cli._dpsgd.translated`). No maths here."""

from __future__ import annotations

import inspect
import re
from typing import Callable, Optional

from typer.models import OptionInfo


def option_flags(fn: Callable, names: Optional[dict[str, str]] = None) -> dict[str, str]:
    """The options of the command ``fn`` as ``{parameter: flag}`` (``{"sample_rate":
    "--sample-rate"}``), read from its signature; ``names`` adds the library's names of some of
    them (``{"rho": "zcdp"}``: the library's ``rho`` is the option of the parameter ``zcdp``)."""
    flags = {}
    for name, param in inspect.signature(fn).parameters.items():
        if isinstance(param.default, OptionInfo):
            decls = [d for d in (param.default.param_decls or ()) if d.startswith("--")]
            flags[name] = decls[0] if decls else "--" + name.replace("_", "-")
    for library, own in (names or {}).items():
        if own in flags:
            flags[library] = flags[own]
    return flags


#: What may stand just before an argument's name in a library message where the name means the
#: argument (not the English word): the line's start, "phases[0]:", a list ("of steps or epochs",
#: "(or epochs)", "steps, epochs", "got mu, epsilon"), "needs fpr", "for steps", "above fpr".
_NAME_BEFORE = re.compile(r"(?:^|[:,(]|\b(?:of|or|and|got|needs|with|for|above|below|than))\s*$")


def in_option_words(flags: dict[str, str], exc: BaseException, text: str) -> str:
    """``text`` (the one line for ``exc``) in the command line's words, the one place that
    respells the library's argument names as the options ``flags`` maps them to
    (:func:`option_flags`):

    - a name with an underscore, anywhere (never prose): ``exactly one of noise_multiplier,
      sample_rate`` -> ``exactly one of --noise-multiplier, --sample-rate``;
    - a keyword as the library spells a value to give, ``relation='replace-one'`` or
      ``delta=1e-5``, as the option to type: ``--relation replace-one``, ``--delta 1e-5``; a
      name before a quoted value, ``sampling 'shuffled'``, as ``--sampling 'shuffled'``;
    - a name that ``exc`` concerns (its ``parameter`` and ``parameters``; for a plain ValueError,
      the word the line starts with) where it stands as a name: at the start, after
      ``phases[i]:``, in a list or after ``needs``/``with``/``for``/``above``
      (:data:`_NAME_BEFORE`): ``give exactly one of steps or epochs`` -> ``... of --steps or
      --epochs``, but ``whole optimizer steps`` and ``the attacker's prior belief`` stay prose;
    - a hint that then says its options twice, ``--batch-size 2 with --dataset-size N
      (--batch-size 2 --dataset-size N)``, keeps them once.

    Only ValueErrors are respelled (a file's OSError names a path, not an argument); the result
    read again gives itself.

    >>> from fdpkit.errors import ParameterError
    >>> flags = {"steps": "--steps", "epochs": "--epochs", "relation": "--relation", "sampling": "--sampling"}
    >>> in_option_words(flags, ParameterError("x", "steps", ("steps", "epochs")),
    ...                 "give exactly one of steps or epochs, got both")
    'give exactly one of --steps or --epochs, got both'
    >>> in_option_words(flags, ParameterError("x", "relation", ("relation", "sampling")),
    ...                 "relation 'add-remove' cannot be accounted with sampling 'shuffled'; use relation='zero-out'")
    "--relation 'add-remove' cannot be accounted with --sampling 'shuffled'; use --relation zero-out"
    """
    if not isinstance(exc, ValueError):
        return text
    concerned = {p for p in (getattr(exc, "parameter", None), *getattr(exc, "parameters", ())) if isinstance(p, str)}
    if not concerned:  # a plain ValueError: the line starts with the argument it is about
        lead = re.match(r"(?:(?:phases|history)\[\d+\]: )?([a-z][a-z_]*)\b", text)
        concerned = {lead.group(1)} if lead else set()

    def keyword(m: re.Match) -> str:  # relation='replace-one' -> --relation replace-one
        return f"{flags[m.group(1)]} {m.group(3)}" if m.group(1) in flags else m.group(0)

    text = re.sub(r"(?<![-\w.])([a-z][a-z_]*)=('?)([^\s',;)]+)\2", keyword, text)

    def name(m: re.Match) -> str:
        word = m.group(0)
        if word in flags and ("_" in word or text.startswith(" '", m.end())
                              or (word in concerned and _NAME_BEFORE.search(text[:m.start()]))):
            return flags[word]
        return word

    text = re.sub(r"(?<![\w./\\'-])[a-z][a-z_]*(?![\w'-])", name, text)  # not in a path or a quoted value

    def once(m: re.Match) -> str:  # "(--batch-size 2 --dataset-size N)" after saying just that
        said = text[:m.start()]
        return "" if all(pair in said for pair in re.findall(r"--[a-z][\w-]* [^\s()]+", m.group(1))) else m.group(0)

    return re.sub(r" \(((?:--[a-z][\w-]* [^\s()]+ ?)+)\)", once, text)


__all__ = ["in_option_words", "option_flags"]
