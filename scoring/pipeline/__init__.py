"""The Celery pipeline: which scores are missing, queueing them, the tasks, the workers that compute them."""
