"""Doctest collection: fdpkit.opacus needs the optional extra ``fdpkit[opacus]`` (torch,
Opacus); without it its modules and the training helper of tests/opacus are not collected
(the tests themselves skip via importorskip)."""

import importlib.util

collect_ignore_glob = []
if importlib.util.find_spec("torch") is None or importlib.util.find_spec("opacus") is None:
    collect_ignore_glob += ["src/fdpkit/opacus/*", "tests/opacus/_training.py"]
