"""The Django side of the statistics: a campaign loaded into arrays, the cached reports and meta-evaluation,
their tables, and the Celery tasks that compute them off the request path."""
