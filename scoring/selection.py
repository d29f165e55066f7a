"""Plan a campaign's adaptive order from its metric scores, and read the weights back.

:func:`plan_selection` reads the scores the workers computed, gives every pool pair its draw
weight (the norm of its expected influence on the compared ΔAUCs) and order key
(:mod:`scoring.analysis.selection`) and writes them on the pair; the
order key, as a rank, becomes the pair's ``shuffle_key``, which the allocator walks from the
start in an adaptive campaign (annotate/allocation.py). The plan is refused once the campaign
has a campaign judgement: the pairs already judged were drawn with the weights in force, and
the statistics weight them with those.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.db import transaction

from annotate.models import Campaign, Judgement, Pair, parse_metric_names
from scoring.analysis.selection import FLOOR, draw_weights, expected_influence, order_keys, uniform_draw
from scoring.models import MetricConfig, Score

# shuffle_key is a 31-bit integer: the planned order is spread over its range.
_KEY_RANGE = 2**31 - 1


class SelectionError(ValueError):
    """The order cannot be planned; the message says why and what to do."""


@dataclass(frozen=True)
class SelectionPlan:
    """What :func:`plan_selection` wrote."""

    pairs: int
    metrics: list[str]  # the metric configurations compared (labels)
    floor: float
    smallest_weight: float
    unscored: int  # pairs not scored by every compared metric (served early, weight 1)


def _compared_configs(campaign: Campaign) -> list[MetricConfig]:
    scored = list(
        MetricConfig.objects.filter(scores__pair__campaign=campaign, scores__status=Score.Status.DONE)
        .distinct()
        .order_by("metric", "id")
    )
    names = parse_metric_names(campaign.selection_metrics)
    if not names:
        return scored
    chosen = []
    for name in names:
        config = next((config for config in scored if config.metric == name), None)
        if config is None:
            known = ", ".join(sorted({config.metric for config in scored})) or "none yet"
            raise SelectionError(
                f"metric {name!r} has no scores in campaign {campaign.slug!r} (metrics scored: {known}); "
                "score the pairs first or name other metrics"
            )
        chosen.append(config)
    return chosen


def _refuse_if_judged(campaign: Campaign) -> None:
    if Judgement.objects.filter(pair__campaign=campaign, is_training=False, is_check=False).exists():
        raise SelectionError(
            f"campaign {campaign.slug!r} already has judgements: its order cannot be planned again "
            "(the pairs judged were drawn with the weights in force, and the statistics use them)"
        )


def plan_selection(campaign: Campaign, *, seed: int | None = None, floor: float = FLOOR) -> SelectionPlan:
    """Give every pool pair (not training, not check) its draw weight and order key."""
    _refuse_if_judged(campaign)
    seed = settings.PARAEVAL_SEED if seed is None else seed
    configs = _compared_configs(campaign)
    pool = Pair.objects.filter(campaign=campaign, is_training=False, is_check=False)
    ids = np.array(
        pool.order_by("id").values_list("id", flat=True),
        dtype=np.int64,
    )
    scores = np.full((max(len(configs), 2), len(ids)), np.nan)
    for row, config in enumerate(configs):
        sign = 1.0 if config.higher_is_closer else -1.0
        values = Score.objects.filter(
            metric_config=config, pair__campaign=campaign, status=Score.Status.DONE, value__isnull=False
        ).values_list("pair_id", "value")
        for pair_id, value in values:
            position = int(np.searchsorted(ids, pair_id))
            if value is not None and position < len(ids) and ids[position] == pair_id:
                scores[row, position] = sign * value
    size = expected_influence(scores) if len(ids) else np.zeros(0)
    weights = draw_weights(size, floor)
    uniforms = np.array([uniform_draw(seed, campaign.slug, int(pair_id)) for pair_id in ids])
    keys = order_keys(weights, uniforms)
    ranks = np.empty(len(ids), dtype=np.int64)
    ranks[np.argsort(keys, kind="mergesort")] = np.arange(len(ids))
    step = _KEY_RANGE // max(len(ids), 1)
    pairs = [
        Pair(pk=int(pair_id), selection_probability=float(q), selection_key=float(key), shuffle_key=int(rank) * step)
        for pair_id, q, key, rank in zip(ids, weights, keys, ranks, strict=True)
    ]
    with transaction.atomic():
        # The pool's rows locked first: an answer raises its pair's count under the same row lock,
        # so no first judgement can slip in between the check below and the update.
        list(pool.select_for_update(no_key=True).order_by("id").values_list("id", flat=True))
        _refuse_if_judged(campaign)
        Pair.objects.bulk_update(pairs, ["selection_probability", "selection_key", "shuffle_key"], batch_size=2000)
    return SelectionPlan(
        pairs=len(ids),
        metrics=[config.label for config in configs],
        floor=floor,
        smallest_weight=float(weights.min()) if len(ids) else 1.0,
        unscored=int(np.count_nonzero(~np.isfinite(size))),
    )


__all__ = ["SelectionError", "SelectionPlan", "plan_selection"]
