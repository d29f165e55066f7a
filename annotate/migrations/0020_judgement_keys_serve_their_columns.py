"""A judgement's volunteer and pair are served by the keys that lead with them.

The (volunteer, pair) unique key and the (pair, is_training) index already lead with these
columns. The single-column indexes Django adds to every foreign key were smaller copies, and the
planner took the pair's one to find one volunteer's answer to a training pair: every volunteer's
answer to that pair was read (a cost that grew with the campaign's volunteers). Dropping them
also spares two index updates on every answer.

Only the indexes are dropped: ``AlterField`` would also drop and re-add both foreign keys, which
checks every judgement again under a lock that stops volunteers' answers.
"""

from typing import Any

import django.db.models.deletion
from django.db import migrations, models

COLUMNS = ("pair", "volunteer")


def drop_single_column_indexes(apps: Any, schema_editor: Any) -> None:
    judgement = apps.get_model("annotate", "Judgement")
    for name in COLUMNS:
        column = judgement._meta.get_field(name).column
        for index in schema_editor._constraint_names(judgement, [column], index=True, type_=models.Index.suffix):
            schema_editor.execute(schema_editor._delete_index_sql(judgement, index))


def create_single_column_indexes(apps: Any, schema_editor: Any) -> None:
    judgement = apps.get_model("annotate", "Judgement")
    for name in COLUMNS:
        schema_editor.execute(schema_editor._create_index_sql(judgement, fields=[judgement._meta.get_field(name)]))


def foreign_key(to: str) -> models.ForeignKey:
    return models.ForeignKey(
        db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name="judgements", to=to
    )


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0019_pair_origin_system_indexes"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(drop_single_column_indexes, create_single_column_indexes)],
            state_operations=[
                migrations.AlterField(model_name="judgement", name="pair", field=foreign_key("annotate.pair")),
                migrations.AlterField(
                    model_name="judgement", name="volunteer", field=foreign_key("annotate.volunteer")
                ),
            ],
        ),
    ]
