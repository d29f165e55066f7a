"""ParaPLUIE with a judge model served behind an OpenAI-compatible API (vLLM, llama.cpp, TGI, Ollama).

ParaPLUIE needs one distribution: the model's next token right after the prompt. A served judge
reads it from the server in one of two ways, chosen by a probe of the server (:func:`probe`,
once per process and model, shown on the status page):

* **top-k**: one request per pair, ``max_tokens: 1``, temperature 0, the largest ``logprobs``
  (top log-probabilities) the server allows, on ``/v1/completions`` with the prompt rendered
  here with the model's chat template (:mod:`scoring.metrics.chat_templates`: the text the
  in-process judge gives its model), or on ``/v1/chat/completions`` with the server's own
  template (``chat_template=server``). The score is log p(yes) - log p(no) for the template's
  answers, as the in-process judge reads them (one spelling each, the template's). An answer
  that is not among the server's top k is **a failed score with its reason**, never a silent 0
  or a clipped value.
* **exact**: where the server returns prompt log-probabilities (``echo: true`` with
  ``logprobs``: llama-cpp-python's server, vLLM), the prompt followed by each answer is sent and
  the answer tokens' log-probabilities are summed (an answer of several tokens, French "Oui"
  in SmolLM2's tokenizer, included). ``mode=auto`` uses it for the pairs top-k could not score.

Requests go out from a thread pool (``concurrency`` in flight per worker process), each thread
with its own keep-alive connection. Retries: urllib3's ``Retry`` on the connection (429 and 5xx
answers, honouring ``Retry-After``; refused, dropped and timed-out connections), with
exponential back-off and jitter. Per request rather than Celery's task retry: a dropped
connection re-sends one pair's request, not the batch's, and the answers already in are kept.
After the last retry the pair's score is failed with the reason. ``rate`` caps the requests
per second of one worker process.

No torch, no transformers: requests, Jinja2 and (for a GGUF chat template) gguf only.
"""

from __future__ import annotations

import functools
import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from scoring.metrics import environment
from scoring.metrics.base import (
    Direction,
    InvalidPairError,
    Metric,
    MetricError,
    MetricUnavailable,
    Pair,
    ScoreOutcome,
    check_pair,
)
from scoring.metrics.chat_templates import SERVER, ChatTemplate, load_chat_template
from scoring.metrics.judges import JudgeModel, ServedEndpoint
from scoring.metrics.templates import Messages, PromptTemplate, TemplateKind, get_template

logger = logging.getLogger(__name__)

# Bump when a change here changes a served judge's numbers for the same server and template.
SERVED_VERSION = 1
# Top-k sizes the probe tries, largest first (OpenAI's and vLLM's default limit is 20).
TOP_K_TRIES = (20, 10, 5, 2, 1)
PROBE_QUESTION: Messages = [
    {
        "role": "user",
        "content": 'Do "The cat is alive." and "The cat was alive." mean the same thing? Answer Yes or No.',
    }
]
RETRY_STATUSES = (429, 500, 502, 503, 504)


class ServedError(MetricError):
    """A request to the server that failed for good (after the retries); the message says how."""


class NoAnswer(ServedError):
    """The server did not answer at all (refused, dropped or timed-out connection)."""


class ServerUnreachable(MetricUnavailable):
    """The server could not be asked who it is (down, wrong address, wrong key)."""


# --- HTTP -------------------------------------------------------------------------------------


class RateLimiter:
    """At most ``rate`` request starts per second, shared by the threads of one process.

    Hand-written: a start time handed out under a lock is all it takes, and the libraries that
    do this (pyrate-limiter, limits) bring storage back-ends this does not need. ``sends`` keeps
    the last start times it handed out (monotonic seconds), for the status of a worker and tests.
    """

    def __init__(self, rate: float) -> None:
        self.interval = 1.0 / rate if rate > 0 else 0.0
        self._next = 0.0
        self._lock = threading.Lock()
        self.sends: deque[float] = deque(maxlen=1024)

    def wait(self) -> None:
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next) if self.interval else now
            self._next = start + self.interval
            self.sends.append(start)
        if start > now:
            time.sleep(start - now)


