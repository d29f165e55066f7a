"""Which pair a volunteer sees next: training first, then the campaign pairs that need judges.

Rules:

- Training pairs come first, in ``training_position`` order, the same for everyone; they are
  not subject to targets or reservations.
- Training pairs keep their imported order (source on top) for everyone.
- Then campaign pairs, up to ``campaign.quota`` judged ones: never a pair the volunteer already
  has an assignment for; fewest (non-training) judgements first; a pair is available while
  ``judgements + active reservations by others < campaign.judges_per_pair``. Among the pairs
  with the fewest judgements, each volunteer walks the pool in their own shuffled order (from a
  random point of the pairs' random ``shuffle_key`` order, drawn anew for each step from the
  volunteer's token), so that order effects are balanced between the judges of a pair.
- Adaptive selection (``campaign.selection == "adaptive"``): every volunteer walks the pool
  from the start of the order the planner wrote into ``shuffle_key`` (scoring/selection.py), so
  within a level the pairs are served by increasing key, the most informative first; the
  targets, reservations, take-overs and locks are exactly those of the balanced order.
- Each assignment stores its ``position`` in the volunteer's sequence (1 = the first pair,
  training included), copied to the judgement and exported.
- A volunteer's first campaign reservation is short (``PARAEVAL_FIRST_RESERVATION_MINUTES``)
  until their first campaign answer, so volunteers who never answer hold pairs only briefly.
- An active reservation is an unanswered :class:`Assignment` whose ``expires_at`` is in the
  future; an abandoned one simply stops counting when it expires. Counts come from answers
  (``Pair.judgement_count``, kept in step with the Judgement rows by ``annotate.counters``),
  never from pages served.
- The open assignment is resumed on reload. A reservation is never renewed:
  an expired one is still shown while its pair is available, holding nothing, otherwise it is
  dropped and another pair allocated. A volunteer whose reservation ran out unanswered
  (``Volunteer.reservation_lapsed_at``) gets pairs without reservation until they answer.
- A reservation holds against a waiting volunteer only while its holder keeps a human pace:
  once the pair has been open for ``PARAEVAL_RESERVATION_GRACE_SECONDS`` *and* the holder's
  last campaign answer is older than ``PARAEVAL_RESERVATION_PACE_SECONDS`` (or they never
  answered one), it *yields*: when no pair is free, a newcomer takes it over
  (:func:`_take_over`), whatever the holder answered before. Each volunteer holds at most one
  pair (their one open assignment).

Concurrency. Allocation runs in one transaction that locks the volunteer's row, then their
open assignment (an answer locks that assignment too), so two requests of one volunteer (two
tabs, a reload during a click) take turns. On PostgreSQL the
chosen pair row is locked with ``FOR NO KEY UPDATE SKIP LOCKED`` (volunteers starting at the
same moment take different pairs instead of queueing) and its availability is checked again
by a fresh statement once the lock is held: anyone who changes a pair's count or reservations
(the allocator, a renewal, an answer) holds that row lock until commit, so the re-check sees
every change that happened before it, and the target is never overshot. On SQLite the
settings make every transaction ``BEGIN IMMEDIATE``, which serialises writers outright.

Lock order, everywhere: the volunteer's own row, then their assignment row, then a pair row
(an answer skips the first). The allocator never waits for a pair lock while it holds
another (a savepoint releases a pair it does not take), and nobody waits for another
volunteer's rows, so no cycle forms.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, Exists, OuterRef, Q, QuerySet
from django.utils import timezone

from annotate.models import (
    Assignment,
    Campaign,
    CampaignTally,
    JudgedPairsTally,
    Judgement,
    Pair,
    Volunteer,
    parse_positions,
)


class EndReason(StrEnum):
    """Why a volunteer has no next pair."""

    QUOTA = "quota"  # they judged their quota of campaign pairs
    EXHAUSTED = "exhausted"  # no pair left that still needs them


@dataclass(frozen=True)
class CampaignSize:
    """How many pairs a volunteer of a campaign meets: the training, then the campaign pairs
    with the check pairs among them."""

    training: int
    # Campaign pairs in the pool, counted up to the quota only (a volunteer sees no more).
    pool_up_to_quota: int
    # Check pairs a volunteer meets on the way (0 in a campaign without checks).
    checks: int = 0

    @property
    def total(self) -> int:
        return self.training + self.pool_up_to_quota + self.checks


@dataclass(frozen=True)
class Answered:
    """What a volunteer has answered so far: all, the campaign pairs that count, the checks."""

    total: int
    campaign: int
    checks: int = 0

    @property
    def training(self) -> int:
        return self.total - self.campaign - self.checks


@dataclass(frozen=True)
class NextPair:
    """The assignment to show, or why there is none, with the counts the page shows."""

    assignment: Assignment | None
    end: EndReason | None
    size: CampaignSize
    answered: Answered
    # An expired reservation could not be renewed (its pair went to others meanwhile).
    dropped_expired: bool = False


def campaign_size(campaign: Campaign) -> CampaignSize:
    """Training pairs, campaign pairs (up to the quota) and check pairs, in one cheap statement.

    Raw SQL because the ORM cannot express "count, but stop at the quota" as a subquery; the
    bounded count never reads more than ``quota`` rows of a pool of thousands. Its order is that
    of the allocation index, which it does not need but which keeps the planner on that index:
    for a campaign holding most of the table, a ``LIMIT`` alone is planned as a sequential scan
    that first reads every row stored before the campaign's own.
    """
    table = connection.ops.quote_name(Pair._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT (SELECT COUNT(*) FROM {table} WHERE campaign_id = %s AND is_training),"
            f" (SELECT COUNT(*) FROM (SELECT 1 FROM {table} WHERE campaign_id = %s AND NOT is_training"
            f" AND NOT is_check ORDER BY judgement_count, shuffle_key LIMIT %s) pool),"
            f" (SELECT COUNT(*) FROM {table} WHERE campaign_id = %s AND is_check)",
            [campaign.pk, campaign.pk, campaign.quota, campaign.pk],
        )
        training, pool, check_pairs = cursor.fetchone()
    return CampaignSize(training=training, pool_up_to_quota=pool, checks=checks_met(campaign, pool, check_pairs))


def check_slots(campaign: Campaign, campaign_pairs: int) -> list[int]:
    """Where checks come among a volunteer's campaign items (1 = the first pair after training).

    ``check_positions`` when given, else one check after every ``check_every`` campaign pairs.
    Only slots that a volunteer judging ``campaign_pairs`` pairs reaches are listed: the i-th
    check (1-based) at slot s has s - i campaign pairs before it, which must be fewer than that.
    """
    if campaign.check_positions:
        slots = parse_positions(campaign.check_positions)
    elif campaign.check_every:
        every = campaign.check_every
        slots = [(every + 1) * i for i in range(1, campaign_pairs // every + 1)]
    else:
        return []
    return [slot for index, slot in enumerate(slots, start=1) if slot - index < campaign_pairs]


def volunteer_check_slots(campaign: Campaign, campaign_pairs: int, token: str) -> list[int]:
    """Where *this* volunteer meets their checks: each drawn within the configured spacing.

    The i-th configured slot s_i stands for the window (s_{i-1}, s_i] (s_0 = 0); the volunteer's
    check comes at a place of that window drawn from their token (SHA-256, stable across
    reloads and workers). Checks at the same places for everyone could be told apart by
    volunteers comparing notes; the number of checks and the spacing stay
    as configured, and a volunteer never meets a check later than its configured slot.
    """
    drawn = []
    previous = 0
    for index, slot in enumerate(check_slots(campaign, campaign_pairs), start=1):
        width = slot - previous
        digest = hashlib.sha256(f"{token}:check-slot:{index}".encode()).digest()
        drawn.append(previous + 1 + int.from_bytes(digest[:4], "big") % width)
        previous = slot
    return drawn


def checks_met(campaign: Campaign, campaign_pairs: int, check_pairs: int) -> int:
    """How many check pairs a volunteer meets: the slots reached, as far as check pairs last."""
    if not check_pairs:
        return 0
    return min(len(check_slots(campaign, campaign_pairs)), check_pairs)


def answered_by(volunteer: Volunteer) -> Answered:
    """The volunteer's judgements: all of them, those that count (not training, not checks), checks."""
    counts = Judgement.objects.filter(volunteer=volunteer).aggregate(
        total=Count("pk"),
        campaign=Count("pk", filter=Q(is_training=False, is_check=False)),
        checks=Count("pk", filter=Q(is_check=True)),
    )
    return Answered(total=counts["total"], campaign=counts["campaign"], checks=counts["checks"])


