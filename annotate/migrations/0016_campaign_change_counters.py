"""A change counter and a last-change time in the campaign tallies, kept by triggers.

The dashboard decides whether its kept analyses are stale from a fingerprint of what they read;
that was one aggregate over every judgement, pair and volunteer of the campaign. Now every write
that can change an analysis bumps ``changes`` (and sets ``changed_at``) in the tally stripe of the
row written, in the same transaction: a judgement inserted, deleted or edited; a pair inserted,
deleted, or edited in a column the analyses read (its texts, origin, system, gold label or score,
kind, expected answer, campaign, selection weights; not its judgement counter); a volunteer
inserted, deleted, or given another English level or exclusion override. The counter only grows,
so the campaign's sum of it is a fingerprint read by one indexed statement. (Scores: ``scoring``'s
migration ``score_change_counters``.)

These are triggers of their own beside the counting ones of ``campaign_tallies_striped``: the
second upsert touches the stripe the first has already locked in the same statement. The
counter has a database default (0), so the counting triggers, which name only their columns,
still insert rows.
"""

import importlib
from typing import Any

from django.db import migrations, models

TALLY = "annotate_campaigntally"
STRIPES = 16
COLUMNS = "campaign_id, stripe, pairs, checks, judgements, volunteers, changes, changed_at"
CONFLICT = "ON CONFLICT (campaign_id, stripe) DO UPDATE SET"
PG_BUMP = "changes = t.changes + EXCLUDED.changes, changed_at = greatest(t.changed_at, EXCLUDED.changed_at)"

# Where each table's rows count: (campaign, stripe) of a row of the transition table ``changed``
# (PostgreSQL) or of NEW / OLD (SQLite and the row-level update triggers).
PG_ROWS = {
    "annotate_pair": "SELECT campaign_id AS c, id % {n} AS s FROM changed",
    "annotate_volunteer": "SELECT campaign_id AS c, id % {n} AS s FROM changed",
    "annotate_judgement": (
        "SELECT p.campaign_id AS c, j.volunteer_id % {n} AS s FROM changed j JOIN annotate_pair p ON p.id = j.pair_id"
    ),
}
CAMPAIGN = {
    "annotate_pair": "{row}.campaign_id",
    "annotate_volunteer": "{row}.campaign_id",
    "annotate_judgement": "(SELECT campaign_id FROM annotate_pair WHERE id = {row}.pair_id)",
}
STRIPE = {
    "annotate_pair": "{row}.id % {n}",
    "annotate_volunteer": "{row}.id % {n}",
    "annotate_judgement": "{row}.volunteer_id % {n}",
}
# The columns the analyses read: an update that changes none of them is not a change.
READ = {
    "annotate_pair": [
        "campaign_id",
        "external_id",
        "origin",
        "source",
        "hypothesis",
        "gold_label",
        "gold_score",
        "is_training",
        "is_check",
        "expected_label",
        "system",
        "selection_probability",
        "selection_key",
    ],
    "annotate_volunteer": ["campaign_id", "english_level", "token", "exclusion_override"],
    "annotate_judgement": [
        "volunteer_id",
        "pair_id",
        "label",
        "source_on_top",
        "position",
        "is_training",
        "is_check",
        "shown_at",
        "answered_at",
    ],
}


def _changed_when(table: str) -> str:
    return " OR ".join(f"OLD.{column} IS DISTINCT FROM NEW.{column}" for column in READ[table])


def _sqlite_changed_when(table: str) -> str:
    return " OR ".join(f"OLD.{column} IS NOT NEW.{column}" for column in READ[table])


