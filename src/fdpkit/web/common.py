"""Shared web plumbing: templates, form parsing, bounded execution, responses.
No maths here: every number comes from the fdpkit library."""

from __future__ import annotations

import asyncio
import secrets
import string
import math
import re
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from fastapi import Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.templating import Jinja2Templates
from markupsafe import Markup, escape

from fdpkit._numerics import json_safe, safe_text
from fdpkit.errors import parameter_of
from fdpkit._inputs import FRACTION_FIELDS, load_json, parse_decimal, parse_fraction
from fdpkit.accounting import CostBudget
from fdpkit.accounting._resolution import choose_discretization, search_work
from fdpkit.accounting.work_limits import check_bounds
from fdpkit.mechanisms import Mechanism, mechanism_from_dict
from fdpkit.vocabulary import RELATIONS, SAMPLINGS, UNITS
from fdpkit.report.model import fmt
from fdpkit.web.jobs import prepare
from fdpkit.web.pool import JobFailed, ServerBusy, WorkerPool  # noqa: F401  (ServerBusy: re-exported)
from fdpkit.web.repeated_fields import refused, shown_values

HERE = Path(__file__).resolve().parent
templates = Jinja2Templates(directory=str(HERE / "templates"))
#: Numbers that a browser may break across lines (at the minus sign of 4e-05 or −3): in
#: sentences they are kept whole by markup (a ``span.num``, ``white-space: nowrap`` in the
#: stylesheet), server-side, so it holds without JavaScript.
_BREAKABLE = re.compile(r"(?<![\w.])[-−]?\d+(?:[.,]\d+)*(?:e[-+]\d+)(?![\w])|(?<![\w.-])[-−]\d+(?:[.,]\d+)*(?![\w])")


def nums(text: Any) -> Markup:
    """``text`` escaped, with every number that could break across lines in a ``span.num``.

    >>> str(nums("δ = 4e-05 < 1"))
    'δ = <span class="num">4e-05</span> &lt; 1'
    """
    if isinstance(text, Markup):
        return text
    return Markup(_BREAKABLE.sub(lambda m: f'<span class="num">{m.group(0)}</span>', str(escape(text))))


def num(x: Any, digits: int = 4, up: bool | None = None) -> Markup:
    """A number for people (:func:`fdpkit.report.model.fmt`), kept whole on one line (:func:`nums`).
    In templates ``x|num(up=true)`` prints an upper bound (μ, ε, δ, a TPR, risk, posterior) with
    its last digit rounded up, ``x|num(up=false)`` a lower bound rounded down."""
    return nums(fmt(x, digits, up=up))


templates.env.filters["num"] = num


def safe_num(x: Any, up: bool) -> Markup:
    """A noise scale or rate as a user copies it: :func:`fdpkit._numerics.safe_text`, rounded
    towards the side that keeps the plan's promise (``up``: more noise), kept whole (:func:`nums`)."""
    return nums(safe_text(x, up=up))


templates.env.filters["safe_num"] = safe_num


def first_sent(value: Any) -> Any:
    """A select's or a radio's value as it is compared with its options: a field refused for
    being given twice shows every value sent, "laplace, composition"
    (:func:`fdpkit.web.repeated_fields.shown_values`), which no option is; the first one is
    selected then (no option's value holds ", ").

    >>> first_sent("laplace, composition"), first_sent("gaussian"), first_sent(None)
    ('laplace', 'gaussian', None)
    """
    return value.split(", ", 1)[0] if isinstance(value, str) else value