class ServedClient:
    """JSON requests to one server: keep-alive sessions (one per thread), retries, a rate limit."""

    def __init__(self, endpoint: ServedEndpoint, *, retries: int | None = None) -> None:
        self.endpoint = endpoint
        self.retries = endpoint.retries if retries is None else retries
        self.limiter = RateLimiter(endpoint.rate)
        self._local = threading.local()
        self._headers = {"Content-Type": "application/json"}
        key = read_api_key(endpoint)
        if key:
            self._headers["Authorization"] = f"Bearer {key}"

    def _session(self) -> Any:
        session = getattr(self._local, "session", None)
        if session is None:
            import requests
            from requests.adapters import HTTPAdapter
            from urllib3.util.retry import Retry

            retry = Retry(
                total=self.retries,
                connect=self.retries,
                read=self.retries,
                status=self.retries,
                other=self.retries,
                backoff_factor=0.5,  # 0.5 s, 1 s, 2 s, ... (with jitter), at most backoff_max
                backoff_max=20.0,
                backoff_jitter=0.25,
                status_forcelist=RETRY_STATUSES,
                allowed_methods=None,  # POSTs too: scoring a prompt changes nothing on the server
                respect_retry_after_header=True,
                raise_on_status=False,  # the last answer comes back, and its text goes into the reason
            )
            session = requests.Session()
            session.mount("http://", HTTPAdapter(max_retries=retry, pool_connections=1, pool_maxsize=1))
            session.mount("https://", HTTPAdapter(max_retries=retry, pool_connections=1, pool_maxsize=1))
            session.headers.update(self._headers)
            self._local.session = session
        return session

    def url(self, path: str) -> str:
        return f"{self.endpoint.base_url}{path}"

    def get(self, path: str, *, timeout: float | None = None) -> dict[str, Any]:
        return self._request("GET", path, None, timeout)

    def post(self, path: str, body: dict[str, Any], *, timeout: float | None = None) -> dict[str, Any]:
        return self._request("POST", path, body, timeout)

    def _request(self, method: str, path: str, body: dict[str, Any] | None, timeout: float | None) -> dict[str, Any]:
        import requests

        self.limiter.wait()
        wait = timeout or self.endpoint.timeout
        try:
            response = self._session().request(method, self.url(path), json=body, timeout=(min(wait, 10.0), wait))
        except requests.RequestException as error:
            tries = f" after {self.retries + 1} attempts" if self.retries else ""
            raise NoAnswer(f"{self.url(path)} did not answer{tries}: {_short(error)}") from None
        if response.status_code >= 400:
            raise ServedError(
                f"{self.url(path)} answered HTTP {response.status_code}: "
                f"{response.text.strip()[:300] or response.reason}"
            )
        try:
            data = response.json()
        except ValueError:
            raise ServedError(
                f"{self.url(path)} answered something that is not JSON: {response.text[:200]!r}"
            ) from None
        if not isinstance(data, dict):
            raise ServedError(f"{self.url(path)} answered {type(data).__name__}, not a JSON object")
        return data


def _short(error: BaseException) -> str:
    text = str(error)
    return f"{type(error).__name__}: {text[:300]}"


def read_api_key(endpoint: ServedEndpoint) -> str:
    """The API key in ``api_key_file`` (stripped), or "" when none is configured."""
    if not endpoint.api_key_file:
        return ""
    path = Path(endpoint.api_key_file).expanduser()
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError as error:
        raise MetricUnavailable(f"api_key_file={endpoint.api_key_file!r}: cannot read it ({error.strerror})") from None


# --- What the server is, and what it can do ---------------------------------------------------


