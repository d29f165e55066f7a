"""Paraphrase metrics behind one interface (:class:`scoring.metrics.base.Metric`).

Nothing here imports torch at import time: heavy libraries load inside the metrics that
need them, the first time they score.
"""
