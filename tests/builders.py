"""One shared set of test builders: small functions that create valid rows with defaults."""

from __future__ import annotations

import itertools
from datetime import timedelta
from typing import Any

from django.utils import timezone

from annotate.labels import EnglishLevel, Label, is_paraphrase
from annotate.models import Campaign, Judgement, Pair, Volunteer
from scoring.models import MetricConfig, Score

_counter = itertools.count(1)


def make_campaign(**fields: Any) -> Campaign:
    number = next(_counter)
    defaults: dict[str, Any] = {"slug": f"campaign-{number}", "name": f"Campaign {number}"}
    return Campaign.objects.create(**{**defaults, **fields})


def make_pair(campaign: Campaign | None = None, **fields: Any) -> Pair:
    number = next(_counter)
    defaults: dict[str, Any] = {
        "campaign": campaign or make_campaign(),
        "external_id": f"p{number}",
        "source": f"The cat number {number} drinks water.",
        "hypothesis": f"Cat number {number} quenches its thirst.",
        "origin": "test",
    }
    return Pair.objects.create(**{**defaults, **fields})


def make_training_pairs(campaign: Campaign, count: int = 5) -> list[Pair]:
    labels = [Label.VERY_DIFFERENT, Label.SLIGHTLY_SIMILAR, Label.MOSTLY_SIMILAR, Label.SAME_MEANING, Label.DONT_KNOW]
    return [
        make_pair(
            campaign,
            external_id=f"training-{position}",
            is_training=True,
            training_position=position,
            expected_label=labels[(position - 1) % len(labels)].value,
            explanation=f"Explanation {position}.",
            origin="training",
        )
        for position in range(1, count + 1)
    ]


def make_volunteer(campaign: Campaign | None = None, **fields: Any) -> Volunteer:
    defaults: dict[str, Any] = {"campaign": campaign or make_campaign(), "english_level": EnglishLevel.GOOD.value}
    return Volunteer.objects.create(**{**defaults, **fields})


def make_judgement(
    pair: Pair, volunteer: Volunteer | None = None, label: Label | str = Label.SAME_MEANING, **fields: Any
) -> Judgement:
    now = timezone.now()
    defaults: dict[str, Any] = {
        "volunteer": volunteer or make_volunteer(pair.campaign),
        "pair": pair,
        "label": Label(label).value,
        "source_on_top": True,
        "is_training": pair.is_training,
        "shown_at": now - timedelta(seconds=7),
        "answered_at": now,
    }
    return Judgement.objects.create(**{**defaults, **fields})


def make_metric_config(metric: str = "lev", **fields: Any) -> MetricConfig:
    number = next(_counter)
    defaults: dict[str, Any] = {
        "metric": metric,
        "config": {"n": number},
        "config_hash": f"{metric}-{number:060d}"[-64:],
        "label": metric,
        "higher_is_closer": metric not in {"lev", "wer"},
        "natural_threshold": 0.0 if metric.startswith("parapluie") else None,
        "queue": "llm" if metric.startswith(("parapluie", "bert", "sbert", "parascore")) else "cpu",
    }
    return MetricConfig.objects.create(**{**defaults, **fields})


def make_score(pair: Pair, metric_config: MetricConfig, value: float | None = 0.5, **fields: Any) -> Score:
    status = Score.Status.DONE if value is not None else Score.Status.FAILED
    defaults: dict[str, Any] = {"pair": pair, "metric_config": metric_config, "value": value, "status": status}
    return Score.objects.create(**{**defaults, **fields})


__all__ = [
    "is_paraphrase",
    "make_campaign",
    "make_judgement",
    "make_metric_config",
    "make_pair",
    "make_score",
    "make_training_pairs",
    "make_volunteer",
]