def draw_source_on_top(token: str, pair_id: int) -> bool:
    """The stable top/bottom draw of one volunteer and one pair.

    SHA-256, not Python's ``hash()``, which changes from process to process: the same
    volunteer always sees the same order for the same pair, whichever worker serves them.
    """
    return hashlib.sha256(f"{token}:{pair_id}".encode()).digest()[0] & 1 == 1


def lock_volunteer(volunteer: Volunteer) -> None:
    """Take the volunteer's row lock (PostgreSQL) for the rest of the transaction."""
    rows = Volunteer.objects.select_for_update(no_key=True).filter(pk=volunteer.pk).order_by()
    list(rows.values_list("pk", flat=True))


# The two statements at the heart of allocation are written in SQL: they run on every pair
# page, and the ORM spent more CPU composing them (Exists, a correlated Subquery, F) than
# PostgreSQL spends running them. Table names come from the models; values are parameters.
# "Reserved by others": unanswered assignments of the pair, not expired, not this volunteer's.
_RESERVED_BY_OTHERS = """(
    SELECT COUNT(*) FROM {assignment} held
    WHERE held.pair_id = p.id AND held.answered_at IS NULL AND held.expires_at > %s
      AND held.volunteer_id <> %s
)"""

_CANDIDATES = """
SELECT p.* FROM {pair} p
WHERE p.campaign_id = %s AND NOT p.is_training AND NOT p.is_check
  AND p.judgement_count = %s AND p.shuffle_key {side} %s
  AND NOT EXISTS (SELECT 1 FROM {assignment} mine WHERE mine.pair_id = p.id AND mine.volunteer_id = %s)
  AND p.judgement_count + {reserved} < %s
  {exclude}
ORDER BY p.shuffle_key
LIMIT 1"""

