"""Walking mechanism trees: the one traversal every reader of ``Composed``/``Repeated``/
``Subsampled`` nesting uses, and DP-SGD runs normalised to elementary mechanisms.

A mechanism is a tree: :class:`~fdpkit.mechanisms.Composed` has ``parts``,
:class:`~fdpkit.mechanisms.Repeated` and :class:`~fdpkit.mechanisms.Subsampled` an
``inner`` mechanism (:meth:`Mechanism.children`); every other mechanism is a leaf.
:func:`walk` visits it in pre-order with each node's multiplicity (the product of the
``times`` of the enclosing ``Repeated``); :func:`elementary_tree` rebuilds it with every DP-SGD
run replaced by its elementary form (:meth:`DPSGD.elementary`) where one exists.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

from fdpkit.mechanisms.base import Mechanism
from fdpkit.mechanisms.combinators import Composed, Repeated, Subsampled


def walk(mechanism: Mechanism, *, into: Callable[[Mechanism], bool] | None = None,
         times: int = 1) -> Iterator[tuple[Mechanism, int]]:
    """Every node of ``mechanism``'s tree in pre-order, with its multiplicity.

    Parameters
    ----------
    mechanism : Mechanism
    into : callable, optional
        ``into(node)`` False: the walk does not descend below ``node`` (it is still yielded).
    times : int
        Multiplicity of ``mechanism`` itself.

    Yields
    ------
    (Mechanism, int)
        A node and how many times it runs: ``Repeated(M, n)`` yields ``M`` with ``n`` times
        its own multiplicity; ``Composed`` and ``Subsampled`` pass theirs on.

    Examples
    --------
    >>> from fdpkit.mechanisms import Composed, Gaussian, Laplace, Repeated
    >>> [(type(m).__name__, t) for m, t in walk(Composed((Repeated(Gaussian(1.0), 3), Laplace(1.0))))]
    [('Composed', 1), ('Repeated', 1), ('Gaussian', 3), ('Laplace', 1)]
    """
    stack = [(mechanism, times)]
    while stack:
        node, t = stack.pop()
        yield node, t
        if into is not None and not into(node):
            continue
        if not isinstance(node, Mechanism):  # not a mechanism: nothing to descend into
            continue
        inner_times = t * node.times if isinstance(node, Repeated) else t
        stack.extend((child, inner_times) for child in reversed(node.children()))


def leaves(mechanism: Mechanism) -> Iterator[tuple[Mechanism, int]]:
    """The leaves of ``mechanism``'s tree (nodes without children), with their multiplicity.

    Examples
    --------
    >>> from fdpkit.mechanisms import Gaussian, Repeated, Subsampled
    >>> list(leaves(Repeated(Subsampled(Gaussian(1.0), 0.5), 4)))
    [(Gaussian(sigma=1.0, sensitivity=1.0), 4)]
    """
    return ((m, t) for m, t in walk(mechanism) if not (isinstance(m, Mechanism) and m.children()))


def _at_rate_one(node: Subsampled) -> bool:
    return node.sample_rate == 1.0


def fold(mechanism: Mechanism, leaf: Callable[[Mechanism], Any], *,
         repeat: Callable[[Any, int], Any], compose: Callable[[list], Any],
         through: Callable[[Subsampled], bool] = _at_rate_one) -> Any:
    """A bottom-up fold over ``mechanism``'s tree: the one recursion that closed forms and
    Rényi bounds (zCDP ρ, RDP epsilons, their tails) are written with.

    ``Repeated(M, n)`` gives ``repeat(fold(M), n)``; ``Composed(parts)`` gives
    ``compose([fold(p) for p in parts])`` (parts folded left to right, the list handed over
    whole, so a sum adds in the parts' order); ``Subsampled`` nodes for which
    ``through(node)`` holds give their inner mechanism's value unchanged; every other node
    (including ``Subsampled`` nodes not passed through, and DP-SGD runs) gives
    ``leaf(node)``. The evaluation order is that of the recursive functions it replaced,
    so their floats are bit-identical.

    Parameters
    ----------
    mechanism : Mechanism
    leaf : callable
        ``leaf(node)``: the value of a node that is not folded through.
    repeat : callable
        ``repeat(inner_value, times)``.
    compose : callable
        ``compose(list_of_part_values)``.
    through : callable, optional
        ``through(subsampled_node)``: whether the subsampling is transparent (default: at
        sample rate 1).

    Returns
    -------
    object
        Whatever ``leaf``, ``repeat`` and ``compose`` build.

    Examples
    --------
    >>> from fdpkit.mechanisms import Composed, Gaussian, Laplace, Repeated
    >>> m = Composed((Repeated(Gaussian(2.0), 4), Laplace(1.0)))
    >>> fold(m, lambda n: n.kind, repeat=lambda v, t: f"{v}x{t}", compose=" + ".join)
    'gaussianx4 + laplace'
    """
    def go(node: Mechanism) -> Any:
        if isinstance(node, Repeated):
            return repeat(go(node.inner), node.times)
        if isinstance(node, Composed):
            return compose([go(p) for p in node.parts])
        if isinstance(node, Subsampled) and through(node):
            return go(node.inner)
        return leaf(node)

    return go(mechanism)


def training_run(node: object) -> Mechanism | None:
    """``node`` as a training run (:meth:`Mechanism.training_run`: a DP-SGD run, or any
    mechanism kind that overrides it), or None (other mechanisms, and anything that is no
    mechanism at all).

    Parameters
    ----------
    node : object
        A node of a mechanism tree (anything: validation happens elsewhere).

    Returns
    -------
    Mechanism or None

    Examples
    --------
    >>> from fdpkit.mechanisms import Gaussian, dpsgd
    >>> training_run(Gaussian(1.0)) is None, training_run(dpsgd(1.0, 0.01, 10)).steps
    (True, 10)
    """
    return node.training_run() if isinstance(node, Mechanism) else None


def elementary_tree(mechanism: Mechanism) -> Mechanism:
    """``mechanism`` with every DP-SGD run replaced by its elementary form
    (:meth:`fdpkit.mechanisms.DPSGD.elementary`: Poisson add-remove/zero-out and shuffled
    batches) where one exists; everything else unchanged (the same object when nothing
    changes).

    Examples
    --------
    >>> from fdpkit.mechanisms import dpsgd
    >>> elementary_tree(dpsgd(1.0, 0.01, 10)).describe()
    'Repeated(inner=Subsampled(inner=Gaussian(sigma=1.0, sensitivity=1.0), sample_rate=0.01), times=10)'
    """
    if isinstance(mechanism, Composed):
        parts = tuple(elementary_tree(p) for p in mechanism.parts)
        same = all(a is b for a, b in zip(parts, mechanism.parts))
        return mechanism if same else Composed(parts)
    if isinstance(mechanism, (Repeated, Subsampled)):
        inner = elementary_tree(mechanism.inner)
        if inner is mechanism.inner:
            return mechanism
        if isinstance(mechanism, Repeated):
            return Repeated(inner, mechanism.times)
        return Subsampled(inner, mechanism.sample_rate)
    plain = mechanism.elementary() if isinstance(mechanism, Mechanism) else None
    return mechanism if plain is None else plain


__all__ = ["elementary_tree", "fold", "leaves", "training_run", "walk"]
