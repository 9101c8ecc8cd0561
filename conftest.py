"""Doctest collection: fdpkit.opacus needs the optional extra ``fdpkit[opacus]`` (torch,
Opacus); without it its modules are not collected (their tests skip via importorskip)."""

import importlib.util

collect_ignore_glob = []
if importlib.util.find_spec("torch") is None or importlib.util.find_spec("opacus") is None:
    collect_ignore_glob.append("src/fdpkit/opacus/*")