_LOAD = "SELECT p.judgement_count + {reserved} FROM {pair} p WHERE p.id = %s"


def _tables() -> dict[str, str]:
    quote = connection.ops.quote_name
    return {"pair": quote(Pair._meta.db_table), "assignment": quote(Assignment._meta.db_table)}


def shuffle_point(token: str, step: int) -> int:
    """Where volunteer ``token`` starts walking the pool for their ``step``-th pair (0 to 2**31 - 1).

    A SHA-256 draw, like the top/bottom draw: stable across reloads and server restarts, and
    independent from one volunteer to the next, so that each volunteer meets the pairs in an
    order of their own and order effects are balanced between the judges of a pair.
    """
    return int.from_bytes(hashlib.sha256(f"{token}:order:{step}".encode()).digest()[:4], "big") >> 1


def candidate_query(
    volunteer: Volunteer,
    campaign: Campaign,
    now: datetime,
    *,
    level: int = 0,
    start: int = 0,
    wrapped: bool = False,
    exclude: Sequence[int] = (),
    lock: str = "",
) -> tuple[str, list[object]]:
    """SQL and parameters of the first campaign pair ``volunteer`` may take now, at one level.

    ``level`` is a judgement count: the allocator asks for the least-judged pairs first, then
    the next level. Within a level the volunteer walks the pairs in ``shuffle_key`` order from
    their own random point ``start`` (``wrapped``: the part of the order before ``start``), so
    each query is a range scan of the partial index ``pair_shuffled_allocation_idx`` on
    (campaign, judgement_count, shuffle_key) that PostgreSQL leaves at the first row that
    qualifies (and, with ``lock``, that it can lock), whatever the size of the pool. ``lock``
    is ``"skip"`` (``FOR NO KEY UPDATE SKIP LOCKED``), ``"wait"`` (``FOR NO KEY UPDATE``) or
    empty; SQLite has no row locks (its IMMEDIATE transactions serialise writers).
    """
    moment = connection.ops.adapt_datetimefield_value(now)
    tables = _tables()
    sql = _CANDIDATES.format(
        **tables,
        side="<" if wrapped else ">=",
        reserved=_RESERVED_BY_OTHERS.format(**tables),
        exclude=f"AND p.id NOT IN ({', '.join(['%s'] * len(exclude))})" if exclude else "",
    )
    target = campaign.judges_per_pair
    params: list[object] = [campaign.pk, level, start, volunteer.pk, moment, volunteer.pk, target, *exclude]
    if lock and connection.vendor == "postgresql":
        sql += " FOR NO KEY UPDATE" + (" SKIP LOCKED" if lock == "skip" else "")
    return sql, params


def is_available(pair_id: int, volunteer: Volunteer, campaign: Campaign, now: datetime) -> bool:
    """Whether ``volunteer`` may take the pair now: judgements + others' reservations < target.

    One fresh statement; call it with the pair row locked so that its answer still holds at
    commit.
    """
    tables = _tables()
    sql = _LOAD.format(**tables, reserved=_RESERVED_BY_OTHERS.format(**tables))
    with connection.cursor() as cursor:
        cursor.execute(sql, [connection.ops.adapt_datetimefield_value(now), volunteer.pk, pair_id])
        row = cursor.fetchone()
    return row is not None and row[0] < campaign.judges_per_pair


def _lock_pair(pair_id: int) -> None:
    list(Pair.objects.select_for_update(no_key=True).filter(pk=pair_id).order_by().values_list("pk", flat=True))


