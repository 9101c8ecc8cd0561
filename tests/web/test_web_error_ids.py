"""Every error a form page shows beside a field has an id, and the field's control names it in
``aria-describedby`` (with ``aria-invalid``), so that a screen reader reads the error with the
field: the calculator's mode and releases, the report's mechanism and points, the risk page's
guarantee had errors without an id; the macros' selects, the compare page's fields and the
audit's text areas and files did not point to theirs."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

FORM = {"content-type": "application/x-www-form-urlencoded", "accept": "text/html"}

# (page, a form refused with errors beside these fields)
CASES = [
    ("/calculator", "mode=bogus&sensitivity=1", {"mode"}),
    ("/calculator", "mode=composition&releases=garbage", {"releases"}),
    ("/report", "kind=mechanism&mechanism=%7B", {"mechanism"}),
    ("/report", "kind=points&points=garbage", {"points"}),
    ("/report", "kind=bogus", {"kind"}),  # was read as a spec: "mechanism is required"
    ("/report", "kind=dpsgd&noise_multiplier=x&sample_rate=0.01&steps=100&sampling=bogus&relation=bogus&unit=bogus",
     {"noise_multiplier", "sampling", "relation", "unit"}),
    ("/risk", "guarantee=bogus", {"guarantee"}),
    ("/compare", "kind_1=bogus&mechanism=%7B&discretization=abc", {"kind_1", "mechanism", "discretization"}),
    ("/compare", "kind_1=mu&value_1=x&kind_2=mu&value_2=-1", {"value_1", "value_2"}),
    ("/audit", "mode=simulate&ran=%7B", {"ran"}),
    ("/audit", "mode=counts&true_positives=1&false_positives=1&n_members=10&n_nonmembers=10&mechanism=%7B",
     {"mechanism"}),
    ("/audit", "mode=scores", {"members", "nonmembers"}),
    ("/audit", "mode=bogus", {"mode"}),
    ("/calibrate", "target=epsilon&target_value=x&delta=2&sample_rate=0.01&steps=100&sampling=bogus",
     {"target_value", "delta", "sampling"}),
    ("/convert", "mu=x&delta=2", {"mu", "delta"}),
    ("/sweep", "task=map&noise_multiplier=x&sample_rate=0.01&steps=100&delta=1e-5", {"noise_multiplier"}),
]


class _Errors(HTMLParser):
    """The page's field errors (``div.error`` but the form's own, ``#form-error``) with their
    ids, and each control's ``aria-describedby`` ids and ``aria-invalid``."""

    def __init__(self) -> None:
        super().__init__()
        self.errors: list[str | None] = []
        self.controls: list[tuple[str, set[str], bool]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "div" and "error" in (a.get("class") or "").split() and a.get("id") != "form-error":
            self.errors.append(a.get("id"))
        if tag in ("input", "select", "textarea") and a.get("type") != "hidden":
            self.controls.append((a.get("name") or "", set((a.get("aria-describedby") or "").split()),
                                  a.get("aria-invalid") == "true"))


@pytest.mark.parametrize("path, body, fields", CASES, ids=[f"{c[0]}-{'-'.join(sorted(c[2]))}" for c in CASES])
def test_each_field_error_has_an_id_its_control_points_to(client, path, body, fields):
    r = client.post(path, content=body, headers=FORM)
    assert r.status_code == 422, (path, r.status_code)
    page = _Errors()
    page.feed(r.text)
    assert None not in page.errors, page.errors  # an error without an id
    assert set(page.errors) == {f"{f}-error" for f in fields}, page.errors
    for error in page.errors:
        pointing = [(name, invalid) for name, ids, invalid in page.controls if error in ids]
        assert pointing and all(invalid for _, invalid in pointing), (error, page.controls)
        assert {name for name, _ in pointing} == {error.removesuffix("-error")}, (error, pointing)
    # no control points to an error that is not there
    shown = set(page.errors)
    assert all(ids <= shown | {"held-scores"} for _, ids, _ in page.controls), page.controls
