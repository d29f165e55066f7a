"""Per-campaign counts of pairs, checks, judgements and volunteers, kept by database triggers.

PostgreSQL: statement-level triggers over the transition tables (one upsert per statement, so a
bulk import of a million pairs adds one grouped row, not a million updates); deletes take rows
off with an UPDATE (never an upsert: a campaign being deleted must not get its row back).
SQLite (development and the default test run): row-level triggers doing the same.
The counts of the campaigns already there are filled in by one COUNT per table.
"""

from typing import Any

import django.db.models.deletion
from django.db import migrations, models

TALLY = "annotate_campaigntally"

POSTGRES = [
    f"""
CREATE FUNCTION annotate_tally_pairs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO {TALLY} AS t (campaign_id, pairs, checks, judgements, volunteers)
    SELECT campaign_id, count(*) FILTER (WHERE NOT is_training AND NOT is_check),
           count(*) FILTER (WHERE is_check AND NOT is_training), 0, 0
    FROM changed GROUP BY campaign_id ORDER BY campaign_id
    ON CONFLICT (campaign_id) DO UPDATE SET pairs = t.pairs + EXCLUDED.pairs, checks = t.checks + EXCLUDED.checks;
  ELSE
    UPDATE {TALLY} t SET pairs = t.pairs - d.pairs, checks = t.checks - d.checks
    FROM (SELECT campaign_id, count(*) FILTER (WHERE NOT is_training AND NOT is_check) AS pairs,
                 count(*) FILTER (WHERE is_check AND NOT is_training) AS checks
          FROM changed GROUP BY campaign_id) d
    WHERE t.campaign_id = d.campaign_id;
  END IF;
  RETURN NULL;
END $$""",
    """
CREATE FUNCTION annotate_tally_pair_moved() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  moved bigint := 0;  -- the pair's corpus judgements, when it changes campaign
BEGIN
  IF OLD.campaign_id <> NEW.campaign_id THEN
    SELECT count(*) INTO moved FROM annotate_judgement WHERE pair_id = NEW.id AND NOT is_training AND NOT is_check;
  END IF;
  UPDATE annotate_campaigntally SET
    pairs = pairs - (NOT OLD.is_training AND NOT OLD.is_check)::int,
    checks = checks - (OLD.is_check AND NOT OLD.is_training)::int,
    judgements = judgements - moved
  WHERE campaign_id = OLD.campaign_id;
  INSERT INTO annotate_campaigntally AS t (campaign_id, pairs, checks, judgements, volunteers)
  VALUES (NEW.campaign_id, (NOT NEW.is_training AND NOT NEW.is_check)::int,
          (NEW.is_check AND NOT NEW.is_training)::int, moved, 0)
  ON CONFLICT (campaign_id) DO UPDATE SET pairs = t.pairs + EXCLUDED.pairs, checks = t.checks + EXCLUDED.checks,
    judgements = t.judgements + EXCLUDED.judgements;
  RETURN NULL;
END $$""",
    f"""
CREATE FUNCTION annotate_tally_judgements() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO {TALLY} AS t (campaign_id, pairs, checks, judgements, volunteers)
    SELECT p.campaign_id, 0, 0, count(*), 0
    FROM changed j JOIN annotate_pair p ON p.id = j.pair_id
    WHERE NOT j.is_training AND NOT j.is_check GROUP BY p.campaign_id ORDER BY p.campaign_id
    ON CONFLICT (campaign_id) DO UPDATE SET judgements = t.judgements + EXCLUDED.judgements;
  ELSE
    UPDATE {TALLY} t SET judgements = t.judgements - d.n
    FROM (SELECT p.campaign_id, count(*) AS n FROM changed j JOIN annotate_pair p ON p.id = j.pair_id
          WHERE NOT j.is_training AND NOT j.is_check GROUP BY p.campaign_id) d
    WHERE t.campaign_id = d.campaign_id;
  END IF;
  RETURN NULL;
END $$""",
    f"""
CREATE FUNCTION annotate_tally_volunteers() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO {TALLY} AS t (campaign_id, pairs, checks, judgements, volunteers)
    SELECT campaign_id, 0, 0, 0, count(*) FROM changed GROUP BY campaign_id ORDER BY campaign_id
    ON CONFLICT (campaign_id) DO UPDATE SET volunteers = t.volunteers + EXCLUDED.volunteers;
  ELSE
    UPDATE {TALLY} t SET volunteers = t.volunteers - d.n
    FROM (SELECT campaign_id, count(*) AS n FROM changed GROUP BY campaign_id) d
    WHERE t.campaign_id = d.campaign_id;
  END IF;
  RETURN NULL;
END $$""",
    *[
        f"CREATE TRIGGER {table}_tally_{op.lower()} AFTER {op} ON {table} REFERENCING {age} TABLE AS changed"
        f" FOR EACH STATEMENT EXECUTE FUNCTION {function}()"
        for table, function in (
            ("annotate_pair", "annotate_tally_pairs"),
            ("annotate_judgement", "annotate_tally_judgements"),
            ("annotate_volunteer", "annotate_tally_volunteers"),
        )
        for op, age in (("INSERT", "NEW"), ("DELETE", "OLD"))
    ],
    # A pair moved to another campaign or made a check: row-level, and only when that happens
    # (the WHEN is tested without calling the function: the judgement counter's updates cost nothing).
    "CREATE TRIGGER annotate_pair_tally_update AFTER UPDATE ON annotate_pair FOR EACH ROW"
    " WHEN (OLD.campaign_id <> NEW.campaign_id OR OLD.is_training <> NEW.is_training OR OLD.is_check <> NEW.is_check)"
    " EXECUTE FUNCTION annotate_tally_pair_moved()",
]