def revalidate(assignment: Assignment, campaign: Campaign, now: datetime, *, reshow: bool) -> bool:
    """Whether the volunteer may still answer an assignment; an expired reservation is never renewed.

    A reservation lasts its length from the moment the pair was served, whatever the volunteer
    does meanwhile: reloading the page does not extend it (an attack run found scripted
    volunteers that reload and never answer held whole campaigns by renewing). Once it has
    expired, the pair is still shown while it is available (judgements + others' reservations
    < target) but holds nothing against the others; it returns False when the pair went to
    others meanwhile (the caller drops the assignment). ``reshow`` restarts ``shown_at``: the
    pair is shown again after a long absence, so the response time starts again too. The
    caller holds the assignment's row lock (assignment, then pair: the one lock order of this
    module).
    """
    if assignment.pair.is_training or assignment.pair.is_check or assignment.expires_at > now:
        return True  # training and check pairs have no target: nothing to reserve
    _lock_pair(assignment.pair_id)
    if not is_available(assignment.pair_id, assignment.volunteer, campaign, now):
        return False
    if reshow:
        assignment.shown_at = now
        assignment.save(update_fields=["shown_at"])
    return True


def reservation_length(campaign: Campaign, answered: Answered) -> timedelta:
    """How long a served campaign pair stays reserved for this volunteer.

    Until a volunteer's first campaign answer the reservation is short
    (``PARAEVAL_FIRST_RESERVATION_MINUTES``): volunteers who start and never answer (a script,
    a closed tab) give their pair back within minutes instead of holding it for the full
    ``reservation_minutes``. A real volunteer reads a pair in seconds, and an expired
    reservation is renewed when they come back if the pair is still free.
    """
    minutes = campaign.reservation_minutes
    if answered.campaign == 0:
        minutes = min(minutes, settings.PARAEVAL_FIRST_RESERVATION_MINUTES)
    return timedelta(minutes=minutes)


def _assign(
    volunteer: Volunteer,
    pair: Pair,
    campaign: Campaign,
    now: datetime,
    answered: Answered,
    *,
    reserve: bool = True,
) -> Assignment:
    # Training pairs keep their imported order (source on top) for everyone: the training
    # trial is the same for all judges (paper, section 3.1) and its explanations may say
    # "the first sentence". Campaign pairs get the volunteer's stable top/bottom draw.
    source_on_top = True if pair.is_training else draw_source_on_top(volunteer.token, pair.pk)
    assignment = Assignment.objects.create(
        volunteer=volunteer,
        pair=pair,
        source_on_top=source_on_top,
        position=answered.total + 1,
        shown_at=now,
        # Without ``reserve`` the pair is shown but not held: the volunteer let their last
        # reservation lapse without answering, so they hold nothing until they answer again.
        expires_at=now + reservation_length(campaign, answered) if reserve else now,
    )
    assignment.pair = pair
    return assignment


def _next_check_pair(volunteer: Volunteer, campaign: Campaign) -> Pair | None:
    """A check pair the volunteer has not met, in an order of their own (checks have no target)."""
    candidates = list(
        Pair.objects.filter(campaign=campaign, is_check=True).exclude(
            Exists(Assignment.objects.filter(volunteer=volunteer, pair=OuterRef("pk")))
        )
    )
    if not candidates:
        return None
    return min(candidates, key=lambda pair: hashlib.sha256(f"{volunteer.token}:check:{pair.pk}".encode()).digest())


def check_due(campaign: Campaign, size: CampaignSize, answered: Answered, token: str) -> bool:
    """Whether the volunteer's next campaign item is a check pair (at their own drawn places)."""
    if size.checks == 0 or answered.checks >= size.checks:
        return False
    slot = answered.campaign + answered.checks + 1
    return slot in volunteer_check_slots(campaign, size.pool_up_to_quota, token)


def _next_training_pair(volunteer: Volunteer, campaign: Campaign) -> Pair | None:
    return (
        Pair.objects.filter(campaign=campaign, is_training=True)
        .exclude(Exists(Assignment.objects.filter(volunteer=volunteer, pair=OuterRef("pk"))))
        .order_by("training_position", "id")
        .first()
    )


def _first_candidate(
    volunteer: Volunteer, campaign: Campaign, now: datetime, start: int, exclude: Sequence[int], lock: str
) -> Pair | None:
    """The first available pair: lowest judgement level first, then from the volunteer's point on."""
    for level in range(campaign.judges_per_pair):
        for wrapped in (False, True):
            sql, params = candidate_query(
                volunteer, campaign, now, level=level, start=start, wrapped=wrapped, exclude=exclude, lock=lock
            )
            pair = next(iter(Pair.objects.raw(sql, params)), None)
            if pair is not None:
                return pair
    return None