templates.env.filters["first_sent"] = first_sent
templates.env.filters["nums"] = nums
#: G_μ with a real subscript (report sentences), escaped first; numbers kept whole.
templates.env.filters["sub"] = lambda text: Markup(str(nums(text)).replace("G_μ", "G<sub>μ</sub>"))
#: Plain-text targets from the library ("epsilon <= 3 at delta=1e-05") in the symbols the
#: pages use ("ε ≤ 3 at δ = 1e-05"); display only, the JSON keeps the library's text.
_SYMBOLS = [(re.compile(r"\bepsilon\b"), "ε"), (re.compile(r"\bdelta\b"), "δ"), (re.compile(r"\bmu\b"), "μ"),
            (re.compile(r"\btpr\b"), "TPR"), (re.compile(r"\bfpr\b"), "FPR"), (re.compile(r"\s*<=\s*"), " ≤ "),
            (re.compile(r"\s*=\s*"), " = ")]


def symbols(text: str) -> str:
    """``text`` with the Greek letters and relations of the pages (see _SYMBOLS)."""
    out = str(text)
    for pattern, repl in _SYMBOLS:
        out = pattern.sub(repl, out)
    return out


templates.env.filters["symbols"] = symbols
#: inputs that exclude each other: {field: the fields typing it clears} (see fdpkit.web.forms)
templates.env.globals["exclusive"] = __import__("fdpkit.web.forms", fromlist=["EXCLUDES"]).EXCLUDES
#: the "Which scheme was my run?" guide (text only), shown on the DP-SGD pages
templates.env.globals["scheme_text"] = __import__("fdpkit.mechanisms.scheme_guide", fromlist=["SETTINGS"])


@dataclass(frozen=True)
class Limits:
    """Bounds on the work one request may ask for, and on the server as a whole.

    The production values are the defaults; tests run with them too."""

    max_steps: int = 1_000_000
    min_discretization: float = 1e-5
    max_parts: int = 50
    #: seconds of computing (CPU time) one job may use before its worker is ended: 422, the
    #: request too large. Twice what the budget's work (``budget.max_work``, 3e8) costs by the
    #: cost model, which errs high (``WORK_PER_SECOND`` a CPU-second: 30 s; 10 s measured for
    #: reports of 2.6e8-2.9e8), for the rest of a report (figures, documents).
    timeout_s: float = 60.0
    #: wall-clock seconds a started job is given before its worker is killed: 503 + Retry-After,
    #: the server too busy to run it (None: :func:`fdpkit.web.pool.wall_limit`, 180 s for 60 s
    #: of computing; a heavy job yields the CPU to light ones)
    wall_timeout_s: float | None = None
    #: smallest noise (sd or scale relative to sensitivity): below it a PLD grid explodes
    min_noise: float = 0.1
    #: cost model budget checked before any accounting (fdpkit.accounting.estimate_cost):
    #: about 30 s of work and 1 GiB of grids at most
    budget: CostBudget = field(default_factory=lambda: CostBudget(
        max_grid_points=8_000_000, max_work=3e8, max_memory_bytes=1024**3))
    #: two lanes of worker processes: jobs whose estimated work is at most ``light_work``
    #: (1e7 = about a second of CPU, e.g. the README's DP-SGD report, 6e5) go to the light lane; the rest to
    #: the heavy lane, whose workers run at a lower CPU priority so light answers stay fast.
    #: Per lane: workers, jobs allowed to wait; address space per worker.
    light_work: float = 1e7
    workers: int = 2
    queue: int = 64
    heavy_workers: int = 2
    heavy_queue: int = 4
    worker_memory_bytes: int = 3 * 1024**3
    #: seconds a client is told to wait (Retry-After) when the queue is full
    retry_after_s: int = 5
    #: largest request body (bytes), enforced before parsing
    max_body_bytes: int = 1_000_000
    #: seconds within which a whole request (headers and body) must arrive; keep-alive idle
    request_timeout_s: float = 10.0
    keep_alive_s: float = 5.0
    #: most simultaneous connections (beyond it: 503)
    max_connections: int = 500
    #: seconds light (closed-form) work may take in a thread
    light_timeout_s: float = 20.0
    #: workers started with the server import fdpkit and warm their caches at once, so the
    #: first requests do not wait for a cold worker (``fdpkit serve`` turns it on; off, a
    #: worker costs no CPU until its first job, which the pool tests watch)
    warm_workers: bool = False