POSTGRES_DROP = [
    *[
        f"DROP TRIGGER IF EXISTS {table}_tally_{op} ON {table}"
        for table in ("annotate_pair", "annotate_judgement", "annotate_volunteer")
        for op in ("insert", "delete", "update")
    ],
    *[
        f"DROP FUNCTION IF EXISTS {name}()"
        for name in (
            "annotate_tally_pairs",
            "annotate_tally_pair_moved",
            "annotate_tally_judgements",
            "annotate_tally_volunteers",
        )
    ],
]


def _sqlite_upsert(campaign: str, columns: str, values: str) -> str:
    sets = ", ".join(f"{column} = {column} + excluded.{column}" for column in columns.split(", "))
    zeros = {"pairs": "0", "checks": "0", "judgements": "0", "volunteers": "0"}
    given = dict(zip(columns.split(", "), values.split(", "), strict=True))
    row = ", ".join(given.get(column, zero) for column, zero in zeros.items())
    return (
        f"INSERT INTO {TALLY} (campaign_id, pairs, checks, judgements, volunteers) SELECT {campaign}, {row}"
        # "WHERE true": SQLite's parser needs a WHERE before ON CONFLICT in INSERT ... SELECT.
        f" WHERE true ON CONFLICT (campaign_id) DO UPDATE SET {sets};"
    )


def _sqlite_take(campaign: str, columns: str, values: str) -> str:
    sets = ", ".join(
        f"{column} = {column} - ({value})"
        for column, value in zip(columns.split(", "), values.split(", "), strict=True)
    )
    return f"UPDATE {TALLY} SET {sets} WHERE campaign_id = {campaign};"


PAIR_NEW = "(NOT NEW.is_training AND NOT NEW.is_check), (NEW.is_check AND NOT NEW.is_training)"
PAIR_OLD = "(NOT OLD.is_training AND NOT OLD.is_check), (OLD.is_check AND NOT OLD.is_training)"
# The corpus judgements a pair takes along when it changes campaign.
MOVED = (
    "(CASE WHEN OLD.campaign_id <> NEW.campaign_id THEN (SELECT count(*) FROM annotate_judgement"
    " WHERE pair_id = NEW.id AND NOT is_training AND NOT is_check) ELSE 0 END)"
)
JUDGEMENT_CAMPAIGN = "(SELECT campaign_id FROM annotate_pair WHERE id = {row}.pair_id)"