def _claim_campaign_pair(
    volunteer: Volunteer, campaign: Campaign, now: datetime, step: int, *, take_over: bool = True
) -> Pair | None:
    """Lock and return the first available campaign pair: fewest judgements first, then shuffled.

    When none is free and ``take_over`` allows it, a pair held by a volunteer who has not
    answered is taken over (:func:`_take_over`).
    """
    # Adaptive selection: everyone walks the pool from the start of the planned order (the
    # planner wrote it into ``shuffle_key``), so pairs are first served by increasing key;
    # the level-by-level walk, the reservations and the locks are the same as in a balanced one.
    start = 0 if campaign.selection == "adaptive" else shuffle_point(volunteer.token, step)
    stale: list[int] = []
    while True:
        # A savepoint per attempt: the lock on a pair we end up not taking is released at
        # once, so a volunteer never holds one pair while waiting for another (no deadlock).
        with transaction.atomic():
            pair = _first_candidate(volunteer, campaign, now, start, stale, "skip")
            if pair is None:
                # Every candidate may be locked by allocations that are about to commit (each
                # holds its lock for one short transaction): wait for the first one rather
                # than tell this volunteer the pool is empty.
                pair = _first_candidate(volunteer, campaign, now, start, stale, "wait")
                if pair is None:
                    break
            # The candidate query read counts from its own snapshot; an allocation or an
            # answer that committed before we got the lock is only visible to a new statement.
            if is_available(pair.pk, volunteer, campaign, now):
                return pair
            stale.append(pair.pk)
            transaction.set_rollback(True)
    return _take_over(volunteer, campaign, now) if take_over else None


# A reservation "yields" to a waiting volunteer when its pair has been open for longer than
# the grace period and its holder has not answered a campaign pair within the pace window
# (never, for a volunteer who has not answered yet): the holder is a script, or a person who
# left, and a volunteer who is here now takes the pair. A volunteer at work answers their
# previous pair just before being served the next, so their hold lasts about the pace window
# per pair, and only as long as they keep answering; one answer long ago earns nothing
# (scripts that answered once then idled held whole campaigns when any past answer counted).
_YIELDING = """held.answered_at IS NULL AND held.expires_at > %s AND held.volunteer_id <> %s
  AND held.shown_at <= %s
  AND NOT EXISTS (
    SELECT 1 FROM {judgement} j WHERE j.volunteer_id = held.volunteer_id AND NOT j.is_training AND NOT j.is_check
      AND j.answered_at > %s
  )"""

_HELD_ONLY_BY_YIELDING = """
SELECT p.id FROM {pair} p
WHERE p.campaign_id = %s AND NOT p.is_training AND NOT p.is_check AND p.judgement_count < %s
  AND NOT EXISTS (SELECT 1 FROM {assignment} mine WHERE mine.pair_id = p.id AND mine.volunteer_id = %s)
  AND p.judgement_count + {reserved} - (SELECT COUNT(*) FROM {assignment} held WHERE held.pair_id = p.id AND {yielding})
      < %s
ORDER BY p.judgement_count, p.shuffle_key
LIMIT 20"""


def grace_cutoff(now: datetime) -> datetime:
    """Reservations served before this moment may yield to others (if their holder is idle)."""
    return now - timedelta(seconds=settings.PARAEVAL_RESERVATION_GRACE_SECONDS)


def pace_cutoff(now: datetime) -> datetime:
    """A holder whose last campaign answer came before this moment is idle: their pair may yield."""
    return now - timedelta(seconds=settings.PARAEVAL_RESERVATION_PACE_SECONDS)


def _yield_params(now: datetime) -> list[str | None]:
    """The two moments of the yielding condition: grace (pair served before), pace (last answer before)."""
    adapt = connection.ops.adapt_datetimefield_value
    return [adapt(grace_cutoff(now)), adapt(pace_cutoff(now))]


def _take_over(volunteer: Volunteer, campaign: Campaign, now: datetime) -> Pair | None:
    """A pair held only by idle volunteers (no answer within the pace window, past the grace period), taken over.

    The holders' reservations end at once (they may still answer while the pair is available,
    like after any expiry). Their assignment rows are locked with SKIP LOCKED: a holder busy
    in a request of their own keeps the pair this time, and nobody waits for another
    volunteer's rows (the module's lock order holds).
    """
    tables = {**_tables(), "judgement": connection.ops.quote_name(Judgement._meta.db_table)}
    moment = connection.ops.adapt_datetimefield_value(now)
    cutoffs = _yield_params(now)
    yielding = _YIELDING.format(**tables)
    sql = _HELD_ONLY_BY_YIELDING.format(**tables, reserved=_RESERVED_BY_OTHERS.format(**tables), yielding=yielding)
    target = campaign.judges_per_pair
    params = [campaign.pk, target, volunteer.pk, moment, volunteer.pk, moment, volunteer.pk, *cutoffs, target]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        candidates = [row[0] for row in cursor.fetchall()]
    skip = " FOR NO KEY UPDATE SKIP LOCKED" if connection.vendor == "postgresql" else ""
    for pair_id in candidates:
        with transaction.atomic():
            locked = Pair.objects.raw(f"SELECT * FROM {tables['pair']} WHERE id = %s{skip}", [pair_id])
            pair = next(iter(locked), None)
            if pair is None:
                continue
            with connection.cursor() as cursor:
                cursor.execute(
                    f"SELECT held.id FROM {tables['assignment']} held WHERE held.pair_id = %s AND {yielding}{skip}",
                    [pair_id, moment, volunteer.pk, *cutoffs],
                )
                holders = [row[0] for row in cursor.fetchall()]
            Assignment.objects.filter(pk__in=holders).update(expires_at=now)
            if is_available(pair_id, volunteer, campaign, now):
                return pair
            transaction.set_rollback(True)
    return None