class UnreachableServers:
    """Servers that did not answer the probe lately, each remembered for ``served_retry_after`` s.

    Every process that builds the enabled metrics probes a served judge's server, the web process
    included (configuration hashes), and builds them again while one is unavailable. Without this
    back-off every answer and staff page would ask a dead server again and wait its timeout.
    ``attempts`` counts the probes that really went out, per address (the status page and tests).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._failed: dict[str, tuple[float, str]] = {}
        self.attempts: dict[str, int] = {}

    def check(self, endpoint: ServedEndpoint) -> None:
        """Raise :class:`ServerUnreachable` (the last reason) while ``endpoint`` is in its back-off."""
        with self._lock:
            failed = self._failed.get(endpoint.base_url)
        if failed is None:
            return
        since, reason = failed
        retry_after = environment.current().served_retry_after
        left = since + retry_after - time.monotonic()
        if left > 0:
            raise ServerUnreachable(f"{reason} (asked again in {left:.0f} s)")
        with self._lock:
            self._failed.pop(endpoint.base_url, None)

    def remember(self, endpoint: ServedEndpoint, reason: str) -> None:
        with self._lock:
            self._failed[endpoint.base_url] = (time.monotonic(), reason)

    def count_attempt(self, endpoint: ServedEndpoint) -> None:
        with self._lock:
            self.attempts[endpoint.base_url] = self.attempts.get(endpoint.base_url, 0) + 1

    def forget(self) -> None:
        with self._lock:
            self._failed.clear()
            self.attempts.clear()


unreachable = UnreachableServers()


@dataclass(frozen=True)
class ServerIdentity:
    """What the server reports about the model it serves (stable fields of ``/v1/models``)."""

    model: str  # the id requests name
    details: tuple[tuple[str, Any], ...] = ()  # root, parent, max_model_len, owned_by


def identify(endpoint: ServedEndpoint) -> ServerIdentity:
    """Ask ``/v1/models`` which model the server serves (remembered per process once it answered;
    a failure is remembered for ``served_retry_after`` seconds, then the server is asked again)."""
    unreachable.check(endpoint)
    try:
        return _identify(endpoint)
    except MetricUnavailable as error:
        unreachable.remember(endpoint, str(error))
        raise


@functools.lru_cache(maxsize=16)
def _identify(endpoint: ServedEndpoint) -> ServerIdentity:
    unreachable.count_attempt(endpoint)
    # No retry and a short wait: the web process builds the metrics too, and must not hang on a dead server.
    client = ServedClient(endpoint, retries=0)
    try:
        listing = client.get("/v1/models", timeout=min(endpoint.timeout, environment.current().served_probe_timeout))
    except ServedError as error:
        raise ServerUnreachable(f"served judge at {endpoint.base_url}: {error}") from None
    models = [item for item in listing.get("data") or [] if isinstance(item, dict) and item.get("id")]
    ids = [str(item["id"]) for item in models]
    if endpoint.served_model:
        chosen = [item for item in models if item["id"] == endpoint.served_model]
        if not chosen:
            raise ServerUnreachable(
                f"served judge at {endpoint.base_url}: it serves {', '.join(ids) or 'no model'}, "
                f"not served_model={endpoint.served_model!r}"
            )
    elif len(models) != 1:
        raise ServerUnreachable(
            f"served judge at {endpoint.base_url}: it serves {len(models)} models ({', '.join(ids)}); "
            "name one with served_model="
        )
    else:
        chosen = models
    item = chosen[0]
    # `created` changes with every listing on some servers (vLLM): only stable fields.
    details = tuple(
        (key, item[key]) for key in ("root", "parent", "max_model_len", "owned_by") if item.get(key) is not None
    )
    return ServerIdentity(str(item["id"]), details)


@dataclass(frozen=True)
class Capabilities:
    """What the probe found the server answers (one line each on the status page)."""

    completions_top_k: int  # largest top_logprobs /v1/completions honours (0: no log-probabilities)
    chat_top_k: int  # the same for /v1/chat/completions
    echo: bool  # /v1/completions with echo gives the prompt's log-probabilities
    notes: tuple[str, ...] = ()  # what each endpoint answered where it gave nothing

    rendered_here: bool = True  # False: chat_template=server, /v1/completions was not asked

    def lines(self) -> list[str]:
        def top(k: int) -> str:
            return f"top {k} log-probabilities" if k else "no log-probabilities"

        completions = top(self.completions_top_k) if self.rendered_here else "not asked (chat_template=server)"
        echo = ("yes" if self.echo else "no") if self.rendered_here else "not asked (chat_template=server)"
        return [
            f"/v1/completions: {completions}",
            f"/v1/chat/completions: {top(self.chat_top_k)}",
            f"prompt log-probabilities (echo): {echo}",
            *self.notes,
        ]


@dataclass(frozen=True)
class Plan:
    """How a served judge reads the answer: the probe's findings and the mode chosen from them."""

    capabilities: Capabilities
    top_k: int  # 0: no top-k reading
    exact: bool  # prompt + answer with echo (all pairs in mode=exact, the leftovers in auto)
    chat: bool  # /v1/chat/completions with the server's template

    @property
    def mode(self) -> str:
        if self.chat:
            return f"top-{self.top_k}, server's chat template"
        if self.top_k and self.exact:
            return f"top-{self.top_k} + exact"
        return f"top-{self.top_k}" if self.top_k else "exact"


