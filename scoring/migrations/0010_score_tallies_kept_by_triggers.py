"""Done and failed scores per campaign and metric configuration, kept by database triggers.

As ``annotate``'s campaign tallies: statement-level triggers over the transition tables on
PostgreSQL, row-level ones on SQLite; a score whose status changes (a recomputation that
failed, a failure scored again) moves from one counter to the other. Scores of training pairs
are not counted (they are never scored). The scores already there: one grouped COUNT.
"""

from typing import Any

import django.db.models.deletion
from django.db import migrations, models

TALLY = "scoring_scoretally"
UPSERT = (
    " ON CONFLICT (campaign_id, metric_config_id) DO UPDATE SET done = {t}done + excluded.done,"
    " failed = {t}failed + excluded.failed"
)

POSTGRES = [
    f"""
CREATE FUNCTION scoring_tally_scores() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO {TALLY} AS t (campaign_id, metric_config_id, done, failed)
    SELECT p.campaign_id, s.metric_config_id, count(*) FILTER (WHERE s.status = 'done'),
           count(*) FILTER (WHERE s.status = 'failed')
    FROM changed s JOIN annotate_pair p ON p.id = s.pair_id WHERE NOT p.is_training
    GROUP BY p.campaign_id, s.metric_config_id ORDER BY p.campaign_id, s.metric_config_id
    {UPSERT.format(t="t.")};
  ELSE
    UPDATE {TALLY} t SET done = t.done - d.done, failed = t.failed - d.failed
    FROM (SELECT p.campaign_id, s.metric_config_id, count(*) FILTER (WHERE s.status = 'done') AS done,
                 count(*) FILTER (WHERE s.status = 'failed') AS failed
          FROM changed s JOIN annotate_pair p ON p.id = s.pair_id WHERE NOT p.is_training
          GROUP BY p.campaign_id, s.metric_config_id) d
    WHERE t.campaign_id = d.campaign_id AND t.metric_config_id = d.metric_config_id;
  END IF;
  RETURN NULL;
END $$""",
    f"""
CREATE FUNCTION scoring_tally_score_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE {TALLY} t SET done = t.done - (OLD.status = 'done')::int, failed = t.failed - (OLD.status = 'failed')::int
  FROM annotate_pair p
  WHERE p.id = OLD.pair_id AND NOT p.is_training AND t.campaign_id = p.campaign_id
    AND t.metric_config_id = OLD.metric_config_id;
  INSERT INTO {TALLY} AS t (campaign_id, metric_config_id, done, failed)
  SELECT p.campaign_id, NEW.metric_config_id, (NEW.status = 'done')::int, (NEW.status = 'failed')::int
  FROM annotate_pair p WHERE p.id = NEW.pair_id AND NOT p.is_training
  {UPSERT.format(t="t.")};
  RETURN NULL;
END $$""",
    f"""
CREATE FUNCTION scoring_tally_pair_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE {TALLY} t SET done = t.done - d.done, failed = t.failed - d.failed
  FROM (SELECT metric_config_id, count(*) FILTER (WHERE status = 'done') AS done,
               count(*) FILTER (WHERE status = 'failed') AS failed
        FROM scoring_score WHERE pair_id = OLD.id GROUP BY metric_config_id) d
  WHERE NOT OLD.is_training AND t.campaign_id = OLD.campaign_id AND t.metric_config_id = d.metric_config_id;
  INSERT INTO {TALLY} AS t (campaign_id, metric_config_id, done, failed)
  SELECT NEW.campaign_id, metric_config_id, count(*) FILTER (WHERE status = 'done'),
         count(*) FILTER (WHERE status = 'failed')
  FROM scoring_score WHERE pair_id = NEW.id AND NOT NEW.is_training GROUP BY metric_config_id
  {UPSERT.format(t="t.")};
  RETURN NULL;
END $$""",
    # A pair moved to another campaign, or made (or no longer) a training pair, takes its scores along.
    "CREATE TRIGGER scoring_pair_tally_update AFTER UPDATE ON annotate_pair FOR EACH ROW"
    " WHEN (OLD.campaign_id <> NEW.campaign_id OR OLD.is_training <> NEW.is_training)"
    " EXECUTE FUNCTION scoring_tally_pair_moved()",
    *[
        f"CREATE TRIGGER scoring_score_tally_{op.lower()} AFTER {op} ON scoring_score"
        f" REFERENCING {age} TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION scoring_tally_scores()"
        for op, age in (("INSERT", "NEW"), ("DELETE", "OLD"))
    ],
    "CREATE TRIGGER scoring_score_tally_update AFTER UPDATE ON scoring_score FOR EACH ROW"
    " WHEN (OLD.status <> NEW.status OR OLD.pair_id <> NEW.pair_id OR OLD.metric_config_id <> NEW.metric_config_id)"
    " EXECUTE FUNCTION scoring_tally_score_changed()",
]

