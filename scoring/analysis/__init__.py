"""How well each metric agrees with people: the analyses of the ParaPLUIE paper (section 5).

Pure modules (NumPy / SciPy / scikit-learn / krippendorff, no Django):

- ``labels``      the human reference per pair: volunteers' majority (or imported gold labels)
- ``binary``      threshold sweeps: best accuracy, EER, natural threshold, ROC AUC, top-k curves
- ``correlation`` Pearson / Spearman that say why they are undefined instead of returning NaN
- ``bootstrap``   vectorised percentile intervals for accuracy, AUC and EER
- ``agreement``   Krippendorff's alpha, Cohen's / Fleiss' kappa, Gwet's AC1, per-volunteer figures
- ``report``      everything above for every metric configuration and corpus, as typed results
                  (frozen dataclasses; ``report_json`` is their one JSON form)
- ``tables``      the paper's Tables 1-5 (and the rank / correlation summaries) built from a report
- ``formats``     those tables as Markdown, CSV or LaTeX
- ``plain``       typed results to JSON (the report's and the meta-evaluation's one serialisation)

Django-facing: ``dataset`` (loads one campaign into the pure input) and ``service`` (the
report and the meta-evaluation of a campaign: filters, data version, cache, the cpu-queue
tasks sent by name). The tasks (``scoring.reports.tasks``) call the service, never the
reverse: import-linter contracts in ``pyproject.toml`` keep that one way and forbid cycles.
"""
