"""Django's SQLite backend, which creates the database file's folder when it first connects.

SQLite cannot create a missing parent folder, and a fresh checkout has no ``data/`` yet. The
folder is created here, where the file is opened, rather than as a side effect of importing
the settings (which any tool, test or ``manage.py --help`` does).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.db.backends.sqlite3 import base


class DatabaseWrapper(base.DatabaseWrapper):
    def get_new_connection(self, conn_params: dict[str, Any]) -> Any:
        name = str(conn_params.get("database", ""))
        # In-memory and URI databases ("file:…?mode=memory") have no folder to create.
        if name and name != ":memory:" and not name.startswith("file:"):
            Path(name).parent.mkdir(parents=True, exist_ok=True)
        return super().get_new_connection(conn_params)
