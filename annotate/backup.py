"""Back up one campaign to a file and restore it into another installation, nothing lost.

What a backup holds: the campaign and every row that belongs to it (pairs, volunteers, their
assignments and judgements, scores, and any table added later with a foreign key to one of
those), plus the metric configurations its scores refer to. The rows to take are found from the
foreign keys at run time, so a new per-campaign table is backed up without touching this module.

The file is JSON Lines (gzip when its name ends in ``.gz``): a header line, then for each table
a line naming it and its columns, then one line per row. Every timestamp is written with all
six digits of its microseconds (Django's ``dumpdata`` JSON keeps milliseconds only), so a
restored campaign has exactly the timestamps of the original.

A restore is all or nothing (one transaction). The campaign's slug must be free. Rows keep their
ids when the table has none of them already (a fresh installation); otherwise the table's rows
get new ids and every reference to them follows. A metric configuration that the installation
already has (same ``config_hash``) is reused, not duplicated.
"""

from __future__ import annotations

import datetime
import decimal
import gzip
import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from django.apps import apps
from django.contrib.auth.models import Group
from django.core.management.color import no_style
from django.db import IntegrityError, connection, models, transaction
from django.utils import timezone

from annotate.models import Campaign

FORMAT = "paraeval-campaign-backup"
FORMAT_VERSION = 1
APPS = ("annotate", "scoring")
# Counters the database keeps by triggers from the rows themselves (``annotate.tallies``,
# ``scoring.tallies``): a restore's inserts fire the same triggers, so the counts come back
# exact without being copied; copying them too would count every row twice.
DERIVED = frozenset({"annotate.campaigntally", "annotate.judgedpairstally", "scoring.scoretally"})
BATCH = 2000


class BackupError(ValueError):
    """A backup that cannot be made or restored; the message says why."""


@dataclass
class TableCount:
    model: str
    rows: int


@dataclass
class Summary:
    """What a backup wrote or a restore stored: rows per table."""

    campaign: str
    tables: list[TableCount] = field(default_factory=list)
    renumbered: list[str] = field(default_factory=list)  # restore: tables whose ids changed
    reused_configs: int = 0  # restore: metric configurations already there

    @property
    def rows(self) -> int:
        return sum(table.rows for table in self.tables)


def _label(model: type[models.Model]) -> str:
    return model._meta.label_lower


def _relations(model: type[models.Model]) -> list[models.ForeignKey[Any, Any]]:
    return [f for f in model._meta.concrete_fields if isinstance(f, models.ForeignKey)]


def plan() -> tuple[list[type[models.Model]], list[type[models.Model]]]:
    """(tables that belong to a campaign in dependency order, tables they only refer to).

    A table belongs when one of its foreign keys points to a table that belongs (the campaign
    first); a table of these apps that such a table points to without belonging (metric
    configurations) is referred to: only its referenced rows are taken.
    """
    candidates = [
        m
        for app in APPS
        for m in apps.get_app_config(app).get_models()
        if m is not Campaign and _label(m) not in DERIVED
    ]
    owned: list[type[models.Model]] = [Campaign]
    changed = True
    while changed:
        changed = False
        for model in candidates:
            if model in owned:
                continue
            targets = [f.related_model for f in _relations(model)]
            if any(target in owned for target in targets):
                owned.append(model)
                changed = True
    # Each table after the tables it refers to (a restore inserts in this order).
    ordered: list[type[models.Model]] = []
    while len(ordered) < len(owned):
        for model in owned:
            needs = [
                f.related_model for f in _relations(model) if f.related_model in owned and f.related_model is not model
            ]
            if model not in ordered and all(target in ordered for target in needs):
                ordered.append(model)
                break
        else:
            raise AssertionError("the campaign's tables refer to each other in a cycle")
    owned = ordered
    referred: list[type[models.Model]] = []
    for model in owned:
        for relation in _relations(model):
            target = relation.related_model
            if target not in owned and target in candidates and target not in referred:
                referred.append(target)
    return owned, referred


def _owned_rows(model: type[models.Model], campaign: Campaign) -> models.QuerySet[Any]:
    if model is Campaign:
        return Campaign.objects.filter(pk=campaign.pk)
    owned, _ = plan()
    for relation in _relations(model):
        if relation.related_model in owned:
            parent = _owned_rows(relation.related_model, campaign)
            return model._default_manager.filter(**{f"{relation.name}__in": parent.values("pk")})
    raise AssertionError(f"{_label(model)} does not belong to a campaign")


