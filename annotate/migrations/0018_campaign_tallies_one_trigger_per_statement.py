"""One trigger per statement keeps a campaign's counts and its change counter, stripes in order.

Migrations ``campaign_tallies_striped`` and ``campaign_change_counters`` left two statement
triggers per write on the pairs, judgements and volunteers tables (one counting, one bumping the
change counter), each locking the tally stripes it touches, and row-level triggers on updates,
which lock a stripe per row in the order the rows were written: two bulk updates of several
volunteers' judgements in opposite orders deadlocked (``tests/test_tallies_lock_order.py``).
Each table now has one function for its inserts, deletes and updates (statement-level, over
the transition tables) that sums every change of a statement per (campaign, stripe) and writes
each stripe once, in (campaign, stripe) order: an upsert for inserts and updates, and for
deletes an UPDATE (a campaign being deleted never gets a row back) after locking the rows in
that order. Updates also keep the counts exact when a judgement or a volunteer changes campaign
or kind (the old triggers only bumped the change counter).

PostgreSQL only: SQLite's row-level triggers stay (SQLite runs one writer at a time).
"""

import importlib
from typing import Any

from django.db import migrations

TALLY = "annotate_campaigntally"
STRIPES = 16
COLUMNS = "campaign_id, stripe, pairs, checks, judgements, volunteers, changes, changed_at"
SUMS = "sum(pairs), sum(checks), sum(judgements), sum(volunteers), sum(changes)"
# Delta rows: (c, s, pairs, checks, judgements, volunteers, changes) per written row.
CORPUS = "(NOT {r}.is_training AND NOT {r}.is_check)::int"
CHECK = "({r}.is_check AND NOT {r}.is_training)::int"
DELTA = "SELECT {c} AS c, {s} AS s, {pairs} AS pairs, {checks} AS checks, {judgements} AS judgements, "
DELTA += "{volunteers} AS volunteers, {changes} AS changes FROM {rows}"


def delta(c: str, s: str, rows: str, **counts: str) -> str:
    values = {name: counts.get(name, "0") for name in ("pairs", "checks", "judgements", "volunteers", "changes")}
    return DELTA.format(c=c, s=s, rows=rows, **values)


def add(deltas: str) -> str:
    """Inserts and updates: every stripe once, in (campaign, stripe) order."""
    return f"""
    INSERT INTO {TALLY} AS t ({COLUMNS})
    SELECT c, s, {SUMS}, CASE WHEN sum(changes) > 0 THEN now() END
    FROM ({deltas}) d GROUP BY 1, 2
    -- An update that changed nothing counted (an answer's judgement_count) writes no stripe.
    HAVING sum(pairs) <> 0 OR sum(checks) <> 0 OR sum(judgements) <> 0 OR sum(volunteers) <> 0 OR sum(changes) <> 0
    ORDER BY 1, 2
    ON CONFLICT (campaign_id, stripe) DO UPDATE SET
      pairs = t.pairs + EXCLUDED.pairs, checks = t.checks + EXCLUDED.checks,
      judgements = t.judgements + EXCLUDED.judgements, volunteers = t.volunteers + EXCLUDED.volunteers,
      changes = t.changes + EXCLUDED.changes,
      changed_at = CASE WHEN EXCLUDED.changes > 0 THEN greatest(t.changed_at, EXCLUDED.changed_at)
                        ELSE t.changed_at END;"""


def take(deltas: str) -> str:
    """Deletes: the stripes there locked in (campaign, stripe) order, then the counts taken off."""
    return f"""
    PERFORM 1 FROM {TALLY} t JOIN (SELECT DISTINCT c, s FROM ({deltas}) d) k
      ON t.campaign_id = k.c AND t.stripe = k.s
    ORDER BY t.campaign_id, t.stripe FOR UPDATE OF t;
    UPDATE {TALLY} t SET pairs = t.pairs - d.pairs, checks = t.checks - d.checks,
      judgements = t.judgements - d.judgements, volunteers = t.volunteers - d.volunteers,
      changes = t.changes + d.changes, changed_at = greatest(t.changed_at, now())
    FROM (SELECT c, s, sum(pairs) AS pairs, sum(checks) AS checks, sum(judgements) AS judgements,
                 sum(volunteers) AS volunteers, sum(changes) AS changes
          FROM ({deltas}) d GROUP BY 1, 2) d
    WHERE t.campaign_id = d.c AND t.stripe = d.s;"""


