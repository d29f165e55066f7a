"""How well each metric agrees with people: the analyses of the ParaPLUIE paper (section 5).

Pure modules (NumPy / SciPy / scikit-learn / krippendorff, no Django):

- ``labels``      the human reference per pair: volunteers' majority (or imported gold labels)
- ``binary``      threshold sweeps: best accuracy, EER, natural threshold, ROC AUC, top-k curves
- ``correlation`` Pearson / Spearman that say why they are undefined instead of returning NaN
- ``bootstrap``   vectorised percentile intervals for accuracy, AUC and EER
- ``agreement``   Krippendorff's alpha, Cohen's / Fleiss' kappa, Gwet's AC1, per-volunteer figures
- ``report``      everything above for every metric configuration and corpus, as a JSON-ready dict
- ``tables``      the paper's Tables 1-5 (and the rank / correlation summaries) built from a report
- ``formats``     those tables as Markdown, CSV or LaTeX

Django-facing: ``dataset`` (loads one campaign into the pure input) and ``service``
(``campaign_report``: filters, data version, cache).
"""
