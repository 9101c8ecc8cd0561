"""What the browser tests of the web and ledger pages share: one page per viewport, its screenshots and
the check that nothing overflows the viewport sideways."""

from __future__ import annotations

import os
from pathlib import Path

#: Where screenshots go (``FDPKIT_SCREENSHOTS``), one folder per test file.
SCREENSHOTS = Path(os.environ.get("FDPKIT_SCREENSHOTS", "/tmp/fdpkit-screenshots"))


def open_page(browser, size: str, width: int, *, height: int = 900, track_missing: bool = False):
    """(context, page) at ``width`` px; ``page.size`` names the viewport in screenshots, and with
    ``track_missing`` ``page.missing`` lists the URLs answered 404."""
    ctx = browser.new_context(viewport={"width": width, "height": height})
    page = ctx.new_page()
    page.size = size
    if track_missing:
        missing: list[str] = []
        page.on("response", lambda r: missing.append(r.url) if r.status == 404 else None)
        page.missing = missing
    return ctx, page


def shot(pg, folder: Path, name: str) -> None:
    """A full-page screenshot ``folder/name-size.png``."""
    folder.mkdir(parents=True, exist_ok=True)
    pg.screenshot(path=str(folder / f"{name}-{pg.size}.png"), full_page=True)


def no_overflow(pg, what: str = "") -> None:
    """Nothing on the page is wider than the viewport (``what`` names the page in the failure)."""
    sw, vw = pg.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert sw <= vw, f"{what + ': ' if what else ''}horizontal overflow: scrollWidth {sw} > viewport {vw}"


def full_shot(pg, folder: Path, name: str) -> None:
    """A full-page screenshot ``folder/name.png`` (the name says the viewport)."""
    folder.mkdir(parents=True, exist_ok=True)
    pg.screenshot(path=str(folder / f"{name}.png"), full_page=True)
