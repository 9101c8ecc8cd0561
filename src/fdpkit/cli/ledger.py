"""``fdpkit ledger``: the privacy-budget ledger from the command line. Every command takes
``--db URL`` (before or after the subcommand); commands that print a result take
``--format json``. The user (``--user``, default the login name) is taken on trust: this is
a local tool; the web pages authenticate. No maths here: everything is fdpkit.ledger."""

from __future__ import annotations

import functools
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable, Optional

import typer
from rich.table import Table as RichTable

from fdpkit.cli._common import (State, check_distinct, saved_delta, check_output, command_group, err, fail, fmt_num, json_safe, out,
                                working, write_output)
from fdpkit.cli.ledger_input import (  # noqa: F401  (mechanism_from_opacus_file: its old home)
    DPSGD_RUN, FromOpacusOpt, GaussOpt, LapOpt, MechOpt, SpecOpt, declared_relation, mechanism_from_opacus_file,
    release_mechanism, with_dpsgd_options)
from fdpkit.vocabulary import ADD_REMOVE

ledger_app = command_group("Privacy-budget ledger: releases composed tightly over time, thresholds, "
                              "approvals, a verifiable event log.", no_args_is_help=True)
dataset_app = command_group("Datasets (privacy units).", no_args_is_help=True)
threshold_app = command_group("Alert thresholds (notice / warning / hard limit).", no_args_is_help=True)
ledger_app.add_typer(dataset_app, name="dataset")
ledger_app.add_typer(threshold_app, name="threshold")


class _Ctx:
    db: Optional[str] = None


DbOpt = typer.Option(None, "--db", help="SQLAlchemy URL or SQLite file (default: FDPKIT_LEDGER, else the "
                                         "user's data directory).")
FmtOpt = typer.Option("text", "--format", "-f", help="text or json.")


def _user_default() -> str:
    import getpass

    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no login name (containers)
        return os.environ.get("USER", "cli")


UserOpt = typer.Option(None, "--user", "-u", help="Who does this (taken on trust; default: login name).")
ReleaseIdArg = typer.Argument(..., metavar="ID", help="Release id (printed by `fdpkit ledger propose`).")


@ledger_app.callback()
def _callback(db: Optional[str] = DbOpt) -> None:
    _Ctx.db = db


def _open(db: Optional[str], create: bool = False):
    """The ledger at ``--db`` (else FDPKIT_LEDGER, else the data directory's file). A SQLite
    file that does not exist is an error unless ``create`` (``init``): a typo in ``--db``
    must not turn into a new, empty ledger that verifies as intact."""
    from sqlalchemy.engine import make_url

    from fdpkit.ledger import open_ledger
    from fdpkit.ledger.db import in_memory, resolve_url

    url = resolve_url(db if db is not None else _Ctx.db)
    u = make_url(url)
    if not create and u.get_backend_name() == "sqlite" and not in_memory(url) and not Path(u.database).is_file():
        fail(f"no ledger at {u.database}: check --db, or create it with `fdpkit ledger init --db {u.database}`")
    return open_ledger(url)