def _completion_body(model: str, prompt: str, **extra: Any) -> dict[str, Any]:
    return {"model": model, "prompt": prompt, "max_tokens": 1, "temperature": 0, **extra}


def _chat_body(model: str, messages: Messages, **extra: Any) -> dict[str, Any]:
    return {"model": model, "messages": messages, "max_tokens": 1, "temperature": 0, **extra}


def probe(endpoint: ServedEndpoint, chat_template: ChatTemplate | None, model: str) -> Capabilities:
    """Ask the server, once, which ways of reading log-probabilities it answers.

    A request that gets no answer at all ends the probe (:class:`ServerUnreachable`, remembered
    for the back-off): the web process waits on at most one probe request of a hung server."""
    try:
        return _probe(endpoint, chat_template, model)
    except NoAnswer as error:
        raise ServerUnreachable(f"served judge at {endpoint.base_url}: {error}") from None


def _probe(endpoint: ServedEndpoint, chat_template: ChatTemplate | None, model: str) -> Capabilities:
    client = ServedClient(endpoint, retries=0)  # no retry: a server that does not answer is asked later
    timeout = min(endpoint.timeout, environment.current().served_probe_timeout)
    notes: list[str] = []
    prompt = chat_template.render(PROBE_QUESTION) if chat_template is not None else None
    completions = chat = 0
    cap = [k for k in TOP_K_TRIES if k <= endpoint.top_logprobs] or [endpoint.top_logprobs]
    if endpoint.top_logprobs not in cap:
        cap.insert(0, endpoint.top_logprobs)
    if prompt is not None:
        completions = _largest_top_k(
            cap,
            lambda k: _completion_top(
                client.post("/v1/completions", _completion_body(model, prompt, logprobs=k), timeout=timeout)
            ),
            f"/v1/completions with logprobs={'/'.join(map(str, cap))}",
            notes,
        )
    chat = _largest_top_k(
        cap,
        lambda k: _chat_top(
            client.post(
                "/v1/chat/completions",
                _chat_body(model, PROBE_QUESTION, logprobs=True, top_logprobs=k),
                timeout=timeout,
            )
        ),
        f"/v1/chat/completions with logprobs and top_logprobs={'/'.join(map(str, cap))}",
        notes,
    )
    echo = False
    if prompt is not None:
        try:
            answer = client.post(
                "/v1/completions", _completion_body(model, prompt + "Yes", echo=True, logprobs=1), timeout=timeout
            )
            echo = _answer_log_prob(answer, "Yes") is not None
        except NoAnswer:
            raise
        except (ServedError, MissingLogprobs, AnswerMerged) as error:
            notes.append(f"/v1/completions with echo: {error}")
    return Capabilities(completions, chat, echo, tuple(notes), prompt is not None)


def _largest_top_k(cap: list[int], ask: Callable[[int], Any], asked: str, notes: list[str]) -> int:
    """The top-k one endpoint answers, trying each of ``cap`` in turn (0, with a note, if none)."""
    note = ""
    for k in cap:
        try:
            top = ask(k)
        except NoAnswer:
            raise
        except (ServedError, MissingLogprobs) as error:
            note = f"{asked}: {error}"
            continue
        return min(k, len(top))
    notes.append(note)
    return 0