_PLACES = """
SELECT COALESCE(SUM(%s - p.judgement_count), 0),
       COALESCE(SUM(GREATEST(%s - p.judgement_count - (
           SELECT COUNT(*) FROM {assignment} held
           WHERE held.pair_id = p.id AND held.answered_at IS NULL AND held.expires_at > %s
             AND NOT ({yielding_any})
       ), 0)), 0)
FROM {pair} p
WHERE p.campaign_id = %s AND NOT p.is_training AND NOT p.is_check AND p.judgement_count < %s"""

# The same as ``_YIELDING`` without "not this volunteer" (places are counted for a newcomer).
_YIELDING_ANY = """held.shown_at <= %s AND NOT EXISTS (
    SELECT 1 FROM {judgement} j WHERE j.volunteer_id = held.volunteer_id AND NOT j.is_training AND NOT j.is_check
      AND j.answered_at > %s
  )"""


@dataclass(frozen=True)
class Places:
    """What a campaign can still offer: judgements its pairs still need, and those free now.

    ``free`` leaves out the judgements held by active reservations (a reservation that would
    yield to a newcomer, see :func:`_take_over`, does not hold). A campaign with no free place
    cannot serve a pair to a new volunteer: it is *full* (welcome page, staff pages).
    """

    needed: int
    free: int

    @property
    def held(self) -> int:
        return self.needed - self.free

    @property
    def is_full(self) -> bool:
        return self.free == 0

    @property
    def is_complete(self) -> bool:
        """Every pair has all its judges: the campaign can never serve anyone again."""
        return self.needed == 0


# PostgreSQL: what the pairs still need from the kept tallies (corpus pairs, and pairs with at least
# 1 .. target judgements: Σ min(judgement_count, target)), and what the active reservations hold
# (the few unanswered assignments not expired yet, through their index), capped per pair at
# what the pair still needs. Read in one statement, whatever the campaign's size.
_PLACES_KEPT = """
SELECT %s * COALESCE((SELECT SUM(t.pairs) FROM {tally} t WHERE t.campaign_id = %s), 0)
       - COALESCE((SELECT SUM(l.pairs) FROM {levels} l WHERE l.campaign_id = %s AND l.level <= %s), 0),
       COALESCE((
         SELECT SUM(LEAST(%s - p.judgement_count, h.n)) FROM (
           SELECT held.pair_id, COUNT(*) AS n FROM {assignment} held
           WHERE held.answered_at IS NULL AND held.expires_at > %s AND NOT ({yielding_any})
           GROUP BY held.pair_id
         ) h JOIN {pair} p ON p.id = h.pair_id
         WHERE p.campaign_id = %s AND NOT p.is_training AND NOT p.is_check AND p.judgement_count < %s
       ), 0)"""


def places(campaign: Campaign, *, now: datetime | None = None) -> Places:
    """Judgements still needed by the campaign's pairs and those nobody holds now (one statement).

    On PostgreSQL the needed judgements come from the tallies the database keeps
    (:class:`~annotate.models.CampaignTally`, :class:`~annotate.models.JudgedPairsTally`) and the
    held ones from the active reservations: the cost does not grow with the campaign. SQLite
    (the embedded database, small campaigns) walks the pairs that still need judges:
    :func:`places_by_scan`, the same figures.
    """
    if connection.vendor != "postgresql":
        return places_by_scan(campaign, now=now)
    now = now or timezone.now()
    quote = connection.ops.quote_name
    tables = {
        **_tables(),
        "judgement": quote(Judgement._meta.db_table),
        "tally": quote(CampaignTally._meta.db_table),
        "levels": quote(JudgedPairsTally._meta.db_table),
    }
    sql = _PLACES_KEPT.format(**tables, yielding_any=_YIELDING_ANY.format(**tables))
    target, pk = campaign.judges_per_pair, campaign.pk
    moment = connection.ops.adapt_datetimefield_value(now)
    with connection.cursor() as cursor:
        cursor.execute(sql, [target, pk, pk, target, target, moment, *_yield_params(now), pk, target])
        needed, held = cursor.fetchone()
    return Places(needed=int(needed), free=int(needed) - int(held))