class FormErrors(dict):
    """field -> message; it starts with the form's fields given more than once (each refused
    beside its field: :func:`fdpkit.web.repeated_fields.refused`), so that a page computes nothing for them."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.update(refused())


def parse_float(form: Any, name: str, errors: FormErrors, *, required: bool = True,
                default: float | None = None, percent: bool | None = None) -> float | None:
    """A number from a form field; probability fields (``percent``, by default the library's
    FRACTION_FIELDS) also accept "5%" as 0.05."""
    if name in refused():  # given twice: said beside the field (FormErrors), not read
        errors.setdefault(name, refused()[name])
        return None
    raw = form.get(name)
    if raw is None or str(raw).strip() == "":
        if required and default is None:
            errors[name] = f"{name.replace('_', ' ')} is required"
        return default
    if percent or (percent is None and name in FRACTION_FIELDS):
        try:
            return parse_fraction(raw, name.replace("_", " "))
        except ValueError as exc:
            errors[name] = str(exc)
            return None
    try:
        v = parse_decimal(raw, name.replace("_", " "))  # not "1_000" or other scripts' digits
    except ValueError as exc:
        errors[name] = str(exc)
        return None
    if math.isnan(v):
        errors[name] = f"{name.replace('_', ' ')} must be a number, got {raw!r}"
        return None
    return v


#: Most levels one list field takes (one plotted series each).
MAX_LEVELS = 8


def parse_levels(form: Any, name: str, errors: FormErrors) -> tuple[float, ...]:
    """A list of probabilities from one text field, "0.05, 1e-3" or "5%; 0.1%" (empty: none)."""
    if name in refused():
        errors.setdefault(name, refused()[name])
        return ()
    raw = str(form.get(name) or "").replace(";", ",")
    parts = [p.strip() for p in raw.split(",") if p.strip()]
    if len(parts) > MAX_LEVELS:
        errors[name] = f"{name.replace('_', ' ')} takes at most {MAX_LEVELS} values, got {len(parts)}"
        return ()
    out = []
    for p in parts:
        try:
            v = parse_fraction(p, name.replace("_", " "))
        except ValueError as exc:
            errors[name] = str(exc)
            return ()
        if not 0.0 < v < 1.0:
            errors[name] = f"{name.replace('_', ' ')} must be between 0 and 1 (exclusive), got {p!r}"
            return ()
        out.append(v)
    return tuple(out)


def parse_int(form: Any, name: str, errors: FormErrors, *, required: bool = True,
              default: int | None = None) -> int | None:
    v = parse_float(form, name, errors, required=required, default=default)
    if v is None:
        return None
    if not math.isfinite(v):
        errors[name] = f"{name.replace('_', ' ')} must be a finite whole number, got {form.get(name)!r}"
        return None
    if v != int(v):
        errors[name] = f"{name.replace('_', ' ')} must be a whole number, got {form.get(name)!r}"
        return None
    return int(v)


def spec_from_text(text: str | bytes, name: str = "mechanism") -> Any:
    """The data of a JSON spec typed into a form; ValueError naming ``name`` when it is not
    JSON or is nested beyond what the parser can hold (``[[[[...``)."""
    return load_json(text, name)


from fdpkit.web.forms import field_of  # noqa: E402,F401  (re-exported: the routers' one error mapper)

#: The DP-SGD setting's choices (fdpkit.vocabulary), as the report, calibrate and sweep forms offer them (first: default).
CHOICES = {"sampling": SAMPLINGS, "relation": RELATIONS, "unit": UNITS}


def check_limits(m: Mechanism, discretization: float, limits: Limits) -> None:
    """Refuse a mechanism beyond this server's limits (the library's
    :func:`fdpkit.accounting.work_limits.check_bounds`), naming the parameter to change."""
    check_bounds(m, discretization, max_steps=limits.max_steps, max_parts=limits.max_parts,
                 min_relative_noise=limits.min_noise, min_discretization=limits.min_discretization)


def checked(spec: Any, discretization: float | None, limits: Limits) -> tuple[Mechanism, float]:
    """Parse a mechanism spec (or take a mechanism), apply the server's limits and the cost
    budget; the mechanism and its estimated work. Cheap: run in a thread before queueing.

    ``discretization`` None: the library's rule (:func:`fdpkit.privacy_report`'s default,
    coarsened to fit the server's budget) is what the job will use, so the limits and the
    cost are checked at the discretization it chooses; the server's finest discretization
    bounds only what a user types (the budget bounds the rule's choice)."""
    mech = mechanism_from_dict(spec)
    if discretization is None:
        # the a-priori grid (no accounting here; the job's search of Eq. 5 tries none costlier)
        chosen, _ = choose_discretization(mech, budget=limits.budget, search=False)
        check_limits(mech, chosen, dataclasses.replace(limits, min_discretization=min(chosen, limits.min_discretization)))
        mech, work = prepare(mech, chosen, limits.budget)
        return mech, work + search_work(mech, budget=limits.budget)
    check_limits(mech, discretization, limits)
    return prepare(mech, discretization, limits.budget)


def pool_of(app: Any, lane: str = "light") -> WorkerPool:
    """The app's worker pool for ``lane`` ("light" or "heavy"), created on first use."""
    pools = getattr(app.state, "pools", None)
    if pools is None:
        lim: Limits = app.state.limits
        pools = {"light": WorkerPool(lim.workers, lim.queue, lim.worker_memory_bytes, lim.retry_after_s,
                                     warm=lim.warm_workers),
                 "heavy": WorkerPool(lim.heavy_workers, lim.heavy_queue, lim.worker_memory_bytes,
                                     lim.retry_after_s, nice=10, warm="basic" if lim.warm_workers else False)}
        app.state.pools = pools
    return pools[lane]


async def run_heavy(request: Request, fn: Callable, *args: Any, work: float = math.inf, **kwargs: Any) -> Any:
    """Run ``fn(*args, **kwargs)`` in a worker PROCESS, within the app's time limits (its
    computing: ``Limits.timeout_s``; the wall clock: ``Limits.wall_timeout_s``); the worker
    is killed and replaced on either, or when the client leaves.

    ``work`` is the job's estimated cost (``fdpkit.accounting.estimate_cost(...).work``;
    unknown: heavy); jobs up to ``Limits.light_work`` take the light lane. ``fn`` must be a
    module-level function and its arguments and result picklable (plain data, mechanisms,
    bytes). Raises the job's ValueError (HTTP 422), JobFailed (422) or ServerBusy (503 +
    Retry-After, answered by the app's handler)."""
    limits: Limits = request.app.state.limits
    lane = "light" if work <= limits.light_work else "heavy"
    return await pool_of(request.app, lane).run(fn, *args, timeout=limits.timeout_s,
                                                wall_timeout=limits.wall_timeout_s, **kwargs)


async def run_light(fn: Callable, *args: Any, timeout: float | None = None, **kwargs: Any) -> Any:
    """Run bounded synchronous work (closed forms, spec parsing, cost estimates, page
    rendering) off the event loop in a thread. Only for work whose cost the library
    bounds; anything that accounts a PLD goes through :func:`run_heavy`."""
    try:
        return await asyncio.wait_for(asyncio.to_thread(fn, *args, **kwargs),
                                      timeout=timeout or Limits.light_timeout_s)
    except asyncio.TimeoutError:
        raise JobFailed("the computation took too long; use smaller inputs") from None


#: What a form page's error slot atop the form (``form_errors`` in _macros.html) holds while the
#: page is rendered with refused repeated fields: :func:`page` fills it in once the page's text
#: shows which of them have no place beside their field. (No digits: ``nums`` leaves it alone.
#: Random per process: a value a user typed, echoed in the page, can never be taken for it.)
_FORM_SLOT = "fdpkit-form-error-slot-" + "".join(secrets.choice(string.ascii_lowercase) for _ in range(16))


def form_error(message: Any) -> Markup:
    """The error said atop a form (``errors["form"]``), as the ``form_errors`` macro shows it;
    nothing for none. The slot :func:`page` fills in renders as itself."""
    if not message:
        return Markup("")
    if message == _FORM_SLOT:
        return Markup(_FORM_SLOT)
    return Markup('<div class="error" id="form-error" role="alert">{}</div>').format(message)


templates.env.globals["form_error"] = form_error


def page(request: Request, name: str, context: dict, status: int = 200) -> HTMLResponse:
    """The template ``name`` rendered; a form page's refused repeated fields show every value
    sent (:func:`fdpkit.web.repeated_fields.shown_values`), not the last one, and a refusal
    the page has no place for beside its field (the plan's guide, a tick box) is said atop
    the form (``errors["form"]``) rather than answered 422 without a word.

    Rendered once: with refused fields, the slot atop the form is left open (:data:`_FORM_SLOT`)
    and filled in from the page's text (it was rendered a second time to say them)."""
    if isinstance(context.get("values"), dict):
        context = {**context, "values": shown_values(context["values"])}
    errors = context.get("errors")
    twice = {f: m for f, m in refused().items() if isinstance(errors, dict) and errors.get(f) == m}
    if not twice or not isinstance(errors, dict):
        return templates.TemplateResponse(request, name, context, status_code=status)
    html = bytes(templates.TemplateResponse(request, name, {**context, "errors": {**errors, "form": _FORM_SLOT}},
                                            status_code=status).body).decode("utf-8")
    text = _plain(html.replace(_FORM_SLOT, str(form_error(errors.get("form")))))
    unseen = [m for m in twice.values() if m not in text]
    top = "; ".join(filter(None, [errors.get("form"), *unseen])) if unseen else errors.get("form")
    return HTMLResponse(html.replace(_FORM_SLOT, str(form_error(top))), status_code=status)


def _plain(html: str) -> str:
    """A page's text: its tags dropped, its entities read (a message as the page shows it)."""
    from html import unescape

    return unescape(re.sub(r"<[^>]+>", "", html))


def form_status(errors: dict) -> int:
    """The status of a form page: 422 when it shows errors (the input was refused), else 200.
    htmx swaps a 422 in as it does a 200 (``responseHandling`` in base.html's htmx-config)."""
    return 422 if errors else 200


async def render_page(request: Request, name: str, context: dict, status: int = 200) -> HTMLResponse:
    """:func:`page` rendered off the event loop."""
    return await run_light(page, request, name, context, status)


def api_error(error: str | BaseException) -> JSONResponse:
    """HTTP 422 with ``detail`` (the message) and, for a library error that names its
    argument (:class:`fdpkit.ParameterError`), ``parameter`` (the JSON field to fix)."""
    body: dict[str, Any] = {"detail": str(error)}
    if isinstance(error, BaseException) and parameter_of(error) is not None:
        body["parameter"] = parameter_of(error)
    return JSONResponse(body, status_code=422)


def download(data: bytes, filename: str, media_type: str) -> Response:
    return Response(data, media_type=media_type,
                    headers={"Content-Disposition": f'attachment; filename="{filename}"'})


MEDIA = {"json": "application/json", "csv": "text/csv; charset=utf-8", "md": "text/markdown; charset=utf-8",
         "html": "text/html; charset=utf-8", "pdf": "application/pdf"}


#: JSON-safe payloads: inf as the string "inf" (one implementation, in the core).
finite = json_safe
