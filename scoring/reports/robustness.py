"""The robustness cards of a probe set: each metric's stored scores on the probe pairs, loaded
into arrays and handed to :mod:`scoring.analysis.robustness`, and what each figure can and
cannot conclude."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.db.models import Case, Q, When

from annotate.models import Campaign
from annotate.tallies import changes
from scoring.analysis.cards import ProbeScores
from scoring.analysis.robustness import Figure, ProbeTable, RobustnessCard, robustness_card
from scoring.models import MetricConfig, Score
from scoring.probe_models import ProbePair, ProbeSet
from scoring.tallies import score_changes

# What each figure says, and what it does not: shown with the card.
READINGS = {
    "below_control": (
        "Share of probes the metric scores below a meaning-keeping rewrite of the same sentence (ties count ½): "
        "0.5 is a metric blind to the change, 1 one that always notices it. It says whether the metric sees this "
        "change, not whether it reads meaning: an edit distance also scores high on swaps, which move more "
        "characters than a control changes. The probes are built automatically and some read oddly, which a metric "
        "may punish for fluency rather than meaning."
    ),
    "swap_spearman": (
        "Mean over source pairs of the Spearman correlation between the scores of the pair and its 1-, 2- and "
        "3-swap versions and the expected order (paper 004): 1 is a metric whose scores fall with every swap. "
        "Three swaps also make sentences less fluent, so a metric can rank well by fluency alone."
    ),
    "swap_r_precision": (
        "Share of source pairs whose original pair scores above all its swap versions (paper 004's R-Precision; "
        "ties shared): 0.25 is chance with four candidates. It does not say how far above."
    ),
    "asymmetry": (
        "Mean |m(S, H) - m(H, S)| in the metric's own units (compare metrics through the SD shown): 0 is a "
        "symmetric metric. A paraphrase relation is symmetric, but an asymmetric metric is not wrong by itself "
        "if it was meant to score a candidate against a reference."
    ),
    "length_effect": (
        'Mean change when H opens with a meaning-neutral clause ("As it happens, ..."): 0 is a metric that '
        "ignores the added words. A negative value shows a length penalty; it cannot tell whether the metric "
        "reads the clause as a change of meaning."
    ),
}


# The figures' names as the dashboard's card heads them.
READING_NAMES = {
    "below_control": "below control",
    "swap_spearman": "swap Spearman",
    "swap_r_precision": "swap R-Precision",
    "asymmetry": "asymmetry",
    "length_effect": "length effect",
}


def robustness_readings() -> list[tuple[str, str]]:
    """(figure name, what it can and cannot conclude), in the card's column order."""
    return [(READING_NAMES[key], text) for key, text in READINGS.items()]


@dataclass(frozen=True)
class MetricCard:
    config_id: int
    label: str
    card: RobustnessCard


def probe_set_for(campaign: Campaign) -> ProbeSet | None:
    """The campaign's own probe set if it is one, else the latest probe set built from it."""
    # One query: the campaign's own probe set first, else the latest built from it.
    own_first = Case(When(campaign=campaign, then=0), default=1)
    return (
        ProbeSet.objects.filter(Q(campaign=campaign) | Q(source_campaign=campaign))
        .select_related("campaign")
        .order_by(own_first, "-created_at", "-id")
        .first()
    )


def probe_scores(probe_set: ProbeSet) -> ProbeScores:
    """The probe set's pairs and every metric's raw scores on them (three queries)."""
    rows = list(
        ProbePair.objects.filter(probe_set=probe_set)
        .order_by("pair_id")
        .values_list("pair_id", "kind", "group", "swaps")
    )
    position = {pair_id: i for i, (pair_id, *_rest) in enumerate(rows)}
    group_codes: dict[str, int] = {}
    groups = np.asarray([group_codes.setdefault(group, len(group_codes)) for _, _, group, _ in rows], dtype=np.int64)
    kinds = tuple(kind for _, kind, _, _ in rows)
    swaps = np.asarray([-1 if s is None else s for *_rest, s in rows], dtype=np.int64)
    by_config: dict[int, np.ndarray] = {}
    if rows:
        for pair_id, config_id, value in Score.objects.filter(
            pair__campaign_id=probe_set.campaign_id, status=Score.Status.DONE
        ).values_list("pair_id", "metric_config_id", "value"):
            if pair_id in position:
                by_config.setdefault(config_id, np.full(len(rows), np.nan))[position[pair_id]] = value
    configs = list(
        MetricConfig.objects.filter(pk__in=by_config)
        .order_by("metric", "id")
        .values_list("id", "label", "higher_is_closer")
    )
    return ProbeScores(
        probe_set=probe_set.pk,
        campaign=probe_set.campaign.slug,
        groups=groups,
        kinds=kinds,
        swaps=swaps,
        metrics=configs,
        scores=np.array([by_config[pk] for pk, _, _ in configs]).reshape(len(configs), len(rows)),
    )