def places_by_scan(campaign: Campaign, *, now: datetime | None = None) -> Places:
    """:func:`places` by walking the pairs that still need judges (the allocation index): what
    SQLite runs, and what the tests hold the kept tallies to."""
    now = now or timezone.now()
    tables = {**_tables(), "judgement": connection.ops.quote_name(Judgement._meta.db_table)}
    greatest = "GREATEST" if connection.vendor == "postgresql" else "MAX"
    sql = _PLACES.format(**tables, yielding_any=_YIELDING_ANY.format(**tables)).replace("GREATEST", greatest)
    target = campaign.judges_per_pair
    moment = connection.ops.adapt_datetimefield_value(now)
    with connection.cursor() as cursor:
        cursor.execute(sql, [target, target, moment, *_yield_params(now), campaign.pk, target])
        needed, free = cursor.fetchone()
    return Places(needed=int(needed), free=int(free))


_FULL_CAMPAIGNS = """
SELECT c.slug FROM {campaign} c
WHERE c.is_open
  AND EXISTS (SELECT 1 FROM {pair} q WHERE q.campaign_id = c.id AND NOT q.is_training AND NOT q.is_check)
  AND NOT EXISTS (
    SELECT 1 FROM {pair} p
    WHERE p.campaign_id = c.id AND NOT p.is_training AND NOT p.is_check AND p.judgement_count < c.judges_per_pair
      AND p.judgement_count + (
        SELECT COUNT(*) FROM {assignment} held
        WHERE held.pair_id = p.id AND held.answered_at IS NULL AND held.expires_at > %s AND NOT ({yielding_any})
      ) < c.judges_per_pair
    -- In the allocation index's order, and kept a subplan per campaign (OFFSET stops PostgreSQL
    -- turning it into an anti-join, which hashes every pair of every campaign): it stops at the
    -- first pair with a free place instead.
    ORDER BY p.judgement_count LIMIT 1 OFFSET 0
  )"""


def full_campaign_slugs(*, now: datetime | None = None) -> set[str]:
    """Slugs of the open campaigns with pairs that cannot serve a new volunteer now: one statement.

    The same definition as :attr:`Places.is_full`, for every campaign at once (the staff hub).
    """
    now = now or timezone.now()
    tables = {
        **_tables(),
        "judgement": connection.ops.quote_name(Judgement._meta.db_table),
        "campaign": connection.ops.quote_name(Campaign._meta.db_table),
    }
    sql = _FULL_CAMPAIGNS.format(**tables, yielding_any=_YIELDING_ANY.format(**tables))
    moment = connection.ops.adapt_datetimefield_value(now)
    with connection.cursor() as cursor:
        cursor.execute(sql, [moment, *_yield_params(now)])
        return {row[0] for row in cursor.fetchall()}


_FREE_PLACE = """
SELECT 1 FROM {pair} p
WHERE p.campaign_id = %s AND NOT p.is_training AND NOT p.is_check AND p.judgement_count < %s
  AND p.judgement_count + (
    SELECT COUNT(*) FROM {assignment} held
    WHERE held.pair_id = p.id AND held.answered_at IS NULL AND held.expires_at > %s AND NOT ({yielding_any})
  ) < %s
ORDER BY p.judgement_count, p.shuffle_key
LIMIT 1"""

_NEEDS_JUDGES = """
SELECT 1 FROM {pair} p
WHERE p.campaign_id = %s AND NOT p.is_training AND NOT p.is_check AND p.judgement_count < %s
ORDER BY p.judgement_count, p.shuffle_key
LIMIT 1"""


@dataclass(frozen=True)
class Openness:
    """What the welcome page needs to know, read with statements that stop at the first row."""

    free: bool  # a newcomer can be served a pair now
    complete: bool  # every pair has all its judges

    @property
    def is_full(self) -> bool:
        return not self.free


