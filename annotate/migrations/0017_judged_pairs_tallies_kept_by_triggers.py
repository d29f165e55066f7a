"""Judged-pair tallies (pairs with at least N judgements, per campaign and stripe), kept by triggers.

The volunteers page and the progress figures need the judgements a campaign still lacks,
``Σ max(judges_per_pair − judgement_count, 0)`` over its corpus pairs: a walk over every pair
that lacks judges (690 ms of PostgreSQL at a million pairs). That is ``judges_per_pair × pairs
− Σ min(judgement_count, judges_per_pair)``, and the sum is the number of pairs with at least 1,
2, … up to ``judges_per_pair`` judgements: one tally row per (campaign, stripe, level) keeps
those counts, whatever the target, so an edit of ``judges_per_pair`` needs no recount.

``Pair.judgement_count`` is written by Python (the answer's signal, recounts, tests, raw SQL):
statement triggers on the pairs table follow every insert, delete and update of it (and of the
campaign and kind of a pair). Rows are locked in (campaign, stripe, level) order; a decrease is
an UPDATE only, never an insert, so a campaign being deleted (whose tally rows may already be
gone) never gets a row back. On SQLite nothing is kept: the embedded database counts the pairs.
Also an index of the active reservations (unanswered assignments by expiry).
"""

import django.db.models.deletion
from typing import Any

from django.db import migrations, models

LEVELS = "annotate_judgedpairstally"
STRIPES = 16  # JudgedPairsTally.STRIPES, frozen here as the triggers were written with it
CORPUS = "NOT {r}.is_training AND NOT {r}.is_check"
# One row per (pair, level it reaches): the pair counts once at each level 1 .. its count.
EXPANDED = (
    "SELECT {r}.campaign_id AS c, {r}.id % {n} AS s, g.level, {sign} AS n"
    " FROM {rows} CROSS JOIN LATERAL generate_series(1, {r}.judgement_count) AS g(level)"
    " WHERE NOT {r}.is_training AND NOT {r}.is_check"
)
UPSERT = (
    f"INSERT INTO {LEVELS} AS t (campaign_id, stripe, level, pairs)"
    " SELECT c, s, level, sum(n) FROM ({delta}) d GROUP BY 1, 2, 3 HAVING sum(n) > 0 ORDER BY 1, 2, 3"
    " ON CONFLICT (campaign_id, stripe, level) DO UPDATE SET pairs = t.pairs + EXCLUDED.pairs;"
)
TAKE = (
    f"UPDATE {LEVELS} t SET pairs = t.pairs + d.n"
    " FROM (SELECT c, s, level, sum(n) AS n FROM ({delta}) d GROUP BY 1, 2, 3 HAVING sum(n) < 0) d"
    " WHERE t.campaign_id = d.c AND t.stripe = d.s AND t.level = d.level;"
)
ADDED = EXPANDED.format(r="changed", n=STRIPES, sign="1", rows="changed")
REMOVED = EXPANDED.format(r="changed", n=STRIPES, sign="-1", rows="changed")
# An update: the old rows' levels taken off, the new rows' added; the sums cancel for the pairs
# whose count, campaign and kind stayed. (No join of the old rows to the new: on transition
# tables, without statistics, PostgreSQL may plan it as a nested loop, quadratic in the rows.)
UPDATED = " UNION ALL ".join(
    [
        EXPANDED.format(r="o", n=STRIPES, sign="-1", rows="old_rows o"),
        EXPANDED.format(r="w", n=STRIPES, sign="1", rows="new_rows w"),
    ]
)

POSTGRES = [
    f"""
CREATE FUNCTION annotate_judged_levels() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    {UPSERT.format(delta=ADDED)}
  ELSE
    {TAKE.format(delta=REMOVED)}
  END IF;
  RETURN NULL;
END $$""",
    f"""
CREATE FUNCTION annotate_judged_levels_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  {TAKE.format(delta=UPDATED)}
  {UPSERT.format(delta=UPDATED)}
  RETURN NULL;
END $$""",
    # Named to fire after the counting triggers (alphabetical): campaign tallies, then these.
    "CREATE TRIGGER annotate_pair_tally_levels_insert AFTER INSERT ON annotate_pair REFERENCING NEW TABLE AS changed"
    " FOR EACH STATEMENT EXECUTE FUNCTION annotate_judged_levels()",
    "CREATE TRIGGER annotate_pair_tally_levels_delete AFTER DELETE ON annotate_pair REFERENCING OLD TABLE AS changed"
    " FOR EACH STATEMENT EXECUTE FUNCTION annotate_judged_levels()",
    "CREATE TRIGGER annotate_pair_tally_levels_update AFTER UPDATE ON annotate_pair"
    " REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows"
    " FOR EACH STATEMENT EXECUTE FUNCTION annotate_judged_levels_updated()",
    # The pairs already there.
    f"INSERT INTO {LEVELS} (campaign_id, stripe, level, pairs)"
    f" SELECT c, s, level, count(*) FROM ({EXPANDED.format(r='p', n=STRIPES, sign='1', rows='annotate_pair p')}) d"
    " GROUP BY 1, 2, 3",
]
POSTGRES_DROP = [
    *[
        f"DROP TRIGGER IF EXISTS annotate_pair_tally_levels_{op} ON annotate_pair"
        for op in ("insert", "delete", "update")
    ],
    "DROP FUNCTION IF EXISTS annotate_judged_levels()",
    "DROP FUNCTION IF EXISTS annotate_judged_levels_updated()",
]


def add_triggers(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        for statement in POSTGRES:
            schema_editor.execute(statement, params=None)  # no parameters: the SQL's % is the modulo


def drop_triggers(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        for statement in POSTGRES_DROP:
            schema_editor.execute(statement, params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0016_campaign_change_counters"),
    ]

    operations = [
        migrations.CreateModel(
            name="JudgedPairsTally",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("stripe", models.SmallIntegerField(help_text="The pair's id modulo STRIPES.")),
                ("level", models.IntegerField(help_text="A number of judgements (1 or more).")),
                (
                    "pairs",
                    models.BigIntegerField(default=0, help_text="Corpus pairs with at least `level` judgements."),
                ),
            ],
        ),
        migrations.AddIndex(
            model_name="assignment",
            index=models.Index(
                condition=models.Q(("answered_at__isnull", True)), fields=["expires_at"], name="assignment_active_idx"
            ),
        ),
        migrations.AddField(
            model_name="judgedpairstally",
            name="campaign",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE, related_name="judged_tallies", to="annotate.campaign"
            ),
        ),
        migrations.AddConstraint(
            model_name="judgedpairstally",
            constraint=models.UniqueConstraint(
                fields=("campaign", "stripe", "level"), name="one_judged_tally_per_level"
            ),
        ),
        migrations.RunPython(add_triggers, drop_triggers),
    ]
