"""Campaigns belong to a team (an auth group); an installation that had campaigns keeps working.

A campaign with no team is the superusers' alone (the safe default, annotate/teams.py). So that
an upgrade does not hide every campaign from the staff who used them, the campaigns that exist
now go to one team, "All staff", and every active staff account joins it: everyone sees what
they saw before, until campaigns are moved to narrower teams (manage.py team, or the admin).
A new installation (no campaign yet) gets no such team.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

EVERYONE_TEAM = "All staff"  # annotate.teams.EVERYONE_TEAM, copied: a migration never imports the app


def existing_campaigns_to_everyone(apps, schema_editor):
    Campaign = apps.get_model("annotate", "Campaign")
    if not Campaign.objects.filter(team__isnull=True).exists():
        return
    Group = apps.get_model("auth", "Group")
    User = apps.get_model(*settings.AUTH_USER_MODEL.split("."))
    team, _ = Group.objects.get_or_create(name=EVERYONE_TEAM)
    Campaign.objects.filter(team__isnull=True).update(team=team)
    team.user_set.add(*User.objects.filter(is_staff=True, is_active=True))


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0010_campaign_is_public"),
        ("auth", "0012_alter_user_first_name_max_length"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="campaign",
            name="team",
            field=models.ForeignKey(
                blank=True,
                help_text="The team whose members see and change this campaign (empty: superusers only).",
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="campaigns",
                to="auth.group",
            ),
        ),
        # Reversed: nothing to undo (removing the field forgets the teams; the group stays).
        migrations.RunPython(existing_campaigns_to_everyone, migrations.RunPython.noop),
    ]