def campaign_probe_scores(campaign: Campaign) -> ProbeScores | None:
    """The scores on the campaign's probe set (:func:`probe_set_for`); None without one."""
    probe_set = probe_set_for(campaign)
    return None if probe_set is None else probe_scores(probe_set)


def probe_fingerprint(campaign: Campaign) -> list[object]:
    """What changes when the campaign's probe set or its scores change (the dashboard's version)."""
    probe_set = probe_set_for(campaign)
    if probe_set is None:
        return []
    # The probe campaign's pairs and scores, by the counters the database keeps (indexed reads).
    return [
        probe_set.pk,
        probe_set.campaign_id,
        changes(probe_set.campaign_id).count,
        score_changes(probe_set.campaign_id).count,
    ]


def robustness_cards(
    probe_set: ProbeSet, *, resamples: int, seed: int, labels: list[str] | None = None
) -> list[MetricCard]:
    """One card per metric configuration with scores on the probe set (``labels``: only these)."""
    scored = probe_scores(probe_set)
    if not scored.kinds:
        return []
    names = dict(MetricConfig.objects.filter(pk__in=[pk for pk, _, _ in scored.metrics]).values_list("id", "metric"))
    cards = []
    for row, (config_id, label, higher) in enumerate(scored.metrics):
        if labels and label not in labels and names[config_id] not in labels:
            continue
        oriented = scored.scores[row] if higher else -scored.scores[row]
        table = ProbeTable(groups=scored.groups, kinds=scored.kinds, swaps=scored.swaps, scores=oriented)
        cards.append(MetricCard(config_id, label, robustness_card(table, resamples=resamples, seed=seed)))
    return cards


def _figure_text(figure: Figure, digits: int = 3) -> str:
    if figure.value is None:
        return "—"
    text = f"{figure.value:.{digits}f}"
    if figure.interval is not None:
        text += f" [{figure.interval.low:.{digits}f}, {figure.interval.high:.{digits}f}]"
    return f"{text} (n={figure.groups})"


def card_lines(cards: list[MetricCard]) -> list[str]:
    """The cards as Markdown: one table row per metric, then what each column means."""
    if not cards:
        return ["No metric has scores on this probe set yet."]
    kinds = [row.kind for row in cards[0].card.below_control]
    header = [
        *(f"{kind} below control" for kind in kinds),
        "swap Spearman",
        "swap R-Precision",
        "asymmetry",
        "length effect",
        "SD",
    ]
    lines = ["| metric | " + " | ".join(header) + " |", "|---" * (len(header) + 1) + "|"]
    for metric in cards:
        card = metric.card
        cells = [_figure_text(row.share) for row in card.below_control]
        cells += [_figure_text(card.swap_spearman), _figure_text(card.swap_r_precision)]
        cells += [_figure_text(card.asymmetry), _figure_text(card.length_effect)]
        cells.append("—" if card.scale is None else f"{card.scale:.3f}")
        lines.append(f"| {metric.label} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("95 % intervals resample source pairs; n is the number of source pairs a figure rests on.")
    for name, reading in READINGS.items():
        lines.append(f"- {name.replace('_', ' ')}: {reading}")
    return lines


@dataclass(frozen=True)
class ProbeSample:
    """One stored probe pair, for a researcher to judge the probes' quality by eye."""

    pair_id: int
    kind: str
    source: str
    hypothesis: str
    expected_paraphrase: bool | None
    swaps: int | None
    detail: str


def probe_samples(probe_set: ProbeSet, per_kind: int) -> list[ProbeSample]:
    """The first ``per_kind`` pairs of each kind in a random order fixed by the set's seed."""
    rows = ProbePair.objects.filter(probe_set=probe_set).select_related("pair").order_by("pair_id")
    by_kind: dict[str, list[ProbePair]] = {}
    for row in rows:
        by_kind.setdefault(row.kind, []).append(row)
    rng = np.random.default_rng(probe_set.seed)
    samples = []
    for kind in sorted(by_kind):
        members = by_kind[kind]
        for index in sorted(rng.permutation(len(members))[:per_kind]):
            row = members[int(index)]
            samples.append(
                ProbeSample(
                    row.pair_id,
                    kind,
                    row.pair.source,
                    row.pair.hypothesis,
                    row.expected_paraphrase,
                    row.swaps,
                    row.detail,
                )
            )
    return samples


def robustness_dict(probe_set: ProbeSet, cards: list[MetricCard], samples: list[ProbeSample]) -> dict[str, object]:
    """The cards, their readings and a sample of each kind as plain JSON (API)."""
    from scoring.analysis.plain import to_json

    return {
        "probe_set": probe_set.pk,
        "campaign": probe_set.campaign.slug,
        "source_campaign": probe_set.source_campaign.slug if probe_set.source_campaign else None,
        "seed": probe_set.seed,
        "pipeline": probe_set.pipeline,
        "cards": to_json(cards),
        "readings": READINGS,
        "samples": to_json(samples),
    }