def plan_for(endpoint: ServedEndpoint, capabilities: Capabilities, served: str) -> Plan:
    """The way to read answers this server allows, or :class:`MetricUnavailable` naming what is missing."""
    where = f"the server at {endpoint.base_url} ({served})"
    detail = "; ".join(capabilities.notes)
    if endpoint.chat_template == SERVER:
        if not capabilities.chat_top_k:
            raise MetricUnavailable(
                f"{where} answers /v1/chat/completions without the 'logprobs' field (top_logprobs): "
                f"ParaPLUIE needs the answer token's log-probabilities ({detail})"
            )
        return Plan(capabilities, capabilities.chat_top_k, False, True)
    if not capabilities.completions_top_k and not capabilities.echo:
        raise MetricUnavailable(
            f"{where} answers /v1/completions without the 'logprobs' field (neither top log-probabilities nor "
            f"echoed prompt log-probabilities): ParaPLUIE needs the answer token's log-probabilities ({detail})"
        )
    if endpoint.mode == "exact":
        if not capabilities.echo:
            raise MetricUnavailable(
                f"{where}: mode=exact, but it returns no prompt log-probabilities with echo ({detail})"
            )
        return Plan(capabilities, 0, True, False)
    if endpoint.mode == "top-k":
        if not capabilities.completions_top_k:
            raise MetricUnavailable(f"{where}: mode=top-k, but /v1/completions returns no 'logprobs' ({detail})")
        return Plan(capabilities, capabilities.completions_top_k, False, False)
    return Plan(capabilities, capabilities.completions_top_k, capabilities.echo, False)


# --- Reading answers ----------------------------------------------------------------------------


class MissingLogprobs(MetricError):
    """An answer without the log-probabilities asked for; the message names the missing field."""


class AnswerMerged(MetricError):
    """The server's tokens of prompt + answer do not end with the answer's own tokens."""


def _choice(answer: dict[str, Any]) -> dict[str, Any]:
    choices = answer.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise MissingLogprobs("no 'choices' in the answer")
    return choices[0]


def _completion_top(answer: dict[str, Any]) -> dict[str, float]:
    logprobs = _choice(answer).get("logprobs")
    if not isinstance(logprobs, dict):
        raise MissingLogprobs("choices[0].logprobs is missing")
    tops = logprobs.get("top_logprobs")
    if not isinstance(tops, list) or not tops or not isinstance(tops[0], dict) or not tops[0]:
        raise MissingLogprobs("choices[0].logprobs.top_logprobs is missing")
    return {str(token): float(value) for token, value in tops[0].items()}


def _chat_top(answer: dict[str, Any]) -> dict[str, float]:
    logprobs = _choice(answer).get("logprobs")
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not isinstance(content, list) or not content or not isinstance(content[0], dict):
        raise MissingLogprobs("choices[0].logprobs.content is missing")
    tops = content[0].get("top_logprobs")
    if not isinstance(tops, list) or not tops:
        raise MissingLogprobs("choices[0].logprobs.content[0].top_logprobs is missing")
    found: dict[str, float] = {}
    for item in tops:
        if isinstance(item, dict) and "token" in item and "logprob" in item:
            # Keep the first (highest) entry when two tokens decode to the same text.
            found.setdefault(str(item["token"]), float(item["logprob"]))
    return found


def _answer_log_prob(answer: dict[str, Any], word: str) -> float | None:
    """Sum of the log-probabilities of the echoed tokens that spell ``word`` at the prompt's end.

    The echo holds the prompt's tokens, the answer's, then what the server generated
    (``usage.completion_tokens``, at most one): the answer's tokens are found from the end, by
    their text. ``None`` when the echo carries no prompt log-probabilities.
    """
    choice = _choice(answer)
    logprobs = choice.get("logprobs")
    if not isinstance(logprobs, dict):
        raise MissingLogprobs("choices[0].logprobs is missing")
    tokens = logprobs.get("tokens")
    values = logprobs.get("token_logprobs")
    if not isinstance(tokens, list) or not isinstance(values, list) or len(tokens) != len(values):
        raise MissingLogprobs("choices[0].logprobs.tokens / token_logprobs are missing")
    generated = len(tokens) - _echoed_count(tokens, answer, choice)
    end = len(tokens) - generated
    spelled = ""
    total = 0.0
    index = end
    while index > 0 and len(spelled) < len(word):
        index -= 1
        value = values[index]
        if value is None:
            return None
        spelled = str(tokens[index]) + spelled
        total += float(value)
    if spelled != word:
        raise AnswerMerged(
            f"the server's tokens for prompt + {word!r} end with {spelled!r}, not with {word!r}: "
            "the answer merges with the prompt's end"
        )
    return total