def openness(campaign: Campaign, *, now: datetime | None = None) -> Openness:
    """Whether a newcomer can be served now, and whether the campaign is complete (cheap).

    The same definitions as :class:`Places`, but each a ``LIMIT 1`` walk of the allocation
    index that stops at the first pair that qualifies, so the welcome page costs the same on a
    900,000-pair pool as on a small one (the staff pages count everything with :func:`places`).
    Both walk in the index's order, which keeps the planner on it (see :func:`campaign_size`).
    """
    now = now or timezone.now()
    tables = {**_tables(), "judgement": connection.ops.quote_name(Judgement._meta.db_table)}
    target = campaign.judges_per_pair
    moment = connection.ops.adapt_datetimefield_value(now)
    with connection.cursor() as cursor:
        cursor.execute(
            _FREE_PLACE.format(**tables, yielding_any=_YIELDING_ANY.format(**tables)),
            [campaign.pk, target, moment, *_yield_params(now), target],
        )
        free = cursor.fetchone() is not None
        complete = False
        if not free:
            cursor.execute(_NEEDS_JUDGES.format(**tables), [campaign.pk, target])
            complete = cursor.fetchone() is None
    return Openness(free=free, complete=complete)


def close_if_complete(campaign: Campaign, complete: bool) -> bool:
    """Close a campaign that closes itself when full, once every pair has its judges."""
    if not (campaign.close_when_full and campaign.is_open and complete):
        return False
    Campaign.objects.filter(pk=campaign.pk).update(is_open=False)
    campaign.is_open = False
    return True


def lock_open_assignments(volunteer: Volunteer) -> QuerySet[Assignment]:
    """The volunteer's unanswered assignments, row-locked (use inside a transaction)."""
    return (
        Assignment.objects.filter(volunteer=volunteer, answered_at__isnull=True)
        .select_related("pair")
        .select_for_update(no_key=True, of=("self",))
        .order_by("shown_at", "id")
    )


def _mark_lapsed(volunteer: Volunteer, now: datetime) -> None:
    """Remember that the volunteer let a reservation run out (their row is locked by the caller)."""
    if volunteer.reservation_lapsed_at is None:
        volunteer.reservation_lapsed_at = now
        Volunteer.objects.filter(pk=volunteer.pk).update(reservation_lapsed_at=now)


def clear_lapse(volunteer: Volunteer) -> None:
    """An answer: the volunteer holds reservations again (no query when nothing lapsed)."""
    if volunteer.reservation_lapsed_at is not None:
        volunteer.reservation_lapsed_at = None
        Volunteer.objects.filter(pk=volunteer.pk).update(reservation_lapsed_at=None)


def next_assignment(volunteer: Volunteer, *, now: datetime | None = None) -> NextPair:
    """The assignment ``volunteer`` should see now (resumed, renewed or new), or why none.

    ``volunteer.campaign`` should be loaded (``select_related``) to save a query.
    """
    now = now or timezone.now()
    campaign = volunteer.campaign
    dropped = False
    with transaction.atomic():
        lock_volunteer(volunteer)
        current = lock_open_assignments(volunteer).first()
        size = campaign_size(campaign)
        answered = answered_by(volunteer)
        if current is not None:
            current.volunteer = volunteer
            if current.expires_at <= now and not (current.pair.is_training or current.pair.is_check):
                _mark_lapsed(volunteer, now)
            if revalidate(current, campaign, now, reshow=True):
                return NextPair(current, None, size, answered)
            current.delete()
            dropped = True

        if answered.training < size.training:
            training = _next_training_pair(volunteer, campaign)
            if training is not None:
                assignment = _assign(volunteer, training, campaign, now, answered)
                return NextPair(assignment, None, size, answered, dropped_expired=dropped)

        if check_due(campaign, size, answered, volunteer.token):
            check = _next_check_pair(volunteer, campaign)
            if check is not None:
                assignment = _assign(volunteer, check, campaign, now, answered)
                return NextPair(assignment, None, size, answered, dropped_expired=dropped)

        if answered.campaign >= campaign.quota:
            return NextPair(None, EndReason.QUOTA, size, answered, dropped)
        # A volunteer whose last reservation lapsed unanswered gets their pairs unreserved (and
        # takes no pair over from anyone) until they answer: reloading never buys a reservation.
        holds = volunteer.reservation_lapsed_at is None
        pair = _claim_campaign_pair(volunteer, campaign, now, step=answered.campaign, take_over=holds)
        if pair is None:
            return NextPair(None, EndReason.EXHAUSTED, size, answered, dropped)
        assignment = _assign(volunteer, pair, campaign, now, answered, reserve=holds)
        return NextPair(assignment, None, size, answered, dropped_expired=dropped)


__all__ = [
    "Answered",
    "CampaignSize",
    "EndReason",
    "NextPair",
    "Openness",
    "Places",
    "answered_by",
    "campaign_size",
    "candidate_query",
    "check_due",
    "check_slots",
    "checks_met",
    "clear_lapse",
    "close_if_complete",
    "draw_source_on_top",
    "full_campaign_slugs",
    "is_available",
    "lock_open_assignments",
    "lock_volunteer",
    "next_assignment",
    "openness",
    "places",
    "reservation_length",
    "revalidate",
    "shuffle_point",
    "volunteer_check_slots",
]
