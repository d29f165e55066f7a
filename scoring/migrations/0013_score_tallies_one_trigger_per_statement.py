"""One trigger per statement keeps the score counts and the change counter, rows in order.

As ``annotate``'s ``campaign_tallies_one_trigger_per_statement``: the counting triggers of
``score_tallies_kept_by_triggers`` (a row-level one on updates, which locks a tally row per
score in the order the scores were written) and the change counters of ``score_change_counters``
become one statement-level function per table event, which sums a statement's scores per
(campaign, configuration) and writes each tally row once, in that order (deletes: the rows
locked in that order, then updated, never inserted). Two workers storing the same
configurations' scores for several campaigns at once then queue instead of deadlocking.
PostgreSQL only; SQLite's row-level triggers stay.
"""

import importlib
from typing import Any

from django.db import migrations

TALLY = "scoring_scoretally"
COLUMNS = "campaign_id, metric_config_id, done, failed, changes, changed_at"


def rows(table: str, alias: str, sign: str, changes: str) -> str:
    """(c, m, done, failed, changes) of each score of ``table`` (training pairs' scores are not counted)."""
    return (
        f"SELECT p.campaign_id AS c, {alias}.metric_config_id AS m,"
        f" {sign}(({alias}.status = 'done') AND NOT p.is_training)::int AS done,"
        f" {sign}(({alias}.status = 'failed') AND NOT p.is_training)::int AS failed, {changes} AS changes"
        f" FROM {table} {alias} JOIN annotate_pair p ON p.id = {alias}.pair_id"
    )


def add(deltas: str) -> str:
    return f"""
    INSERT INTO {TALLY} AS t ({COLUMNS})
    SELECT c, m, sum(done), sum(failed), sum(changes), CASE WHEN sum(changes) > 0 THEN now() END
    FROM ({deltas}) d GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (campaign_id, metric_config_id) DO UPDATE SET
      done = t.done + EXCLUDED.done, failed = t.failed + EXCLUDED.failed, changes = t.changes + EXCLUDED.changes,
      changed_at = CASE WHEN EXCLUDED.changes > 0 THEN greatest(t.changed_at, EXCLUDED.changed_at)
                        ELSE t.changed_at END;"""


def take(deltas: str) -> str:
    return f"""
    PERFORM 1 FROM {TALLY} t JOIN (SELECT DISTINCT c, m FROM ({deltas}) d) k
      ON t.campaign_id = k.c AND t.metric_config_id = k.m
    ORDER BY t.campaign_id, t.metric_config_id FOR UPDATE OF t;
    UPDATE {TALLY} t SET done = t.done - d.done, failed = t.failed - d.failed, changes = t.changes + d.changes,
      changed_at = greatest(t.changed_at, now())
    FROM (SELECT c, m, sum(done) AS done, sum(failed) AS failed, sum(changes) AS changes
          FROM ({deltas}) d GROUP BY 1, 2) d
    WHERE t.campaign_id = d.c AND t.metric_config_id = d.m;"""


WRITTEN = rows("changed", "s", "", "1")
# An update: the old scores' counts taken off, the new ones' added (they cancel when the status
# stayed), and every updated score counted as a change where it is now.
UPDATED = f"{rows('old_rows', 'o', '-', '0')} UNION ALL {rows('new_rows', 'w', '', '1')}"

POSTGRES = [
    f"""
CREATE FUNCTION scoring_score_tallies() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN{add(WRITTEN)}
  ELSE{take(WRITTEN)}
  END IF;
  RETURN NULL;
END $$""",
    f"""
CREATE FUNCTION scoring_score_tallies_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN{add(UPDATED)}
  RETURN NULL;
END $$""",
    "CREATE TRIGGER scoring_score_tallies_insert AFTER INSERT ON scoring_score REFERENCING NEW TABLE AS changed"
    " FOR EACH STATEMENT EXECUTE FUNCTION scoring_score_tallies()",
    "CREATE TRIGGER scoring_score_tallies_delete AFTER DELETE ON scoring_score REFERENCING OLD TABLE AS changed"
    " FOR EACH STATEMENT EXECUTE FUNCTION scoring_score_tallies()",
    "CREATE TRIGGER scoring_score_tallies_update AFTER UPDATE ON scoring_score"
    " REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT"
    " EXECUTE FUNCTION scoring_score_tallies_updated()",
]
POSTGRES_DROP = [
    *[f"DROP TRIGGER IF EXISTS scoring_score_tallies_{op} ON scoring_score" for op in ("insert", "delete", "update")],
    "DROP FUNCTION IF EXISTS scoring_score_tallies()",
    "DROP FUNCTION IF EXISTS scoring_score_tallies_updated()",
]
SEPARATE_DROP = [
    *[f"DROP TRIGGER IF EXISTS scoring_score_tally_{op} ON scoring_score" for op in ("insert", "delete", "update")],
    "DROP FUNCTION IF EXISTS scoring_tally_scores()",
    "DROP FUNCTION IF EXISTS scoring_tally_score_changed()",
]


def _counting() -> Any:
    return importlib.import_module("scoring.migrations.0010_score_tallies_kept_by_triggers")


def _changes() -> Any:
    return importlib.import_module("scoring.migrations.0012_score_change_counters")


def merge(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        for statement in [*SEPARATE_DROP, *_changes().POSTGRES_DROP, *POSTGRES]:
            schema_editor.execute(statement, params=None)


def separate(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        # The pair-moved trigger of the counting migration is still there: only the scores' again.
        counting = [s for s in _counting().POSTGRES if "pair_moved" not in s and "scoring_pair_tally" not in s]
        for statement in [*POSTGRES_DROP, *counting, *_changes().POSTGRES]:
            schema_editor.execute(statement, params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("scoring", "0012_score_change_counters"),
        ("annotate", "0018_campaign_tallies_one_trigger_per_statement"),
    ]

    operations = [migrations.RunPython(merge, separate)]