def _echoed_count(tokens: list[Any], answer: dict[str, Any], choice: dict[str, Any]) -> int:
    usage = answer.get("usage")
    generated = usage.get("completion_tokens") if isinstance(usage, dict) else None
    if isinstance(generated, int) and 0 <= generated <= len(tokens):
        return len(tokens) - generated
    # No usage: what was generated is the text after the prompt in the echo.
    text = choice.get("text")
    return len(tokens) - (1 if isinstance(text, str) and tokens and text.endswith(str(tokens[-1])) else 0)


# --- The judge ---------------------------------------------------------------------------------


@dataclass
class ServedJudge:
    """One served model, identified and probed: everything a pair's request needs."""

    endpoint: ServedEndpoint
    identity: ServerIdentity
    chat_template: ChatTemplate | None  # None: the server's own (chat endpoint)
    plan: Plan
    client: ServedClient
    pool: ThreadPoolExecutor

    @property
    def server_label(self) -> str:
        return self.endpoint.base_url.split("//", 1)[-1]

    @property
    def model_label(self) -> str:
        return self.identity.model.rstrip("/").rsplit("/", 1)[-1].removesuffix(".gguf")


def connect(endpoint: ServedEndpoint) -> ServedJudge:
    """The served judge of ``endpoint``: identified, probed and refused with the reason if it
    gives no log-probabilities (once per process; an unreachable server is asked again later)."""
    identity = identify(endpoint)
    try:
        return _connect(endpoint, identity)
    except MetricUnavailable as error:
        unreachable.remember(endpoint, str(error))
        raise


@functools.lru_cache(maxsize=16)
def _connect(endpoint: ServedEndpoint, identity: ServerIdentity) -> ServedJudge:
    unreachable.count_attempt(endpoint)
    chat_template = None if endpoint.chat_template == SERVER else load_chat_template(endpoint.chat_template)
    capabilities = probe(endpoint, chat_template, identity.model)
    plan = plan_for(endpoint, capabilities, identity.model)
    logger.info("served judge %s at %s: %s", identity.model, endpoint.base_url, plan.mode)
    pool = ThreadPoolExecutor(max_workers=endpoint.concurrency, thread_name_prefix="served-judge")
    return ServedJudge(endpoint, identity, chat_template, plan, ServedClient(endpoint), pool)


def forget_connections() -> None:
    """Forget identified and probed servers (tests that restart one with other options)."""
    _identify.cache_clear()
    _connect.cache_clear()
    unreachable.forget()


