"""Indexes on a pair's campaign and origin, and campaign and system.

The staff pair list offers a campaign's origins and systems in its menus. On PostgreSQL they are
read by a loose index scan over these indexes (``scoring.reports.pair_pages``): one index step
per distinct value, where a DISTINCT read every pair of the campaign.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0018_campaign_tallies_one_trigger_per_statement"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="pair",
            index=models.Index(fields=["campaign", "origin"], name="pair_campaign_origin_idx"),
        ),
        migrations.AddIndex(
            model_name="pair",
            index=models.Index(fields=["campaign", "system"], name="pair_campaign_system_idx"),
        ),
    ]
