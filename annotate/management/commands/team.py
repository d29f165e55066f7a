"""``manage.py team NAME [--campaign SLUG ...] [--member USERNAME ...]``: a team, its campaigns, its people."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotate.teams import TeamError, set_up_team


class Command(BaseCommand):
    help = (
        "Create a team (a Django group) if it does not exist, give it campaigns and add members: its members "
        "(staff accounts) see and change its campaigns and no others; superusers see every campaign. A campaign "
        "belongs to one team: naming it here moves it. All or nothing. "
        "Example: manage.py team nlp-lab --campaign mrpc-2026 --member alice --member bob"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="The team's name (created if new).")
        parser.add_argument(
            "--campaign", action="append", default=[], help="A campaign's slug to give to the team (repeatable)."
        )
        parser.add_argument("--member", action="append", default=[], help="A username to add to the team (repeatable).")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            change = set_up_team(options["name"], campaigns=options["campaign"], members=options["member"])
        except TeamError as error:
            raise CommandError(str(error)) from None
        verb = "Created" if change.created else "Updated"
        self.stdout.write(
            f"{verb} team {change.team!r}: campaigns given {', '.join(change.campaigns) or 'none'}; "
            f"members added {', '.join(change.members) or 'none'}."
        )
