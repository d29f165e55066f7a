"""A change counter and a last-change time in the score tallies, kept by triggers.

Every score inserted, deleted or updated (a recomputation, a failure scored again) bumps
``changes`` and sets ``changed_at`` of its (campaign, configuration) tally, in the same
statement-level triggers' transaction: with ``annotate``'s ``campaign_change_counters`` the
dashboard's fingerprint of a campaign is two indexed sums. Scores of training pairs count too
(the row a worker has locked anyway). Triggers of their own beside the counting ones; the
counter has a database default so that those still insert rows.
"""

import importlib
from typing import Any

from django.db import migrations, models

TALLY = "scoring_scoretally"
COLUMNS = "campaign_id, metric_config_id, done, failed, changes, changed_at"
ROWS = "SELECT p.campaign_id AS c, s.metric_config_id AS m FROM {table} s JOIN annotate_pair p ON p.id = s.pair_id"

POSTGRES = [
    f"""
CREATE FUNCTION scoring_score_changes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    UPDATE {TALLY} t SET changes = t.changes + d.n, changed_at = greatest(t.changed_at, now())
    FROM (SELECT c, m, count(*) AS n FROM ({ROWS.format(table="old_rows")}) r GROUP BY 1, 2) d
    WHERE t.campaign_id = d.c AND t.metric_config_id = d.m;
  ELSE
    INSERT INTO {TALLY} AS t ({COLUMNS})
    SELECT c, m, 0, 0, count(*), now() FROM ({ROWS.format(table="new_rows")}) r GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (campaign_id, metric_config_id) DO UPDATE SET changes = t.changes + EXCLUDED.changes,
      changed_at = greatest(t.changed_at, EXCLUDED.changed_at);
  END IF;
  RETURN NULL;
END $$""",
    "CREATE TRIGGER scoring_score_changes_insert AFTER INSERT ON scoring_score REFERENCING NEW TABLE AS new_rows"
    " FOR EACH STATEMENT EXECUTE FUNCTION scoring_score_changes()",
    "CREATE TRIGGER scoring_score_changes_delete AFTER DELETE ON scoring_score REFERENCING OLD TABLE AS old_rows"
    " FOR EACH STATEMENT EXECUTE FUNCTION scoring_score_changes()",
    # An update counts where the score is now (a score moved to another pair or configuration
    # is not something the application does; its counts move with scoring_score_tally_update).
    "CREATE TRIGGER scoring_score_changes_update AFTER UPDATE ON scoring_score REFERENCING NEW TABLE AS new_rows"
    " FOR EACH STATEMENT EXECUTE FUNCTION scoring_score_changes()",
]
POSTGRES_DROP = [
    *[f"DROP TRIGGER IF EXISTS scoring_score_changes_{op} ON scoring_score" for op in ("insert", "delete", "update")],
    "DROP FUNCTION IF EXISTS scoring_score_changes()",
]

_BUMP = "changes = changes + 1, changed_at = strftime('%Y-%m-%d %H:%M:%f', 'now')"
_INSERT = (
    f"INSERT INTO {TALLY} ({COLUMNS}) SELECT p.campaign_id, NEW.metric_config_id, 0, 0, 1,"
    " strftime('%Y-%m-%d %H:%M:%f', 'now') FROM annotate_pair p WHERE p.id = NEW.pair_id"
    f" ON CONFLICT (campaign_id, metric_config_id) DO UPDATE SET {_BUMP};"
)
SQLITE = [
    f"CREATE TRIGGER scoring_score_changes_insert AFTER INSERT ON scoring_score BEGIN {_INSERT} END",
    f"CREATE TRIGGER scoring_score_changes_update AFTER UPDATE ON scoring_score BEGIN {_INSERT} END",
    f"CREATE TRIGGER scoring_score_changes_delete AFTER DELETE ON scoring_score BEGIN UPDATE {TALLY} SET {_BUMP}"
    " WHERE metric_config_id = OLD.metric_config_id"
    " AND campaign_id = (SELECT campaign_id FROM annotate_pair WHERE id = OLD.pair_id); END",
]
SQLITE_DROP = [f"DROP TRIGGER IF EXISTS scoring_score_changes_{op}" for op in ("insert", "delete", "update")]


# SQLite adds a column by making the table again: the counting triggers, which name the table,
# are dropped around it and made again after.
def _counting() -> Any:
    return importlib.import_module("scoring.migrations.0010_score_tallies_kept_by_triggers")


def drop_counting_on_sqlite(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "sqlite":
        for statement in _counting().SQLITE_DROP:
            schema_editor.execute(statement, params=None)


def add_counting_on_sqlite(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "sqlite":
        for statement in _counting().SQLITE:
            schema_editor.execute(statement, params=None)


def add_triggers(apps: Any, schema_editor: Any) -> None:
    add_counting_on_sqlite(apps, schema_editor)
    for statement in POSTGRES if schema_editor.connection.vendor == "postgresql" else SQLITE:
        schema_editor.execute(statement, params=None)


def drop_triggers(apps: Any, schema_editor: Any) -> None:
    for statement in POSTGRES_DROP if schema_editor.connection.vendor == "postgresql" else SQLITE_DROP:
        schema_editor.execute(statement, params=None)
    drop_counting_on_sqlite(apps, schema_editor)


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0016_campaign_change_counters"),
        ("scoring", "0011_stopping_rule_method"),
    ]

    operations = [
        migrations.RunPython(drop_counting_on_sqlite, add_counting_on_sqlite),
        migrations.AddField(
            model_name="scoretally",
            name="changes",
            field=models.BigIntegerField(
                db_default=0, help_text="Scores written (inserted, updated, deleted): the dashboard's fingerprint."
            ),
        ),
        migrations.AddField(
            model_name="scoretally",
            name="changed_at",
            field=models.DateTimeField(blank=True, null=True, help_text="When a score was last written."),
        ),
        migrations.RunPython(add_triggers, drop_triggers),
    ]
