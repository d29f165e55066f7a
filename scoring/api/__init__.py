"""REST API of the scoring app: metric configurations, scores and the agreement report."""