SQLITE = [
    f"CREATE TRIGGER annotate_pair_tally_insert AFTER INSERT ON annotate_pair BEGIN"
    f" {_sqlite_upsert('NEW.campaign_id', 'pairs, checks', PAIR_NEW)} END",
    f"CREATE TRIGGER annotate_pair_tally_delete AFTER DELETE ON annotate_pair BEGIN"
    f" {_sqlite_take('OLD.campaign_id', 'pairs, checks', PAIR_OLD)} END",
    f"CREATE TRIGGER annotate_pair_tally_update AFTER UPDATE ON annotate_pair"
    f" WHEN OLD.campaign_id <> NEW.campaign_id OR OLD.is_training <> NEW.is_training OR OLD.is_check <> NEW.is_check"
    f" BEGIN {_sqlite_take('OLD.campaign_id', 'pairs, checks, judgements', f'{PAIR_OLD}, {MOVED}')}"
    f" {_sqlite_upsert('NEW.campaign_id', 'pairs, checks, judgements', f'{PAIR_NEW}, {MOVED}')} END",
    f"CREATE TRIGGER annotate_judgement_tally_insert AFTER INSERT ON annotate_judgement"
    f" WHEN NOT NEW.is_training AND NOT NEW.is_check BEGIN"
    f" {_sqlite_upsert(JUDGEMENT_CAMPAIGN.format(row='NEW'), 'judgements', '1')} END",
    f"CREATE TRIGGER annotate_judgement_tally_delete AFTER DELETE ON annotate_judgement"
    f" WHEN NOT OLD.is_training AND NOT OLD.is_check BEGIN"
    f" {_sqlite_take(JUDGEMENT_CAMPAIGN.format(row='OLD'), 'judgements', '1')} END",
    f"CREATE TRIGGER annotate_volunteer_tally_insert AFTER INSERT ON annotate_volunteer BEGIN"
    f" {_sqlite_upsert('NEW.campaign_id', 'volunteers', '1')} END",
    f"CREATE TRIGGER annotate_volunteer_tally_delete AFTER DELETE ON annotate_volunteer BEGIN"
    f" {_sqlite_take('OLD.campaign_id', 'volunteers', '1')} END",
]

SQLITE_DROP = [
    f"DROP TRIGGER IF EXISTS {table}_tally_{op}"
    for table in ("annotate_pair", "annotate_judgement", "annotate_volunteer")
    for op in ("insert", "delete", "update")
]

# The campaigns already there: one COUNT per table.
BACKFILL = f"""
INSERT INTO {TALLY} (campaign_id, pairs, checks, judgements, volunteers)
SELECT c.id,
  (SELECT count(*) FROM annotate_pair p WHERE p.campaign_id = c.id AND NOT p.is_training AND NOT p.is_check),
  (SELECT count(*) FROM annotate_pair p WHERE p.campaign_id = c.id AND p.is_check AND NOT p.is_training),
  (SELECT count(*) FROM annotate_judgement j JOIN annotate_pair p ON p.id = j.pair_id
   WHERE p.campaign_id = c.id AND NOT j.is_training AND NOT j.is_check),
  (SELECT count(*) FROM annotate_volunteer v WHERE v.campaign_id = c.id)
FROM annotate_campaign c
"""


def add_triggers(apps: Any, schema_editor: Any) -> None:
    statements = POSTGRES if schema_editor.connection.vendor == "postgresql" else SQLITE
    for statement in statements:
        schema_editor.execute(statement)
    schema_editor.execute(BACKFILL)


def drop_triggers(apps: Any, schema_editor: Any) -> None:
    statements = POSTGRES_DROP if schema_editor.connection.vendor == "postgresql" else SQLITE_DROP
    for statement in statements:
        schema_editor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0013_adaptive_selection"),
    ]

    operations = [
        migrations.CreateModel(
            name="CampaignTally",
            fields=[
                (
                    "campaign",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="tally",
                        serialize=False,
                        to="annotate.campaign",
                    ),
                ),
                (
                    "pairs",
                    models.BigIntegerField(default=0, help_text="Corpus pairs: neither training nor attention checks."),
                ),
                ("checks", models.BigIntegerField(default=0, help_text="Attention-check pairs (not training).")),
                (
                    "judgements",
                    models.BigIntegerField(
                        default=0, help_text="Judgements of corpus pairs (not training, not checks)."
                    ),
                ),
                ("volunteers", models.BigIntegerField(default=0, help_text="Volunteers who started the campaign.")),
            ],
        ),
        migrations.RunPython(add_triggers, drop_triggers),
    ]