def _encode(value: Any) -> Any:
    if isinstance(value, datetime.datetime):
        return value.isoformat(timespec="microseconds")
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, decimal.Decimal | uuid.UUID):
        return str(value)
    return value


def _open(path: Path, mode: str) -> IO[str]:
    if path.suffix == ".gz":
        return gzip.open(path, mode + "t", encoding="utf-8")  # type: ignore[return-value]
    return path.open(mode, encoding="utf-8")


def backup(slug: str, output: Path) -> Summary:
    """Write campaign ``slug`` to ``output``; raises :class:`BackupError` for an unknown slug."""
    campaign = Campaign.objects.filter(slug=slug).first()
    if campaign is None:
        raise BackupError(f"no campaign {slug!r}")
    owned, referred = plan()
    summary = Summary(campaign=slug)
    with transaction.atomic(), _open(output, "w") as handle:  # one consistent snapshot
        # The owning team (a Django group, outside the backed-up apps) travels by its name.
        team = campaign.team.name if campaign.team is not None else None
        header = {"format": FORMAT, "version": FORMAT_VERSION, "campaign": slug, "team": team}
        handle.write(json.dumps({**header, "created_at": timezone.now().isoformat(timespec="microseconds")}) + "\n")
        for model in referred:
            ids: set[Any] = set()
            for holder in owned:
                for relation in _relations(holder):
                    if relation.related_model is model:
                        ids.update(_owned_rows(holder, campaign).values_list(relation.attname, flat=True).distinct())
            summary.tables.append(_write(handle, model, model._default_manager.filter(pk__in=sorted(ids))))
        for model in owned:
            summary.tables.append(_write(handle, model, _owned_rows(model, campaign)))
    return summary


def _write(handle: IO[str], model: type[models.Model], rows: models.QuerySet[Any]) -> TableCount:
    columns = [f.attname for f in model._meta.concrete_fields]
    handle.write(json.dumps({"table": _label(model), "columns": columns}) + "\n")
    count = 0
    # A group's id means nothing in another installation: the team travels in the header, by name.
    local = {columns.index("team_id")} if model is Campaign else set()
    for row in rows.order_by("pk").values_list(*columns).iterator(chunk_size=BATCH):
        values = [None if index in local else _encode(value) for index, value in enumerate(row)]
        handle.write(json.dumps(values, ensure_ascii=False) + "\n")
        count += 1
    return TableCount(_label(model), count)


def _tables(handle: IO[str]) -> Iterator[tuple[str, list[str], Iterator[list[Any]]]]:
    """(table, columns, its rows) in file order; each table's rows must be read before the next."""
    line = handle.readline()
    pending = line
    while pending:
        head = json.loads(pending)
        if "table" not in head:
            raise BackupError(f"expected a table line, got {pending[:80]!r}")
        state = {"next": ""}

        def rows(state: dict[str, str] = state) -> Iterator[list[Any]]:
            for raw in handle:
                if raw.startswith("{"):
                    state["next"] = raw
                    return
                yield json.loads(raw)

        yield head["table"], head["columns"], rows()
        pending = state["next"]


def restore(source: Path) -> Summary:
    """Restore the campaign in ``source``; all or nothing. Raises :class:`BackupError`."""
    with _open(source, "r") as handle:
        try:
            header = json.loads(handle.readline() or "null")
        except json.JSONDecodeError as error:
            raise BackupError(f"{source} is not a campaign backup (first line: {error})") from None
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            raise BackupError(f"{source} is not a campaign backup (no {FORMAT!r} header)")
        if header.get("version") != FORMAT_VERSION:
            raise BackupError(f"{source} is backup format {header.get('version')}; this version reads {FORMAT_VERSION}")
        slug = str(header["campaign"])
        if Campaign.objects.filter(slug=slug).exists():
            raise BackupError(f"a campaign {slug!r} already exists here; restore into a fresh installation")
        summary = Summary(campaign=slug)
        try:
            with transaction.atomic(), _stored_times_kept():
                # The team of that name here (made if missing: only superusers see the campaign
                # until members are added with ``manage.py team``); ids of groups differ between
                # installations.
                team_name = header.get("team")
                team_id = Group.objects.get_or_create(name=str(team_name))[0].pk if team_name else None
                _restore_tables(handle, summary, team_id)
        except IntegrityError as error:
            raise BackupError(f"the backup conflicts with this installation's rows: {error}") from None
    return summary


