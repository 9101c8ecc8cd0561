"""``fdpkit ledger user ...``: the web's local accounts (add, list, deactivate, activate,
role, reset-password), each change a chained ledger event. Registered on ``ledger_app`` by
:mod:`fdpkit.cli` (no maths here)."""

from __future__ import annotations

import sys
from typing import Any, Optional

import typer

from fdpkit.cli._common import command_group, out
from fdpkit.cli.ledger import DbOpt, FmtOpt, UserOpt, _check_fmt, _json, _open, _table, _user_default, ledger_cmd

user_app = command_group("Local accounts for the web pages.", no_args_is_help=True)


@user_app.command("add")
@ledger_cmd
def user_add(name: str = typer.Argument(..., help="Login name."),
             role: str = typer.Option(..., "--role", help="viewer, analyst, approver or admin."),
             password_stdin: bool = typer.Option(False, "--password-stdin",
                                                 help="Read the password from the first line of stdin."),
             user: Optional[str] = UserOpt, db: Optional[str] = DbOpt, format: str = FmtOpt) -> None:
    """Create a web account (argon2 hash; the password is never stored or printed)."""
    _check_fmt(format)
    from fdpkit.ledger.users import add_user

    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = typer.prompt("Password", hide_input=True, confirmation_prompt=True)
    u = add_user(_open(db), name, role=role, password=password, actor=user or _user_default())
    if format == "json":
        _json({"id": u.id, "name": u.name, "role": u.role})
    else:
        out.print(f"user {u.name} added ({u.role})", highlight=False)


def _user_change(fn_name: str, name: str, user: Optional[str], db: Optional[str], format: str, **kwargs: Any):
    from fdpkit.ledger import users as accounts

    u = getattr(accounts, fn_name)(_open(db), name, actor=user or _user_default(), **kwargs)
    if format == "json":
        _json(accounts.user_dict(u))
    else:
        out.print(f"user {u.name}: {u.role}, {'active' if u.active else 'deactivated'}", highlight=False)


@user_app.command("list")
@ledger_cmd
def user_list(db: Optional[str] = DbOpt, format: str = FmtOpt) -> None:
    """List the accounts (never a password or its hash)."""
    _check_fmt(format)
    from fdpkit.ledger.users import user_dict, users

    rows = [user_dict(u) for u in users(_open(db))]
    if format == "json":
        _json(rows)
    else:
        _table("Users", ["id", "name", "role", "active"], [list(r.values()) for r in rows])


@user_app.command("deactivate")
@ledger_cmd
def user_deactivate(name: str = typer.Argument(..., help="Login name."),
                    reason: str = typer.Option("", "--reason", help="Why (kept in the event log)."),
                    user: Optional[str] = UserOpt, db: Optional[str] = DbOpt, format: str = FmtOpt) -> None:
    """Deactivate an account: it can no longer log in and its sessions end (a chained event)."""
    _check_fmt(format)
    _user_change("deactivate_user", name, user, db, format, reason=reason)


@user_app.command("activate")
@ledger_cmd
def user_activate(name: str = typer.Argument(..., help="Login name."), user: Optional[str] = UserOpt,
                  db: Optional[str] = DbOpt, format: str = FmtOpt) -> None:
    """Re-activate a deactivated account (a chained event)."""
    _check_fmt(format)
    _user_change("activate_user", name, user, db, format)


@user_app.command("role")
@ledger_cmd
def user_role(name: str = typer.Argument(..., help="Login name."),
              role: str = typer.Option(..., "--role", help="viewer, analyst, approver or admin."),
              user: Optional[str] = UserOpt, db: Optional[str] = DbOpt, format: str = FmtOpt) -> None:
    """Give an account another role (a chained event; its sessions end)."""
    _check_fmt(format)
    _user_change("set_role", name, user, db, format, role=role)


@user_app.command("reset-password")
@ledger_cmd
def user_reset_password(name: str = typer.Argument(..., help="Login name."),
                        password_stdin: bool = typer.Option(False, "--password-stdin",
                                                            help="Read the password from the first line of stdin."),
                        user: Optional[str] = UserOpt, db: Optional[str] = DbOpt, format: str = FmtOpt) -> None:
    """Set a new password (argon2; a chained event; the account's sessions end)."""
    _check_fmt(format)
    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = typer.prompt("New password", hide_input=True, confirmation_prompt=True)
    _user_change("reset_password", name, user, db, format, password=password)
