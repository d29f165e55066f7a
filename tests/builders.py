"""One shared set of test builders: small functions that create valid rows with defaults."""

from __future__ import annotations

import itertools
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import Group
from django.utils import timezone

from annotate.labels import EnglishLevel, Label, is_paraphrase
from annotate.models import Campaign, Judgement, Pair, Volunteer
from scoring.models import MetricConfig, Score

_counter = itertools.count(1)
STAFF_PASSWORD = "pw-for-tests"


# The team builders put staff accounts and campaigns in unless told otherwise: a staff member
# sees only their teams' campaigns, and most tests are about one lab's own campaigns.
LAB_TEAM = "Lab"


def make_team(name: str = LAB_TEAM) -> Group:
    """The team (a Django group) of this name, created if new."""
    return Group.objects.get_or_create(name=name)[0]


def make_staff(
    username: str = "staff",
    password: str = STAFF_PASSWORD,
    *,
    superuser: bool = False,
    teams: tuple[str, ...] = (LAB_TEAM,),
) -> Any:
    """A staff account in ``teams`` (``superuser``: one that sees and changes every campaign,
    and everything in the admin)."""
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.create_user(username, password=password, is_staff=True, is_superuser=superuser)
    user.groups.add(*(make_team(name) for name in teams))
    return user


def make_campaign(**fields: Any) -> Campaign:
    number = next(_counter)
    # Test clients answer in milliseconds: the default "too fast" rule (a median under 2 s per
    # pair) would flag every scripted volunteer, so builders switch it off unless asked.
    defaults: dict[str, Any] = {
        "slug": f"campaign-{number}",
        "name": f"Campaign {number}",
        "exclude_median_seconds": None,
    }
    if "team" not in fields:
        defaults["team"] = make_team()
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
    """A volunteer who has read the guidelines and (if any) finished the training steps' pages.

    Pass ``guidelines_seen_at=None`` / ``training_done_seen_at=None`` for one who has not.
    """
    now = timezone.now()
    defaults: dict[str, Any] = {
        "campaign": campaign or make_campaign(),
        "english_level": EnglishLevel.GOOD.value,
        "guidelines_seen_at": now,
        "training_done_seen_at": now,
    }
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


class ScoredCampaign:
    """What :func:`make_scored_campaign` built: the campaign and its rows, for assertions."""

    def __init__(
        self,
        campaign: Campaign,
        pairs: list[Pair],
        volunteers: list[Volunteer],
        configs: dict[str, MetricConfig],
        truth: dict[int, bool],
    ) -> None:
        self.campaign = campaign
        self.pairs = pairs
        self.volunteers = volunteers
        self.configs = configs
        self.truth = truth


_SCORED_TEXT = (
    "the committee approved the new budget for the coming year after a long debate "
    "shares of the company rose sharply in early trading on monday morning "
    "a small boat carried the doctors across the river to the flooded village"
)
_SCORED_WORDS = tuple(_SCORED_TEXT.split(" "))


def make_scored_campaign(
    origins: tuple[str, ...] = ("mrpc", "paws", "llm"),
    pairs_per_origin: int = 8,
    judges: int = 3,
    seed: int = 7,
    training: bool = True,
    failed_scores: int = 1,
    **campaign_fields: Any,
) -> ScoredCampaign:
    """A demo-like campaign: judged pairs across origins, training answers, and scores for a
    LEV-like (lower is closer), a BLEU-like, a BERTScore-like and a ParaPLUIE-like (natural
    threshold 0) metric configuration; ``failed_scores`` BERTScore scores failed. Deterministic."""
    import random

    rng = random.Random(seed)
    campaign = make_campaign(**{"judges_per_pair": judges, **campaign_fields})
    levels = [level.value for level in EnglishLevel]
    volunteers = [make_volunteer(campaign, english_level=levels[i % len(levels)]) for i in range(judges + 2)]
    if training:
        for pair in make_training_pairs(campaign):
            for volunteer in volunteers:
                answer = pair.expected_label if rng.random() < 0.7 else Label.DONT_KNOW.value
                make_judgement(pair, volunteer, answer, is_training=True)
    configs = {
        "lev": make_metric_config("lev", label="LEV"),
        "bleu": make_metric_config("bleu", label="BLEU"),
        "bertscore": make_metric_config("bertscore", label="BERTScore"),
        "parapluie": make_metric_config("parapluie_fs_direct", label="ParaPLUIE FS-DIRECT"),
    }
    pairs: list[Pair] = []
    truth: dict[int, bool] = {}
    now = timezone.now()
    for origin in origins:
        for index in range(pairs_per_origin):
            start = rng.randrange(0, len(_SCORED_WORDS) - 12)
            source_words = _SCORED_WORDS[start : start + 12]
            hypothesis_words = list(source_words)
            for _ in range(rng.randrange(1, 6)):
                hypothesis_words[rng.randrange(len(hypothesis_words))] = rng.choice(_SCORED_WORDS)
            paraphrase = index % 3 != 0  # two thirds paraphrases, as in skewed corpora
            pair = make_pair(
                campaign,
                origin=origin,
                source=" ".join(source_words).capitalize() + ".",
                hypothesis=" ".join(hypothesis_words).capitalize() + ".",
                gold_label=paraphrase,
            )
            pairs.append(pair)
            truth[pair.pk] = paraphrase
            for position, volunteer in enumerate(rng.sample(volunteers, judges)):
                roll = rng.random()
                if roll < 0.05:
                    label = Label.DONT_KNOW
                elif (roll < 0.85) == paraphrase:
                    label = rng.choice([Label.MOSTLY_SIMILAR, Label.SAME_MEANING])
                else:
                    label = rng.choice([Label.VERY_DIFFERENT, Label.SLIGHTLY_SIMILAR])
                answered = now - timedelta(minutes=10 * (judges - position) + index)
                make_judgement(
                    pair,
                    volunteer,
                    label,
                    shown_at=answered - timedelta(seconds=rng.randrange(3, 30)),
                    answered_at=answered,
                )
            from scoring.metrics.lexical import normalised_char_distance

            distance = normalised_char_distance(pair.source, pair.hypothesis)
            make_score(pair, configs["lev"], distance)
            make_score(pair, configs["bleu"], max(0.0, 1 - distance - rng.random() * 0.2))
            make_score(pair, configs["bertscore"], 0.8 + 0.08 * paraphrase + rng.gauss(0, 0.05))
            make_score(pair, configs["parapluie"], (6 if paraphrase else -6) + rng.gauss(0, 5))
    for pair in pairs[:failed_scores]:
        Score.objects.filter(pair=pair, metric_config=configs["bertscore"]).update(
            value=None, status=Score.Status.FAILED, error="RuntimeError: out of memory"
        )
    return ScoredCampaign(campaign, pairs, volunteers, configs, truth)


__all__ = [
    "ScoredCampaign",
    "is_paraphrase",
    "make_campaign",
    "make_judgement",
    "make_metric_config",
    "make_pair",
    "make_score",
    "make_scored_campaign",
    "make_training_pairs",
    "make_volunteer",
]