class ServedParaPluie(Metric):
    """ParaPLUIE with one prompt template on a served judge model (see the module docstring)."""

    name: ClassVar[str] = "parapluie"  # each instance is parapluie_<template>
    direction = Direction.HIGHER_IS_CLOSER
    natural_threshold = 0.0
    description = "log p(yes) - log p(no) of a served causal LM after a prompt template (Lemesle et al., 2025)."

    def __init__(self, template: str, judge: JudgeModel, *, template_dirs: Iterable[str | Path] | None = None) -> None:
        if judge.served is None:
            raise ValueError(f"judge model {judge.name} is not served (no server=)")
        self.template: PromptTemplate = get_template(template, template_dirs)
        if self.template.kind is TemplateKind.INDIRECT:
            raise ValueError(
                f"served judge {judge.name}: the template {self.template.name!r} generates an explanation first "
                "(INDIRECT); served judges score question templates (direct, fs_direct and the like)"
            )
        self.name = f"parapluie_{self.template.name}"  # type: ignore[misc]
        self.judge_model = judge
        self.endpoint: ServedEndpoint = judge.served
        self.queue = judge.queue  # type: ignore[misc]
        # Who the server says it serves, and how it answers: its identity is the configuration's.
        self.served = connect(self.endpoint)

    def config(self) -> dict[str, Any]:
        """The server's model (its ``/v1/models`` id and stable details), the chat template's hash
        (or the server's own), the template and answers. The address is left out: the same model
        moved to another host gives the same numbers."""
        served = self.served
        return {
            "model": {
                "served": served.identity.model,
                **dict(served.identity.details),
                "chat_template": served.chat_template.sha256 if served.chat_template else SERVER,
            },
            "template": self.template.name,
            "template_sha256": self.template.text_hash,
            "answers": [self.template.yes, self.template.no],
            "method": "served_answer_log_probabilities",
            "version": SERVED_VERSION,
        }

    @property
    def label(self) -> str:
        served = self.served
        return f"{self.name}[{served.model_label}, served at {served.server_label}, {served.plan.mode}]"

    def check_available(self) -> None:
        """The probe refused nothing (it ran at construction); the template reads fine."""

    # --- Scoring ------------------------------------------------------------------------------

    def prompt(self, pair: Pair) -> str:
        """The prompt text sent to ``/v1/completions`` (rendered here with the model's template)."""
        if self.served.chat_template is None:
            raise ValueError("chat_template=server: the server renders the prompt")
        return self.served.chat_template.render(self.template.question(*pair))

    def _score(self, pairs: list[Pair]) -> list[float]:
        outcomes = self.score_many(pairs)
        failed = [outcome.error for outcome in outcomes if not outcome.ok]
        if failed:
            raise MetricError(f"{len(failed)} of {len(pairs)} pairs failed: {failed[0]}")
        return [float(outcome.value) for outcome in outcomes if outcome.value is not None]

    def score_many(self, pairs: Sequence[object]) -> list[ScoreOutcome]:
        """One outcome per pair, ``concurrency`` requests in flight; a pair that fails says why."""
        outcomes: list[ScoreOutcome | None] = [None] * len(pairs)
        valid: list[tuple[int, Pair]] = []
        for index, pair in enumerate(pairs):
            try:
                valid.append((index, check_pair(pair, index)))
            except InvalidPairError as error:
                outcomes[index] = ScoreOutcome(None, str(error))
        results = self.served.pool.map(self._score_one, [pair for _, pair in valid])
        for (index, _), outcome in zip(valid, results, strict=True):
            outcomes[index] = outcome
        return [outcome for outcome in outcomes if outcome is not None]

    def _score_one(self, pair: Pair) -> ScoreOutcome:
        served = self.served
        try:
            if served.plan.chat:
                return self._top_k(served, _chat_top(self._chat(pair)), None)
            prompt = self.prompt(pair)
            if served.plan.top_k:
                return self._top_k(served, _completion_top(self._complete(prompt, logprobs=served.plan.top_k)), prompt)
            return self._exact(prompt)
        except (ServedError, MissingLogprobs, AnswerMerged) as error:
            return ScoreOutcome(None, f"served judge {served.model_label} at {served.server_label}: {error}")

    def _top_k(self, served: ServedJudge, top: dict[str, float], prompt: str | None) -> ScoreOutcome:
        yes, no = self.template.yes, self.template.no
        missing = [word for word in (yes, no) if word not in top]
        if not missing:
            return _value(top[yes] - top[no])
        if served.plan.exact and prompt is not None:
            return self._exact(prompt)
        names = " and ".join(repr(word) for word in missing)
        verb = "is" if len(missing) == 1 else "are"
        return ScoreOutcome(None, f"{names} {verb} not among the server's top {served.plan.top_k}")

    def _exact(self, prompt: str) -> ScoreOutcome:
        values = []
        for word in (self.template.yes, self.template.no):
            answer = self._complete(prompt + word, logprobs=1, echo=True)
            value = _answer_log_prob(answer, word)
            if value is None:
                raise MissingLogprobs("the echo carries no prompt log-probabilities (token_logprobs are null)")
            values.append(value)
        return _value(values[0] - values[1])

    def _complete(self, prompt: str, **extra: Any) -> dict[str, Any]:
        return self.served.client.post("/v1/completions", _completion_body(self.served.identity.model, prompt, **extra))

    def _chat(self, pair: Pair) -> dict[str, Any]:
        body = _chat_body(
            self.served.identity.model,
            self.template.question(*pair),
            logprobs=True,
            top_logprobs=self.served.plan.top_k,
        )
        return self.served.client.post("/v1/chat/completions", body)


def _value(number: float) -> ScoreOutcome:
    if not math.isfinite(number):
        return ScoreOutcome(None, f"the server's log-probabilities give {number}")
    return ScoreOutcome(number)