POSTGRES_DROP = [
    *[f"DROP TRIGGER IF EXISTS scoring_score_tally_{op} ON scoring_score" for op in ("insert", "delete", "update")],
    "DROP TRIGGER IF EXISTS scoring_pair_tally_update ON annotate_pair",
    "DROP FUNCTION IF EXISTS scoring_tally_pair_moved()",
    "DROP FUNCTION IF EXISTS scoring_tally_scores()",
    "DROP FUNCTION IF EXISTS scoring_tally_score_changed()",
]

SQLITE_ADD = (
    f"INSERT INTO {TALLY} (campaign_id, metric_config_id, done, failed)"
    " SELECT p.campaign_id, NEW.metric_config_id, NEW.status = 'done', NEW.status = 'failed'"
    f" FROM annotate_pair p WHERE p.id = NEW.pair_id AND NOT p.is_training{UPSERT.format(t='')};"
)
SQLITE_TAKE = (
    f"UPDATE {TALLY} SET done = done - (OLD.status = 'done'), failed = failed - (OLD.status = 'failed')"
    " WHERE metric_config_id = OLD.metric_config_id AND campaign_id ="
    " (SELECT campaign_id FROM annotate_pair WHERE id = OLD.pair_id AND NOT is_training);"
)

SQLITE = [
    f"CREATE TRIGGER scoring_score_tally_insert AFTER INSERT ON scoring_score BEGIN {SQLITE_ADD} END",
    f"CREATE TRIGGER scoring_score_tally_delete AFTER DELETE ON scoring_score BEGIN {SQLITE_TAKE} END",
    "CREATE TRIGGER scoring_score_tally_update AFTER UPDATE ON scoring_score"
    " WHEN OLD.status <> NEW.status OR OLD.pair_id <> NEW.pair_id OR OLD.metric_config_id <> NEW.metric_config_id"
    f" BEGIN {SQLITE_TAKE} {SQLITE_ADD} END",
    "CREATE TRIGGER scoring_pair_tally_update AFTER UPDATE ON annotate_pair"
    " WHEN OLD.campaign_id <> NEW.campaign_id OR OLD.is_training <> NEW.is_training BEGIN"
    f" UPDATE {TALLY} SET"
    " done = done - (SELECT count(*) FROM scoring_score s WHERE s.pair_id = OLD.id"
    f" AND s.metric_config_id = {TALLY}.metric_config_id AND s.status = 'done'),"
    " failed = failed - (SELECT count(*) FROM scoring_score s WHERE s.pair_id = OLD.id"
    f" AND s.metric_config_id = {TALLY}.metric_config_id AND s.status = 'failed')"
    " WHERE campaign_id = OLD.campaign_id AND NOT OLD.is_training;"
    f" INSERT INTO {TALLY} (campaign_id, metric_config_id, done, failed)"
    " SELECT NEW.campaign_id, metric_config_id, sum(status = 'done'), sum(status = 'failed') FROM scoring_score"
    f" WHERE pair_id = NEW.id AND NOT NEW.is_training GROUP BY metric_config_id{UPSERT.format(t='')}; END",
]

SQLITE_DROP = [
    "DROP TRIGGER IF EXISTS scoring_pair_tally_update",
    *[f"DROP TRIGGER IF EXISTS scoring_score_tally_{op}" for op in ("insert", "delete", "update")],
]

BACKFILL = f"""
INSERT INTO {TALLY} (campaign_id, metric_config_id, done, failed)
SELECT p.campaign_id, s.metric_config_id, sum(CASE WHEN s.status = 'done' THEN 1 ELSE 0 END),
       sum(CASE WHEN s.status = 'failed' THEN 1 ELSE 0 END)
FROM scoring_score s JOIN annotate_pair p ON p.id = s.pair_id WHERE NOT p.is_training
GROUP BY p.campaign_id, s.metric_config_id
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
        ("annotate", "0014_campaign_tallies_kept_by_triggers"),
        ("scoring", "0009_stopping_rule"),
    ]

    operations = [
        migrations.CreateModel(
            name="ScoreTally",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("done", models.BigIntegerField(default=0)),
                ("failed", models.BigIntegerField(default=0)),
                (
                    "campaign",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="score_tallies",
                        to="annotate.campaign",
                    ),
                ),
                (
                    "metric_config",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="tallies", to="scoring.metricconfig"
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        fields=("campaign", "metric_config"), name="one_score_tally_per_campaign_config"
                    )
                ],
            },
        ),
        migrations.RunPython(add_triggers, drop_triggers),
    ]
