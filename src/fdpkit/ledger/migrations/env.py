"""Alembic environment of the fdpkit ledger: runs on the connection fdpkit passes in
(``config.attributes["connection"]``), or on ``-x url=...`` from the command line."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from fdpkit.ledger.models import Base

try:
    config = context.config
except AttributeError:  # imported outside an Alembic run (e.g. by doctest collection)
    config = None
target_metadata = Base.metadata


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        context.configure(connection=connection, target_metadata=target_metadata,
                          render_as_batch=connection.dialect.name == "sqlite")
        with context.begin_transaction():
            context.run_migrations()
        return
    url = context.get_x_argument(as_dictionary=True).get("url")
    if not url:
        raise SystemExit("pass the ledger URL: alembic ... -x url=sqlite:///ledger.sqlite upgrade head")
    engine = create_engine(url)
    with engine.connect() as conn:
        context.configure(connection=conn, target_metadata=target_metadata,
                          render_as_batch=conn.dialect.name == "sqlite")
        with context.begin_transaction():
            context.run_migrations()


if config is not None:
    if context.is_offline_mode():
        raise SystemExit("the fdpkit ledger migrations run online only")
    run_migrations_online()