def ledger_cmd(fn: Callable) -> Callable:
    """Library and database errors -> exit 2 with one line."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any):
        from sqlalchemy.exc import SQLAlchemyError

        try:
            return fn(*args, **kwargs)
        except (ValueError, OSError) as exc:
            fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        except SQLAlchemyError as exc:
            msg = str(getattr(exc, "orig", None) or exc).strip().splitlines()
            fail(f"database error: {msg[0] if msg else type(exc).__name__}")

    return wrapper


def _check_fmt(fmt: str, allowed: tuple[str, ...] = ("text", "json")) -> None:
    if fmt not in allowed:
        fail(f"--format must be {', '.join(allowed[:-1])} or {allowed[-1]}, got {fmt!r}")


def _json(payload: Any) -> None:
    sys.stdout.write(json.dumps(json_safe(payload), indent=2, allow_nan=False, default=str) + "\n")


def _table(title: str, header: list[str], rows: list[list[Any]], **style: Any) -> None:
    """A table on stdout; a cell too wide for the terminal folds onto more lines, never cut
    (cells of up to 10 characters, numbers and dates, stay whole)."""
    t = RichTable(title=title, title_justify="left", **style)
    cells = [[fmt_num(c) for c in r] for r in rows]
    for i, h in enumerate(header):
        t.add_column(h, overflow="fold", min_width=min(10, max((len(r[i]) for r in cells), default=0)))
    for r in cells:
        t.add_row(*r)
    out.print(t)


#: The ledger's reference δ as its messages spell every δ: the formatter's text of 1e-5 (a literal:
#: the formatter imports the maths, which ``--help`` must not; a test keeps the two equal).
REF_DELTA = "1e-05"


def _up(*values: Any) -> list[str]:
    """Upper bounds (μ, ε, the ε sum, a TPR) as printed: the last digit rounded up."""
    return [fmt_num(v, up=True) for v in values]


def _other_deltas(*totals: Any, extra: Optional[float] = None) -> list[float]:
    """The δ other than 1e-5 at which the totals read ε (the thresholds', a census limit's 1e-6)
    and ``extra`` (a saved calibration's), largest first: each gets its row beside 1e-5's."""
    found = {float(d) for t in totals for d in t.epsilons} | ({float(extra)} if extra else set())
    return sorted(found - {1e-5}, reverse=True)


def _eps_rows(*totals: Any, extra: Optional[float] = None) -> list[list[Any]]:
    return [[f"ε at δ = {fmt_num(d)}", *_up(*(t.epsilon_for_delta(d) for t in totals))]
            for d in _other_deltas(*totals, extra=extra)]


def _say(text: str) -> None:
    if not State.quiet:
        err.print(text, highlight=False, soft_wrap=True)


# ---------------------------------------------------------------------- init, datasets, thresholds
@ledger_app.command("init")
@ledger_cmd
def init(db: Optional[str] = DbOpt, format: str = FmtOpt) -> None:
    """Create or upgrade the ledger's schema (Alembic migrations)."""
    _check_fmt(format)
    from sqlalchemy.engine import make_url

    led = _open(db, create=True)
    rev = led.init()
    shown = make_url(led.url).render_as_string(hide_password=True)
    if format == "json":
        _json({"url": shown, "revision": rev})
    else:
        out.print(f"ledger ready at {shown} (schema {rev})", highlight=False, soft_wrap=True)


@dataset_app.command("add")
@ledger_cmd
def dataset_add(name: str = typer.Argument(..., help="Dataset name."),
                unit: str = typer.Option(..., "--unit", help='Privacy unit in words, e.g. "one person".'),
                relation: str = typer.Option(ADD_REMOVE, "--relation",
                                             help="Neighbouring relation: add-remove or replace-one "
                                                  "(the old spelling add-or-remove is accepted)."),
                description: str = typer.Option("", "--description", help="What the dataset holds."),
                user: Optional[str] = UserOpt, db: Optional[str] = DbOpt, format: str = FmtOpt) -> None:
    """Register a dataset (default thresholds: ε 2 / 4 / 8 at δ = 1e-5)."""
    _check_fmt(format)
    d = _open(db).add_dataset(name, unit=unit, relation=relation, description=description,
                              user=user or _user_default())
    if format == "json":
        _json({"id": d.id, "name": d.name, "unit": d.unit, "relation": d.relation_name})
    else:
        out.print(f"dataset {d.name} added (privacy unit: {d.unit})", highlight=False)


@dataset_app.command("list")
@ledger_cmd
def dataset_list(db: Optional[str] = DbOpt, format: str = FmtOpt) -> None:
    """List the datasets."""
    _check_fmt(format)
    ds = _open(db).datasets()
    rows = [{"id": d.id, "name": d.name, "unit": d.unit, "relation": d.relation_name} for d in ds]
    if format == "json":
        _json(rows)
    else:
        _table("Datasets", ["id", "name", "privacy unit", "relation"], [list(r.values()) for r in rows])


@dataset_app.command("four-eyes")
@ledger_cmd
def dataset_four_eyes(name: str = typer.Argument(..., help="Dataset name."),
                      off: bool = typer.Option(False, "--off", help="Relax four-eyes (needs --reason)."),
                      reason: str = typer.Option("", "--reason", help="Why (kept in the event log)."),
                      user: Optional[str] = UserOpt, db: Optional[str] = DbOpt, format: str = FmtOpt) -> None:
    """Keep (default) or relax four-eyes for a dataset: with it the proposer of a release can
    neither approve it nor override a hard limit for it. A chained event."""
    _check_fmt(format)
    led = _open(db)
    led.set_four_eyes(name, not off, user=user or _user_default(), reason=reason)
    on = led.four_eyes(name)
    if format == "json":
        _json({"dataset": name, "four_eyes": on})
    else:
        out.print(f"dataset {name}: four-eyes {'on' if on else 'off'}", highlight=False)


@threshold_app.command("set")
@ledger_cmd
def threshold_set(name: str = typer.Argument(..., help="Dataset name."),
                  level: str = typer.Option(..., "--level", help="notice, warning or hard."),
                  epsilon: Optional[float] = typer.Option(None, "--epsilon", help="ε limit (at --delta)."),
                  delta: Optional[float] = typer.Option(None, "--delta", help="δ of an ε limit (default 1e-5)."),
                  mu: Optional[float] = typer.Option(None, "--mu", help="μ limit."),
                  tpr: Optional[float] = typer.Option(None, "--tpr", help="Certified TPR limit (at --fpr)."),
                  fpr: Optional[float] = typer.Option(None, "--fpr", help="FPR of a TPR limit (default 1e-3)."),
                  remove: bool = typer.Option(False, "--remove", help="Remove this level's limit on the metric."),
                  approver: Optional[str] = typer.Option(
                      None, "--approver", help="Second person who approves lifting the hard limit (four-eyes)."),
                  user: Optional[str] = UserOpt, db: Optional[str] = DbOpt, format: str = FmtOpt) -> None:
    """Set (or --remove) a threshold: exactly one of --epsilon, --mu, --tpr. Raising or removing
    the hard limit needs --approver, a second person (four-eyes); lowering it does not."""
    _check_fmt(format)
    given = {k: v for k, v in (("epsilon", epsilon), ("mu", mu), ("tpr", tpr)) if v is not None}
    if remove:
        if len(given) > 1:
            fail("give at most one of --epsilon, --mu, --tpr with --remove")
        metric = next(iter(given), "epsilon")
        _open(db).remove_threshold(name, metric=metric, level=level, user=user or _user_default(),
                                   approver=approver)
        payload = {"dataset": name, "metric": metric, "level": level, "removed": True}
    else:
        if len(given) != 1:
            fail("give exactly one of --epsilon, --mu, --tpr")
        metric, value = next(iter(given.items()))
        t = _open(db).set_threshold(name, metric=metric, level=level, value=value, delta=delta, fpr=fpr,
                                    user=user or _user_default(), approver=approver)
        payload = {"dataset": name, "metric": t.metric, "level": t.level, "value": t.value,
                   "delta": t.delta, "fpr": t.fpr}
    if format == "json":
        _json(payload)
    else:
        out.print(" ".join(f"{k}={v}" for k, v in payload.items() if v is not None), highlight=False)


# ---------------------------------------------------------------------- releases
@ledger_app.command("propose")
@ledger_cmd
@with_dpsgd_options
def propose(name: str = typer.Argument(..., help="Dataset name."),
            mechanism: Optional[Path] = MechOpt, spec: Optional[str] = SpecOpt,
            gaussian: Optional[float] = GaussOpt, laplace: Optional[float] = LapOpt,
            run: dict = DPSGD_RUN,
            title: str = typer.Option(..., "--title", help="What is released."),
            purpose: str = typer.Option("", "--purpose", help="Why it is released (kept with the release)."),
            user: Optional[str] = UserOpt, db: Optional[str] = DbOpt, format: str = FmtOpt,
            from_opacus: Optional[Path] = FromOpacusOpt) -> None:
    """Propose a release; prints its id and what it would do to the running total.

    The release is a mechanism spec (-m, --spec), a Gaussian or Laplace mechanism, an Opacus
    accountant file (--from-opacus), or a DP-SGD run as trained, with the options of
    `fdpkit report dpsgd` (without --relation: the dataset's relation)."""
    _check_fmt(format)
    from fdpkit.ledger import GRID_NOTE, release_dict

    led = _open(db)
    told: list[str] = []  # what is said on stderr (an Opacus file's steps already released), for the JSON too
    mech = release_mechanism(declared_relation(led, name, run), mechanism, spec, gaussian, laplace, from_opacus,
                             ledger=led, dataset=name, warnings=told, **run)
    with working("Accounting the release..."):
        r = led.propose(name, mech, title=title, user=user or _user_default(), purpose=purpose)
        check = led.check(name, r.spec)
        rows = _eps_rows(check.before, check.after, extra=saved_delta(mech))  # JSON too: read before it
    if format == "json":
        _json({**release_dict(r), "check": check.to_dict(), "warnings": told})
        return
    out.print(str(r.id))
    a = check.after
    also = "".join(f", ε = {row[2]} at δ = {row[0].rsplit(' ', 1)[1]}" for row in rows)
    _say(f"release {r.id} proposed: released total would become μ = {fmt_num(a.mu, up=True)}, "
         f"ε = {fmt_num(a.epsilon, up=True)} at δ = {REF_DELTA}{also} (ε sum {fmt_num(a.epsilon_sum, up=True)} "
         f"at δ = {fmt_num(a.delta_sum, up=True)})")
    if r.gaussian_mu is None:
        _say(f"[dim]{GRID_NOTE}[/dim]")
    for m in check.messages:
        _say(f"[yellow]! {m}[/yellow]")


def _transition(fn_name: str, release_id: int, user: Optional[str], db: Optional[str], format: str,
                **kwargs: Any) -> None:
    _check_fmt(format)
    from fdpkit.ledger import release_dict

    led = _open(db)
    with working(f"{fn_name.capitalize()}..."):
        result = getattr(led, fn_name)(release_id, user=user or _user_default(), **kwargs)
        r = led.release_info(release_id)
    # the alerts a release raised: said on stderr, and in --format json's warnings
    alerts = ([f"alert: {json.loads(e.payload)['data'].get('message', '')}" for e in led.history(release_id=r.id, kind="alert")]
              if fn_name == "release" else [])
    if format == "json":
        _json({**release_dict(r), **({"warnings": alerts} if fn_name == "release" else {})})
    else:
        out.print(f"release {r.id} {r.state}" + (f" (override: {r.override_reason})" if r.override_reason else ""),
                  highlight=False)
        for alert in alerts:
            _say(f"[yellow]! {alert}[/yellow]")
    return result


@ledger_app.command("approve")
@ledger_cmd
def approve(release_id: int = ReleaseIdArg,
            comment: str = typer.Option("", "--comment", help="A comment (kept in the approval record)."),
            no_report: bool = typer.Option(False, "--no-report", help="Do not store the approval record."),
            user: Optional[str] = UserOpt, db: Optional[str] = DbOpt, format: str = FmtOpt) -> None:
    """Approve a proposed release (stores its approval record, PDF and JSON, with SHA-256:
    dataset, title, proposer, approver, comment, time, thresholds, totals before and after,
    and the privacy report)."""
    _transition("approve", release_id, user, db, format, comment=comment, report=not no_report)


@ledger_app.command("reject")
@ledger_cmd
def reject(release_id: int = ReleaseIdArg,
           comment: str = typer.Option("", "--comment", help="The reason (required)."),
           no_report: bool = typer.Option(False, "--no-report", help="Do not store the rejection record."),
           user: Optional[str] = UserOpt, db: Optional[str] = DbOpt, format: str = FmtOpt) -> None:
    """Reject a proposed release (stores its rejection record, PDF and JSON, with SHA-256:
    the decision, approver, reason, time, thresholds and the totals it would have made;
    `fdpkit ledger record ID` prints it)."""
    _transition("reject", release_id, user, db, format, comment=comment, report=not no_report)


@ledger_app.command("withdraw")
@ledger_cmd
def withdraw(release_id: int = ReleaseIdArg,
             comment: str = typer.Option("", "--comment", help="Why (kept in the event log)."),
             user: Optional[str] = UserOpt, db: Optional[str] = DbOpt, format: str = FmtOpt) -> None:
    """Withdraw a proposed or approved release."""
    _transition("withdraw", release_id, user, db, format, comment=comment)


def _interactive() -> bool:
    """Whether a person can answer a y/N question (stdin and stderr are terminals)."""
    return sys.stdin.isatty() and sys.stderr.isatty()


@ledger_app.command("release")
@ledger_cmd
def release(release_id: int = ReleaseIdArg,
            override: Optional[str] = typer.Option(None, "--override", help="Reason to release beyond the hard limit."),
            yes: bool = typer.Option(False, "--yes", "-y", help="Release without asking on a terminal."),
            user: Optional[str] = UserOpt, db: Optional[str] = DbOpt, format: str = FmtOpt) -> None:
    """Release an approved release (refused beyond the hard limit without --override REASON).
    Releasing cannot be undone: on a terminal it shows the totals before and after and asks
    y/N (--yes skips the question); scripts (no terminal) release without asking, as before."""
    _check_fmt(format)
    if not yes and _interactive():
        led = _open(db)
        with working("Checking..."):
            r, chk = led.release_info(release_id), led.check_release(release_id)
        if r.state != "approved":
            fail(f"release {r.id} is {r.state}: only an approved release can be released")
        b, a = chk.before, chk.after
        _say(f"release {r.id} ({r.title!r}): released total μ = {fmt_num(b.mu, up=True)} → "
             f"{fmt_num(a.mu, up=True)}, ε = {fmt_num(b.epsilon, up=True)} → {fmt_num(a.epsilon, up=True)} at δ = {REF_DELTA}")
        for m in chk.messages:
            _say(f"[yellow]! {m}[/yellow]")
        if not typer.confirm(f"Release {r.id}? This cannot be undone", default=False, err=True):
            err.print(f"release {r.id} not released (answered no)", highlight=False)
            raise typer.Exit(1)
    try:
        _transition("release", release_id, user, db, format, override_reason=override)
    except ValueError as exc:  # say how to go on where the hard limit blocks it
        msg = str(exc)
        if "would exceed the hard limit" in msg:
            fail(f"{msg}: `fdpkit ledger release {release_id} --override REASON`")
        if "cannot override the hard limit" in msg:
            fail(f"{msg} (`fdpkit ledger release {release_id} --override REASON --user APPROVER`)")
        raise


# ---------------------------------------------------------------------- reading
@ledger_app.command("status")
@ledger_cmd
def status(name: str = typer.Argument(..., help="Dataset name."), db: Optional[str] = DbOpt,
           format: str = FmtOpt) -> None:
    """Running total (tight composition) beside the ε sum, thresholds and alerts."""
    _check_fmt(format)
    with working("Composing..."):
        st = _open(db).status(name)
    if format == "json":
        _json(st.to_dict())
        return
    r, w = st.released, st.with_approved
    _table(f"Ledger status: {name} (privacy unit: {st.dataset.unit})", ["", "released", "released + approved"], [
        ["releases", r.count, w.count], ["μ (tight)", *_up(r.mu, w.mu)], ["regret", r.regret, w.regret],
        [f"ε at δ = {REF_DELTA}", *_up(r.epsilon, w.epsilon)], *_eps_rows(r, w), ["TPR at FPR 1e-3", *_up(r.tpr, w.tpr)],
        ["ε sum (basic composition)", *_up(r.epsilon_sum, w.epsilon_sum)], ["δ of the ε sum", *_up(r.delta_sum, w.delta_sum)],
        ["method", r.method_label, w.method_label]])
    _table("Thresholds", ["level", "limit", "current", "exceeded"],
           [[c.threshold.level, c.threshold.describe(), *_up(c.current), c.exceeded] for c in st.thresholds])
    for c in st.exceeded:
        out.print(f"[yellow]! {c.message()}[/yellow]", highlight=False)
    for note in st.relation_notes:
        out.print(f"! {note}", style="yellow", highlight=False, markup=False, soft_wrap=True)


@ledger_app.command("check")
@ledger_cmd
@with_dpsgd_options
def check(name: str = typer.Argument(..., help="Dataset name."),
          mechanism: Optional[Path] = MechOpt, spec: Optional[str] = SpecOpt,
          gaussian: Optional[float] = GaussOpt, laplace: Optional[float] = LapOpt,
          run: dict = DPSGD_RUN,
          db: Optional[str] = DbOpt, format: str = FmtOpt, from_opacus: Optional[Path] = FromOpacusOpt) -> None:
    """What a proposed release would do to the released total (writes nothing); the release
    is given as for `fdpkit ledger propose`."""
    _check_fmt(format)
    led = _open(db)
    told: list[str] = []  # what is said on stderr (an Opacus file's steps already released), for the JSON too
    mech = release_mechanism(declared_relation(led, name, run), mechanism, spec, gaussian, laplace, from_opacus,
                             ledger=led, dataset=name, warnings=told, **run)
    c = led.check(name, mech)
    eps_rows = _eps_rows(c.before, c.after, extra=saved_delta(mech))  # JSON too: read before it
    if format == "json":
        _json({**c.to_dict(), "warnings": told})
        return
    _table(f"Effect on {name}", ["", "now", "with this release"], [
        ["releases", c.before.count, c.after.count], ["μ", *_up(c.before.mu, c.after.mu)],
        [f"ε at δ = {REF_DELTA}", *_up(c.before.epsilon, c.after.epsilon)], *eps_rows,
        ["ε sum", *_up(c.before.epsilon_sum, c.after.epsilon_sum)],
        ["δ of the ε sum", *_up(c.before.delta_sum, c.after.delta_sum)]])
    for m in c.messages:
        out.print(f"[yellow]! {m}[/yellow]", highlight=False)
    if c.after.method == "PLD":
        from fdpkit.ledger import GRID_NOTE

        out.print(f"[dim]{GRID_NOTE}[/dim]", highlight=False)


@ledger_app.command("timeline")
@ledger_cmd
def timeline(name: str = typer.Argument(..., help="Dataset name."),
             bucket: str = typer.Option("week", "--bucket", help="week, day or month."),
             plot: Optional[Path] = typer.Option(None, "--plot", help="Also draw it to this file (.png, .svg, .pdf)."),
             output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the table here."),
             db: Optional[str] = DbOpt, format: str = typer.Option("text", "--format", "-f", help="text, json or csv.")) -> None:
    """The running total over time (weekly buckets by default)."""
    _check_fmt(format, ("text", "json", "csv"))
    # both files checked before any work or write: a refused --output left the plot written, and
    # --output with the text format was ignored without a word
    if output is not None and format == "text":
        fail("--output needs --format json or csv (the text table goes to the terminal)")
    if plot is not None:
        from fdpkit.report.figures import FORMATS as FIGURE_FORMATS

        check_output(plot, "--plot", FIGURE_FORMATS)
    if output is not None:
        check_output(output)
    check_distinct((plot, "--plot"), (output, "--output"))
    from rich import box

    from fdpkit.ledger.timeline import SHORT_HEADER, SHORT_LEGEND, ADJECTIVE, draw_timeline, timeline as tl, timeline_csv

    led = _open(db)
    with working("Composing..."):
        rows = tl(led, name, bucket)
        st = led.status(name) if plot else None
    if plot:
        from fdpkit.report.figures import render

        kind = plot.suffix.lower().lstrip(".")
        eps = [(c.threshold.level, c.threshold.value) for c in st.thresholds if c.threshold.metric == "epsilon"]
        write_output(plot, render(draw_timeline(rows, eps), kind), "--plot")
        _say(f"wrote {plot}")
    data = (json.dumps(json_safe([r.to_dict() for r in rows]), indent=2) + "\n" if format == "json"
            else timeline_csv(rows) if format == "csv" else None)
    if data is not None:
        if output:
            write_output(output, data.encode())
            _say(f"wrote {output}")
        else:
            sys.stdout.write(data)
        return
    _table(f"Timeline: {name} ({ADJECTIVE[bucket]})", list(SHORT_HEADER), [r.texts() for r in rows],
           box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True, caption=SHORT_LEGEND,
           caption_justify="left")  # 80 columns hold it


@ledger_app.command("history")
@ledger_cmd
def history(name: Optional[str] = typer.Argument(None, help="Dataset name (default: all)."),
            release_id: Optional[int] = typer.Option(None, "--release", help="Only this release."),
            limit: Optional[int] = typer.Option(None, "--limit", help="Only the last N events."),
            db: Optional[str] = DbOpt, format: str = FmtOpt) -> None:
    """The event log (oldest first)."""
    _check_fmt(format)
    from fdpkit.ledger import event_dict

    if limit is not None and limit < 1:
        fail(f"--limit must be a whole number >= 1, got {limit}")
    events = [event_dict(e) for e in _open(db).history(name, release_id, limit)]
    if format == "json":
        _json(events)
        return
    _table("Events", ["seq", "at (UTC)", "kind", "actor", "release", "details"],
           [[e["seq"], e["at"][:19], e["kind"], e["actor"], e["release_id"] or "-",
             "; ".join(f"{k}: {v}" for k, v in e["data"].items() if k in ("title", "message", "reason", "comment",
                                                                          "threshold") and v)] for e in events])


@ledger_app.command("export")
@ledger_cmd
def export(name: str = typer.Argument(..., help="Dataset name."),
           format: str = typer.Option("json", "--format", "-f", help="json, csv, md, html or pdf."),
           output: Optional[Path] = typer.Option(None, "--output", "-o", help="File to write (needed for PDF)."),
           bucket: str = typer.Option("week", "--bucket", help="Timeline buckets: week, day or month."), db: Optional[str] = DbOpt) -> None:
    """The ledger report of a dataset: status, thresholds, timeline (with its plot), releases."""
    from fdpkit.ledger.timeline import ledger_document
    from fdpkit.report import FORMATS, render_document

    if format not in FORMATS:
        fail(f"--format must be one of {', '.join(FORMATS)}, got {format!r}")
    if format == "pdf" and output is None:
        fail("PDF output needs --output PATH")
    led = _open(db)
    with working(f"Rendering {format}..."):
        data = render_document(ledger_document(led, name, bucket), format)
    if output:
        write_output(output, data)
        _say(f"wrote {output}")
        _say(f"chain head {led.head()} (keep it elsewhere: `fdpkit ledger verify --anchor` checks it)")
    else:
        sys.stdout.write(data.decode("utf-8"))


@ledger_app.command("record")
@ledger_cmd
def record(release_id: int = ReleaseIdArg,
           format: str = typer.Option("json", "--format", "-f", help="json or pdf."),
           output: Optional[Path] = typer.Option(None, "--output", "-o", help="File to write (needed for PDF)."),
           db: Optional[str] = DbOpt) -> None:
    """The stored approval (or rejection) record of a release (JSON or PDF); a PDF not rendered yet is
    rendered and stored now (a chained event)."""
    if format not in ("json", "pdf"):
        fail(f"--format must be json or pdf, got {format!r}")
    if format == "pdf" and output is None:
        fail("PDF output needs --output PATH")
    led = _open(db)
    a = next((a for a in reversed(led.approvals(release_id)) if a.report_json), None)
    if a is None:
        fail(f"release {release_id} has no stored approval record")
    if format == "pdf" and a.report_pdf is None:
        with working("Rendering the PDF..."):
            a = led.render_approval_pdf(release_id)
    data = a.report_pdf if format == "pdf" else a.report_json
    if output:
        write_output(output, data)
        _say(f"wrote {output}")
    else:
        sys.stdout.write(data.decode("utf-8"))