def _restore_tables(handle: IO[str], summary: Summary, team_id: int | None) -> None:
    owned, referred = plan()
    known = {_label(m): m for m in [*owned, *referred]}
    ids: dict[Any, dict[Any, Any]] = {}
    written: list[type[models.Model]] = []
    for table, columns, rows in _tables(handle):
        model = known.get(table)
        if model is None:
            raise BackupError(f"the backup has a table {table!r} that this installation does not know")
        fields = {f.attname: f for f in model._meta.concrete_fields}
        unknown = [column for column in columns if column not in fields]
        if unknown:
            raise BackupError(f"{table}: columns {', '.join(unknown)} are not in this installation's schema")
        pk_name = model._meta.pk.attname
        # A table with no row yet (a fresh installation) keeps the backup's ids; else new ids.
        keep_ids = not model._default_manager.exists()
        if not keep_ids and model in owned:
            summary.renumbered.append(table)
        mapping: dict[Any, Any] = {}
        count = 0
        for batch in _batches(rows, BATCH):
            decoded = [
                {column: fields[column].to_python(value) for column, value in zip(columns, row, strict=True)}
                for row in batch
            ]
            if model in referred:
                summary.reused_configs += _reuse(model, decoded, mapping)
            fresh: list[tuple[Any, models.Model]] = []
            for row in decoded:
                old = row[pk_name]
                if old in mapping:
                    continue
                if model is Campaign:
                    row["team_id"] = team_id
                for attname, value in row.items():
                    relation = fields[attname]
                    if isinstance(relation, models.ForeignKey) and value is not None:
                        target_ids = ids.get(relation.related_model)
                        if target_ids is None:
                            continue
                        if value in target_ids:
                            row[attname] = target_ids[value]
                        elif relation.null:  # a row outside the backup (a probe set's source campaign)
                            row[attname] = None
                        else:
                            raise BackupError(f"{table}: {attname} {value} refers to a row that is not in the backup")
                instance = model(**row)
                if not keep_ids:
                    instance.pk = None
                fresh.append((old, instance))
            model._default_manager.bulk_create([instance for _, instance in fresh], batch_size=BATCH)
            for old, instance in fresh:
                mapping[old] = instance.pk
            count += len(fresh)
        ids[model] = mapping
        written.append(model)
        summary.tables.append(TableCount(table, count))
    # Explicit ids leave PostgreSQL's sequences behind: move them past the restored rows.
    statements = connection.ops.sequence_reset_sql(no_style(), written)
    if statements:
        with connection.cursor() as cursor:
            for statement in statements:
                cursor.execute(statement)


@contextmanager
def _stored_times_kept() -> Iterator[None]:
    """Turn ``auto_now`` / ``auto_now_add`` off while restoring: the backup's times are stored,
    not the moment of the restore. (A restore runs in its own command process.)"""
    owned, referred = plan()
    switched = [
        (f, f.auto_now, f.auto_now_add)
        for model in [*owned, *referred]
        for f in model._meta.concrete_fields
        if isinstance(f, models.DateField) and (f.auto_now or f.auto_now_add)
    ]
    for f, _, _ in switched:
        f.auto_now = f.auto_now_add = False
    try:
        yield
    finally:
        for f, now, now_add in switched:
            f.auto_now, f.auto_now_add = now, now_add


def _batches(rows: Iterator[list[Any]], size: int) -> Iterator[list[list[Any]]]:
    batch: list[list[Any]] = []
    for row in rows:
        batch.append(row)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _reuse(model: type[models.Model], rows: list[dict[str, Any]], mapping: dict[Any, Any]) -> int:
    """Map rows of a referred table to the installation's equal rows (same unique field)."""
    unique = [f.attname for f in model._meta.concrete_fields if f.unique and not f.primary_key]
    if not unique:
        return 0
    key = unique[0]
    pk_name = model._meta.pk.attname
    existing = dict(model._default_manager.filter(**{f"{key}__in": [row[key] for row in rows]}).values_list(key, "pk"))
    reused = 0
    for row in rows:
        if row[key] in existing:
            mapping[row[pk_name]] = existing[row[key]]
            reused += 1
    return reused
