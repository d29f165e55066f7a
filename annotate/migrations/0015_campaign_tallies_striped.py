"""Campaign tallies spread over 16 stripes, so that concurrent answers do not wait on one row.

With one tally row per campaign, every answer (a judgement insert) and every new volunteer
updated the same row and held its lock until the answer's transaction committed: all the
volunteers of a campaign answering at once were served one after the other. The counts are now
kept in rows keyed (campaign, stripe): a judgement and a volunteer count in the stripe of the
volunteer's id modulo 16, a pair in the stripe of its own id modulo 16 (a bulk import touches
at most 16 rows, in order). A row is always taken off the stripe it was added to (the stripe is
a function of the row's ids, which do not change), so the deletes can keep to UPDATE (a
campaign being deleted never gets a row back) and the sum of a campaign's stripes stays exact;
one stripe may go negative (a pair's judgements moved in stripes their volunteers chose).

The triggers of ``campaign_tallies_kept_by_triggers`` are dropped and replaced (that migration
is left as it was: it may already be applied); the table is made again and filled in by one
grouped COUNT per table.
"""

import importlib
from typing import Any

import django.db.models.deletion
from django.db import migrations, models

TALLY = "annotate_campaigntally"
STRIPES = 16  # CampaignTally.STRIPES, frozen here as the triggers were written with it
COLUMNS = "campaign_id, stripe, pairs, checks, judgements, volunteers"
CONFLICT = "ON CONFLICT (campaign_id, stripe) DO UPDATE SET"

PAIRS_OF = "count(*) FILTER (WHERE NOT is_training AND NOT is_check)"
CHECKS_OF = "count(*) FILTER (WHERE is_check AND NOT is_training)"
# A pair's corpus judgements per stripe (the stripe of their volunteer): what a pair moved to
# another campaign takes along.
PAIR_JUDGEMENTS = (
    f"SELECT volunteer_id % {STRIPES} AS stripe, count(*) AS n FROM annotate_judgement"
    " WHERE pair_id = NEW.id AND NOT is_training AND NOT is_check GROUP BY 1"
)