POSTGRES = []
SQLITE = []
for _table in READ:
    _rows = PG_ROWS[_table].format(n=STRIPES)
    _name = f"{_table}_changes"
    _old = {key: value.format(row="OLD", n=STRIPES) for key, value in (("c", CAMPAIGN[_table]), ("s", STRIPE[_table]))}
    _new = {key: value.format(row="NEW", n=STRIPES) for key, value in (("c", CAMPAIGN[_table]), ("s", STRIPE[_table]))}
    POSTGRES += [
        f"""
CREATE FUNCTION {_name}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO {TALLY} AS t ({COLUMNS})
    SELECT c, s, 0, 0, 0, 0, count(*), now() FROM ({_rows}) r GROUP BY 1, 2 ORDER BY 1, 2
    {CONFLICT} {PG_BUMP};
  ELSE
    UPDATE {TALLY} t SET changes = t.changes + d.n, changed_at = greatest(t.changed_at, now())
    FROM (SELECT c, s, count(*) AS n FROM ({_rows}) r GROUP BY 1, 2) d
    WHERE t.campaign_id = d.c AND t.stripe = d.s;
  END IF;
  RETURN NULL;
END $$""",
        f"""
CREATE FUNCTION {_name}_row() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  was bigint := {_old["c"]};
  now_in bigint := {_new["c"]};
BEGIN
  IF was IS DISTINCT FROM now_in THEN  -- moved: the campaign it left changed too
    UPDATE {TALLY} SET changes = changes + 1, changed_at = greatest(changed_at, now())
    WHERE campaign_id = was AND stripe = {_old["s"]};
  END IF;
  INSERT INTO {TALLY} AS t ({COLUMNS}) VALUES (now_in, {_new["s"]}, 0, 0, 0, 0, 1, now()) {CONFLICT} {PG_BUMP};
  RETURN NULL;
END $$""",
        *[
            f"CREATE TRIGGER {_name}_{op.lower()} AFTER {op} ON {_table} REFERENCING {age} TABLE AS changed"
            f" FOR EACH STATEMENT EXECUTE FUNCTION {_name}()"
            for op, age in (("INSERT", "NEW"), ("DELETE", "OLD"))
        ],
        f"CREATE TRIGGER {_name}_update AFTER UPDATE ON {_table} FOR EACH ROW WHEN ({_changed_when(_table)})"
        f" EXECUTE FUNCTION {_name}_row()",
    ]
    _bump = "changes = changes + 1, changed_at = strftime('%Y-%m-%d %H:%M:%f', 'now')"
    _insert = (
        f"INSERT INTO {TALLY} ({COLUMNS}) SELECT {{c}}, {{s}}, 0, 0, 0, 0, 1, strftime('%Y-%m-%d %H:%M:%f', 'now')"
        f" WHERE true {CONFLICT} {_bump};"
    )
    _update = f"UPDATE {TALLY} SET {_bump} WHERE campaign_id = {{c}} AND stripe = {{s}}"
    SQLITE += [
        f"CREATE TRIGGER {_name}_insert AFTER INSERT ON {_table} BEGIN {_insert.format(**_new)} END",
        f"CREATE TRIGGER {_name}_delete AFTER DELETE ON {_table} BEGIN {_update.format(**_old)}; END",
        f"CREATE TRIGGER {_name}_update AFTER UPDATE ON {_table} WHEN {_sqlite_changed_when(_table)} BEGIN"
        f" {_update.format(**_old)} AND {_old['c']} IS NOT {_new['c']}; {_insert.format(**_new)} END",
    ]

POSTGRES_DROP = [
    *[f"DROP TRIGGER IF EXISTS {table}_changes_{op} ON {table}" for table in READ for op in ("insert", "delete", "update")],
    *[f"DROP FUNCTION IF EXISTS {table}_changes{row}()" for table in READ for row in ("", "_row")],
]
SQLITE_DROP = [f"DROP TRIGGER IF EXISTS {table}_changes_{op}" for table in READ for op in ("insert", "delete", "update")]


# SQLite adds a column by making the table again: the counting triggers, which name the table,
# are dropped around it and made again after.
COUNTING_DROP = [
    f"DROP TRIGGER IF EXISTS {table}_tally_{op}" for table in READ for op in ("insert", "delete", "update")
]


def _counting() -> list[str]:
    striped = importlib.import_module("annotate.migrations.0015_campaign_tallies_striped")
    return list(striped.SQLITE)


def drop_counting_on_sqlite(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "sqlite":
        for statement in COUNTING_DROP:
            schema_editor.execute(statement, params=None)


def add_counting_on_sqlite(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "sqlite":
        for statement in _counting():
            schema_editor.execute(statement, params=None)


def add_triggers(apps: Any, schema_editor: Any) -> None:
    add_counting_on_sqlite(apps, schema_editor)
    for statement in POSTGRES if schema_editor.connection.vendor == "postgresql" else SQLITE:
        schema_editor.execute(statement, params=None)  # no parameters: the SQL's % is the modulo


def drop_triggers(apps: Any, schema_editor: Any) -> None:
    for statement in POSTGRES_DROP if schema_editor.connection.vendor == "postgresql" else SQLITE_DROP:
        schema_editor.execute(statement, params=None)
    drop_counting_on_sqlite(apps, schema_editor)


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0015_campaign_tallies_striped"),
    ]

    operations = [
        migrations.RunPython(drop_counting_on_sqlite, add_counting_on_sqlite),
        migrations.AddField(
            model_name="campaigntally",
            name="changes",
            field=models.BigIntegerField(
                db_default=0, help_text="Writes that can change an analysis (only grows): the dashboard's fingerprint."
            ),
        ),
        migrations.AddField(
            model_name="campaigntally",
            name="changed_at",
            field=models.DateTimeField(blank=True, null=True, help_text="When such a write last happened."),
        ),
        migrations.RunPython(add_triggers, drop_triggers),
    ]