def written(columns: list[str], first: str, second: str, alias: str) -> str:
    """The rows of transition table ``first`` whose (id, ``columns``) are not in ``second``, as
    ``alias``: with ``new_rows``, ``old_rows``, the rows an update changed. A set difference, not
    a join of the two transition tables: they have no statistics, and PostgreSQL may join them
    by a nested loop, quadratic in the rows of a bulk update."""
    listed = ", ".join(["id", *columns])
    return f"(SELECT {listed} FROM {first} EXCEPT SELECT {listed} FROM {second}) {alias}"


def _changes() -> Any:
    return importlib.import_module("annotate.migrations.0016_campaign_change_counters")


def _striped() -> Any:
    return importlib.import_module("annotate.migrations.0015_campaign_tallies_striped")


READ = _changes().READ
N = STRIPES
PAIR_CAMPAIGN = "(SELECT campaign_id FROM annotate_pair WHERE id = {r}.pair_id)"

# Pairs: corpus pairs and checks in the pair's stripe; a pair moved takes its corpus judgements
# (in their volunteers' stripes) to its new campaign.
PAIR_ROWS = delta(
    "r.campaign_id", f"r.id % {N}", "changed r", pairs=CORPUS.format(r="r"), checks=CHECK.format(r="r"), changes="1"
)
PAIR_READ = READ["annotate_pair"]
PAIR_MOVED_FROM = written(["campaign_id"], "old_rows", "new_rows", "o")
PAIR_MOVED_TO = written(["campaign_id"], "new_rows", "old_rows", "w")
PAIR_UPDATED = " UNION ALL ".join(
    [
        # Counts: every old row taken off, every new row added (the sums cancel when nothing moved).
        delta(
            "o.campaign_id",
            f"o.id % {N}",
            "old_rows o",
            pairs=f"-{CORPUS.format(r='o')}",
            checks=f"-{CHECK.format(r='o')}",
        ),
        delta("w.campaign_id", f"w.id % {N}", "new_rows w", pairs=CORPUS.format(r="w"), checks=CHECK.format(r="w")),
        # Changes: each pair whose read columns changed, and the campaign a moved pair left.
        delta("w.campaign_id", f"w.id % {N}", written(PAIR_READ, "new_rows", "old_rows", "w"), changes="1"),
        delta("o.campaign_id", f"o.id % {N}", PAIR_MOVED_FROM, changes="1"),
        # A moved pair takes its corpus judgements (in their volunteers' stripes) along.
        delta(
            "o.campaign_id",
            f"j.volunteer_id % {N}",
            f"{PAIR_MOVED_FROM} JOIN annotate_judgement j ON j.pair_id = o.id AND NOT j.is_training AND NOT j.is_check",
            judgements="-1",
        ),
        delta(
            "w.campaign_id",
            f"j.volunteer_id % {N}",
            f"{PAIR_MOVED_TO} JOIN annotate_judgement j ON j.pair_id = w.id AND NOT j.is_training AND NOT j.is_check",
            judgements="1",
        ),
    ]
)
# Judgements: in their volunteer's stripe of their pair's campaign.
JUDGEMENT_ROWS = delta(
    "p.campaign_id",
    f"j.volunteer_id % {N}",
    "changed j JOIN annotate_pair p ON p.id = j.pair_id",
    judgements=CORPUS.format(r="j"),
    changes="1",
)
WHERE_OLD = (
    f"(SELECT o.id, p.campaign_id, o.volunteer_id % {N} AS s FROM old_rows o JOIN annotate_pair p ON p.id = o.pair_id"
)
WHERE_NEW = (
    f"SELECT w.id, p.campaign_id, w.volunteer_id % {N} FROM new_rows w JOIN annotate_pair p ON p.id = w.pair_id)"
)
JUDGEMENT_UPDATED = " UNION ALL ".join(
    [
        delta(
            "p.campaign_id",
            f"o.volunteer_id % {N}",
            "old_rows o JOIN annotate_pair p ON p.id = o.pair_id",
            judgements=f"-{CORPUS.format(r='o')}",
        ),
        delta(
            "p.campaign_id",
            f"w.volunteer_id % {N}",
            "new_rows w JOIN annotate_pair p ON p.id = w.pair_id",
            judgements=CORPUS.format(r="w"),
        ),
        delta(
            "p.campaign_id",
            f"w.volunteer_id % {N}",
            f"{written(READ['annotate_judgement'], 'new_rows', 'old_rows', 'w')} JOIN annotate_pair p ON p.id = w.pair_id",
            changes="1",
        ),
        # The (campaign, stripe) a judgement left (another pair's campaign, another volunteer).
        delta("m.campaign_id", "m.s", f"{WHERE_OLD} EXCEPT {WHERE_NEW} m", changes="1"),
    ]
)
# Volunteers: in their own stripe.
VOLUNTEER_ROWS = delta("r.campaign_id", f"r.id % {N}", "changed r", volunteers="1", changes="1")
VOLUNTEER_UPDATED = " UNION ALL ".join(
    [
        delta("o.campaign_id", f"o.id % {N}", "old_rows o", volunteers="-1"),
        delta("w.campaign_id", f"w.id % {N}", "new_rows w", volunteers="1"),
        delta(
            "w.campaign_id",
            f"w.id % {N}",
            written(READ["annotate_volunteer"], "new_rows", "old_rows", "w"),
            changes="1",
        ),
        delta("o.campaign_id", f"o.id % {N}", written(["campaign_id"], "old_rows", "new_rows", "o"), changes="1"),
    ]
)