POSTGRES = [
    f"""
CREATE FUNCTION annotate_tally_pairs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO {TALLY} AS t ({COLUMNS})
    SELECT campaign_id, id % {STRIPES}, {PAIRS_OF}, {CHECKS_OF}, 0, 0
    FROM changed GROUP BY 1, 2 ORDER BY 1, 2
    {CONFLICT} pairs = t.pairs + EXCLUDED.pairs, checks = t.checks + EXCLUDED.checks;
  ELSE
    UPDATE {TALLY} t SET pairs = t.pairs - d.pairs, checks = t.checks - d.checks
    FROM (SELECT campaign_id, id % {STRIPES} AS stripe, {PAIRS_OF} AS pairs, {CHECKS_OF} AS checks
          FROM changed GROUP BY 1, 2) d
    WHERE t.campaign_id = d.campaign_id AND t.stripe = d.stripe;
  END IF;
  RETURN NULL;
END $$""",
    f"""
CREATE FUNCTION annotate_tally_pair_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE {TALLY} SET
    pairs = pairs - (NOT OLD.is_training AND NOT OLD.is_check)::int,
    checks = checks - (OLD.is_check AND NOT OLD.is_training)::int
  WHERE campaign_id = OLD.campaign_id AND stripe = OLD.id % {STRIPES};
  INSERT INTO {TALLY} AS t ({COLUMNS})
  VALUES (NEW.campaign_id, NEW.id % {STRIPES}, (NOT NEW.is_training AND NOT NEW.is_check)::int,
          (NEW.is_check AND NOT NEW.is_training)::int, 0, 0)
  {CONFLICT} pairs = t.pairs + EXCLUDED.pairs, checks = t.checks + EXCLUDED.checks;
  IF OLD.campaign_id <> NEW.campaign_id THEN
    UPDATE {TALLY} t SET judgements = t.judgements - d.n FROM ({PAIR_JUDGEMENTS}) d
    WHERE t.campaign_id = OLD.campaign_id AND t.stripe = d.stripe;
    INSERT INTO {TALLY} AS t ({COLUMNS})
    SELECT NEW.campaign_id, d.stripe, 0, 0, d.n, 0 FROM ({PAIR_JUDGEMENTS}) d ORDER BY d.stripe
    {CONFLICT} judgements = t.judgements + EXCLUDED.judgements;
  END IF;
  RETURN NULL;
END $$""",
    f"""
CREATE FUNCTION annotate_tally_judgements() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO {TALLY} AS t ({COLUMNS})
    SELECT p.campaign_id, j.volunteer_id % {STRIPES}, 0, 0, count(*), 0
    FROM changed j JOIN annotate_pair p ON p.id = j.pair_id
    WHERE NOT j.is_training AND NOT j.is_check GROUP BY 1, 2 ORDER BY 1, 2
    {CONFLICT} judgements = t.judgements + EXCLUDED.judgements;
  ELSE
    UPDATE {TALLY} t SET judgements = t.judgements - d.n
    FROM (SELECT p.campaign_id, j.volunteer_id % {STRIPES} AS stripe, count(*) AS n
          FROM changed j JOIN annotate_pair p ON p.id = j.pair_id
          WHERE NOT j.is_training AND NOT j.is_check GROUP BY 1, 2) d
    WHERE t.campaign_id = d.campaign_id AND t.stripe = d.stripe;
  END IF;
  RETURN NULL;
END $$""",
    f"""
CREATE FUNCTION annotate_tally_volunteers() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO {TALLY} AS t ({COLUMNS})
    SELECT campaign_id, id % {STRIPES}, 0, 0, 0, count(*) FROM changed GROUP BY 1, 2 ORDER BY 1, 2
    {CONFLICT} volunteers = t.volunteers + EXCLUDED.volunteers;
  ELSE
    UPDATE {TALLY} t SET volunteers = t.volunteers - d.n
    FROM (SELECT campaign_id, id % {STRIPES} AS stripe, count(*) AS n FROM changed GROUP BY 1, 2) d
    WHERE t.campaign_id = d.campaign_id AND t.stripe = d.stripe;
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
    "CREATE TRIGGER annotate_pair_tally_update AFTER UPDATE ON annotate_pair FOR EACH ROW"
    " WHEN (OLD.campaign_id <> NEW.campaign_id OR OLD.is_training <> NEW.is_training OR OLD.is_check <> NEW.is_check)"
    " EXECUTE FUNCTION annotate_tally_pair_moved()",
]


def _sqlite_upsert(campaign: str, stripe: str, columns: str, values: str, tail: str = "WHERE true") -> str:
    sets = ", ".join(f"{column} = {column} + excluded.{column}" for column in columns.split(", "))
    zeros = {"pairs": "0", "checks": "0", "judgements": "0", "volunteers": "0"}
    given = dict(zip(columns.split(", "), values.split(", "), strict=True))
    row = ", ".join(given.get(column, zero) for column, zero in zeros.items())
    # "WHERE true": SQLite's parser needs a WHERE before ON CONFLICT in INSERT ... SELECT.
    return f"INSERT INTO {TALLY} ({COLUMNS}) SELECT {campaign}, {stripe}, {row} {tail} {CONFLICT} {sets};"


def _sqlite_take(campaign: str, stripe: str, columns: str, values: str) -> str:
    sets = ", ".join(
        f"{column} = {column} - ({value})"
        for column, value in zip(columns.split(", "), values.split(", "), strict=True)
    )
    return f"UPDATE {TALLY} SET {sets} WHERE campaign_id = {campaign} AND stripe = {stripe};"


PAIR_NEW = "(NOT NEW.is_training AND NOT NEW.is_check), (NEW.is_check AND NOT NEW.is_training)"
PAIR_OLD = "(NOT OLD.is_training AND NOT OLD.is_check), (OLD.is_check AND NOT OLD.is_training)"
JUDGEMENT_CAMPAIGN = "(SELECT campaign_id FROM annotate_pair WHERE id = {row}.pair_id)"
MOVED_FROM = (
    "FROM annotate_judgement j WHERE j.pair_id = NEW.id AND NOT j.is_training AND NOT j.is_check"
    " AND OLD.campaign_id <> NEW.campaign_id"
)

SQLITE = [
    f"CREATE TRIGGER annotate_pair_tally_insert AFTER INSERT ON annotate_pair BEGIN"
    f" {_sqlite_upsert('NEW.campaign_id', f'NEW.id % {STRIPES}', 'pairs, checks', PAIR_NEW)} END",
    f"CREATE TRIGGER annotate_pair_tally_delete AFTER DELETE ON annotate_pair BEGIN"
    f" {_sqlite_take('OLD.campaign_id', f'OLD.id % {STRIPES}', 'pairs, checks', PAIR_OLD)} END",
    f"CREATE TRIGGER annotate_pair_tally_update AFTER UPDATE ON annotate_pair"
    f" WHEN OLD.campaign_id <> NEW.campaign_id OR OLD.is_training <> NEW.is_training OR OLD.is_check <> NEW.is_check"
    f" BEGIN {_sqlite_take('OLD.campaign_id', f'OLD.id % {STRIPES}', 'pairs, checks', PAIR_OLD)}"
    f" {_sqlite_upsert('NEW.campaign_id', f'NEW.id % {STRIPES}', 'pairs, checks', PAIR_NEW)}"
    # The pair's corpus judgements, stripe by stripe, when it changes campaign.
    f" UPDATE {TALLY} SET judgements = judgements - (SELECT count(*) {MOVED_FROM}"
    f" AND j.volunteer_id % {STRIPES} = {TALLY}.stripe) WHERE campaign_id = OLD.campaign_id;"
    f" {_sqlite_upsert('NEW.campaign_id', f'j.volunteer_id % {STRIPES}', 'judgements', 'count(*)', f'{MOVED_FROM} GROUP BY 2')}"
    " END",
    f"CREATE TRIGGER annotate_judgement_tally_insert AFTER INSERT ON annotate_judgement"
    f" WHEN NOT NEW.is_training AND NOT NEW.is_check BEGIN"
    f" {_sqlite_upsert(JUDGEMENT_CAMPAIGN.format(row='NEW'), f'NEW.volunteer_id % {STRIPES}', 'judgements', '1')}"
    " END",
    f"CREATE TRIGGER annotate_judgement_tally_delete AFTER DELETE ON annotate_judgement"
    f" WHEN NOT OLD.is_training AND NOT OLD.is_check BEGIN"
    f" {_sqlite_take(JUDGEMENT_CAMPAIGN.format(row='OLD'), f'OLD.volunteer_id % {STRIPES}', 'judgements', '1')}"
    " END",
    f"CREATE TRIGGER annotate_volunteer_tally_insert AFTER INSERT ON annotate_volunteer BEGIN"
    f" {_sqlite_upsert('NEW.campaign_id', f'NEW.id % {STRIPES}', 'volunteers', '1')} END",
    f"CREATE TRIGGER annotate_volunteer_tally_delete AFTER DELETE ON annotate_volunteer BEGIN"
    f" {_sqlite_take('OLD.campaign_id', f'OLD.id % {STRIPES}', 'volunteers', '1')} END",
]

# The campaigns already there: one grouped COUNT per table, each row in its stripe.
BACKFILL = f"""
INSERT INTO {TALLY} ({COLUMNS})
SELECT campaign_id, stripe, sum(pairs), sum(checks), sum(judgements), sum(volunteers) FROM (
  SELECT campaign_id, id % {STRIPES} AS stripe,
         sum(CASE WHEN NOT is_training AND NOT is_check THEN 1 ELSE 0 END) AS pairs,
         sum(CASE WHEN is_check AND NOT is_training THEN 1 ELSE 0 END) AS checks,
         0 AS judgements, 0 AS volunteers
  FROM annotate_pair GROUP BY 1, 2
  UNION ALL
  SELECT p.campaign_id, j.volunteer_id % {STRIPES}, 0, 0, count(*), 0
  FROM annotate_judgement j JOIN annotate_pair p ON p.id = j.pair_id
  WHERE NOT j.is_training AND NOT j.is_check GROUP BY 1, 2
  UNION ALL
  SELECT campaign_id, id % {STRIPES}, 0, 0, 0, count(*) FROM annotate_volunteer GROUP BY 1, 2
) counted GROUP BY campaign_id, stripe
"""


def _kept_by_triggers() -> Any:
    """The migration this one replaces the triggers of (its name starts with a digit)."""
    return importlib.import_module("annotate.migrations.0014_campaign_tallies_kept_by_triggers")


def drop_unstriped(apps: Any, schema_editor: Any) -> None:
    _kept_by_triggers().drop_triggers(apps, schema_editor)


def add_unstriped(apps: Any, schema_editor: Any) -> None:
    _kept_by_triggers().add_triggers(apps, schema_editor)


def add_striped(apps: Any, schema_editor: Any) -> None:
    statements = POSTGRES if schema_editor.connection.vendor == "postgresql" else SQLITE
    for statement in [*statements, BACKFILL]:
        schema_editor.execute(statement, params=None)  # no parameters: the SQL's % is the modulo


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0014_campaign_tallies_kept_by_triggers"),
    ]

    operations = [
        # The same trigger and function names: the old ones go first (their drop is reused).
        migrations.RunPython(drop_unstriped, add_unstriped),
        migrations.DeleteModel(name="CampaignTally"),
        migrations.CreateModel(
            name="CampaignTally",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "stripe",
                    models.SmallIntegerField(
                        help_text="Which of the campaign's rows: the written row's id modulo STRIPES."
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
                (
                    "campaign",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="tallies", to="annotate.campaign"
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(fields=("campaign", "stripe"), name="one_tally_per_campaign_stripe")
                ],
            },
        ),
        migrations.RunPython(add_striped, drop_unstriped),
    ]
