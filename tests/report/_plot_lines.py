"""Reading plotted series back by their legend label (shared by the plot tests)."""

import numpy as np
from matplotlib.figure import Figure


def new_ax():
    """A fresh matplotlib axes, no pyplot state."""
    return Figure().add_subplot()


def line_data(ax, label):
    """(x, y) of the line labelled ``label``; AssertionError naming the labels otherwise."""
    for ln in ax.get_lines():
        if ln.get_label() == label:
            return np.asarray(ln.get_xdata(), float), np.asarray(ln.get_ydata(), float)
    raise AssertionError(f"no line {label!r} in {[ln.get_label() for ln in ax.get_lines()]}")