TABLES = {
    "annotate_pair": (PAIR_ROWS, PAIR_UPDATED),
    "annotate_judgement": (JUDGEMENT_ROWS, JUDGEMENT_UPDATED),
    "annotate_volunteer": (VOLUNTEER_ROWS, VOLUNTEER_UPDATED),
}

POSTGRES: list[str] = []
for _table, (_rows, _updated) in TABLES.items():
    POSTGRES += [
        f"""
CREATE FUNCTION {_table}_tallies() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN{add(_rows)}
  ELSE{take(_rows)}
  END IF;
  RETURN NULL;
END $$""",
        f"""
CREATE FUNCTION {_table}_tallies_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN{add(_updated)}
  RETURN NULL;
END $$""",
        f"CREATE TRIGGER {_table}_tallies_insert AFTER INSERT ON {_table} REFERENCING NEW TABLE AS changed"
        f" FOR EACH STATEMENT EXECUTE FUNCTION {_table}_tallies()",
        f"CREATE TRIGGER {_table}_tallies_delete AFTER DELETE ON {_table} REFERENCING OLD TABLE AS changed"
        f" FOR EACH STATEMENT EXECUTE FUNCTION {_table}_tallies()",
        f"CREATE TRIGGER {_table}_tallies_update AFTER UPDATE ON {_table}"
        f" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows"
        f" FOR EACH STATEMENT EXECUTE FUNCTION {_table}_tallies_updated()",
    ]

POSTGRES_DROP = [
    *[
        f"DROP TRIGGER IF EXISTS {table}_tallies_{op} ON {table}"
        for table in TABLES
        for op in ("insert", "delete", "update")
    ],
    *[f"DROP FUNCTION IF EXISTS {table}_tallies{suffix}()" for table in TABLES for suffix in ("", "_updated")],
]
# What the two earlier migrations made on PostgreSQL.
SEPARATE_DROP = [
    *[f"DROP TRIGGER IF EXISTS {table}_tally_{op} ON {table}" for table in TABLES for op in ("insert", "delete")],
    "DROP TRIGGER IF EXISTS annotate_pair_tally_update ON annotate_pair",
    *[
        f"DROP FUNCTION IF EXISTS annotate_tally_{name}()"
        for name in ("pairs", "pair_moved", "judgements", "volunteers")
    ],
]


def merge(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        for statement in [*SEPARATE_DROP, *_changes().POSTGRES_DROP, *POSTGRES]:
            schema_editor.execute(statement, params=None)  # no parameters: the SQL's % is the modulo


def separate(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        for statement in [*POSTGRES_DROP, *_striped().POSTGRES, *_changes().POSTGRES]:
            schema_editor.execute(statement, params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0017_judged_pairs_tallies_kept_by_triggers"),
        ("scoring", "0012_score_change_counters"),
    ]

    operations = [migrations.RunPython(merge, separate)]
