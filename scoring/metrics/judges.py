"""The judge models of ParaPLUIE: several causal LMs side by side, each with its own queue.

``PARAPLUIE_MODELS`` lists them, each with a short name, where it is, and how it runs::

    PARAPLUIE_MODELS="smollm2[model=embedded];
        mistral[model=/models/Mistral-7B-Instruct-v0.2,device=cuda,dtype=bfloat16,batch_size=64]"

or the same as JSON (``[{"name": "mistral", "model": "/models/...", "device": "cuda", ...}]``).
A judge served by an OpenAI-compatible server (vLLM, llama.cpp's server, TGI, Ollama) is named
by its address instead of a model (:class:`ServedEndpoint`, scored by :mod:`scoring.metrics.served`)::

    PARAPLUIE_MODELS="mistral[server=http://vllm:8000,served_model=mistralai/Mistral-7B-Instruct-v0.2,
        chat_template=/models/Mistral-7B-Instruct-v0.2,api_key_file=/run/secrets/vllm_key]"

Unset, the list is one model built from the single-model settings (``PARAPLUIE_MODEL``,
``PARAPLUIE_DEVICE``, ``PARAPLUIE_DTYPE``, ``PARAPLUIE_BATCH_SIZE``): the embedded SmolLM2 by
default. Models are never downloaded: a model is ``embedded`` or a local folder (or a hub id
already in the local cache, see :mod:`scoring.metrics.lm`).

Each model's ParaPLUIE tasks go to the queue ``llm.<name>`` (:func:`queue_for`), so a GPU
worker started with ``-Q llm.<name>`` loads that model only. Standard library only: the scoring
app parses the setting with :func:`parse_models` and passes the models in
(:mod:`scoring.metrics.environment`).

Tuned judges (``manage.py tune_judge``, :mod:`scoring.metrics.tuned`) are judge models too: each
folder of ``PARAPLUIE_TUNED_DIR`` holding one is listed after the configured models, named
``<base>-tuned-<hash>``, with its own queue, the device settings of the base model it was tuned
from, and the one template it was tuned with.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from scoring.metrics import tuned
from scoring.metrics.base import MetricUnavailable
from scoring.metrics.specs import Spec, SpecError, parse, split_list, to_int

DTYPES = ("float32", "float16", "bfloat16")
QUEUE_PREFIX = "llm."
_SAFE = re.compile(r"[^a-z0-9_-]+")
_OPTIONS = ("model", "device", "dtype", "batch_size")
# The options of a served judge (one named by server=), see ServedEndpoint.
_SERVED_OPTIONS = (
    "server",
    "served_model",
    "chat_template",
    "api_key_file",
    "concurrency",
    "rate",
    "top_logprobs",
    "mode",
    "timeout",
    "retries",
)
SERVED_MODES = ("auto", "top-k", "exact")


@dataclass(frozen=True)
class ServedEndpoint:
    """A judge model behind an OpenAI-compatible API, and how to ask it.

    ``chat_template``: where the prompt's chat template comes from: ``embedded`` (the embedded
    SmolLM2's GGUF), a local tokenizer folder or ``.gguf`` file of the served model (the prompt is
    rendered here, byte for byte the in-process judge's, and sent to ``/v1/completions``), or
    ``server`` (the server applies its own template, ``/v1/chat/completions``). ``mode``: ``auto``
    reads the answer from the top log-probabilities and, where the server returns prompt
    log-probabilities, fills the pairs whose answer is not among them; ``top-k`` or ``exact``
    only. ``rate``: requests per second from one worker process (0: no limit).
    """

    server: str
    served_model: str = ""  # "": the one model the server lists
    chat_template: str = "server"
    api_key_file: str = ""
    concurrency: int = 8
    rate: float = 0.0
    top_logprobs: int = 20
    mode: str = "auto"
    timeout: float = 60.0
    retries: int = 6

    @property
    def base_url(self) -> str:
        """The server's address without a trailing ``/v1`` (the paths add it)."""
        return self.server.rstrip("/").removesuffix("/v1").rstrip("/")


@dataclass(frozen=True)
class JudgeModel:
    """One configured judge model: its name (and queue), where it is, and how it runs."""

    name: str
    model: str = "embedded"
    device: str = "cpu"
    dtype: str = "float32"
    batch_size: int = 8
    template: str | None = None  # a tuned judge judges with the template it was tuned with only
    tuned_from: str | None = None  # a tuned judge's base model (its name)
    served: ServedEndpoint | None = None  # a judge behind an OpenAI-compatible server (model: its address)

    @property
    def queue(self) -> str:
        return queue_for(self.name)

    def judges_with(self, template: str) -> bool:
        """Whether this model scores with ``template`` (a tuned judge: its own template only)."""
        return self.template is None or self.template == template

    @property
    def is_served(self) -> bool:
        return self.served is not None


def safe_name(text: str) -> str:
    """A queue-safe model name: lowercase letters, digits, ``_`` and ``-`` (at most 40)."""
    name = _SAFE.sub("-", text.strip().lower()).strip("-")[:40]
    if not name:
        raise SpecError(f"{text!r} gives an empty model name")
    return name


def queue_for(name: str) -> str:
    """The Celery queue of the model ``name`` (``llm.mistral``)."""
    return QUEUE_PREFIX + safe_name(name)


def default_name(model: str) -> str:
    """The name a model gets when none is given: ``smollm2`` for the embedded one, else its folder's."""
    if model.strip() == "embedded":
        return "smollm2"
    return safe_name(Path(model.rstrip("/")).name or model)


def _number(where: str, key: str, value: object, default: float, *, minimum: float = 0.0) -> float:
    try:
        number = float(str(value)) if value is not None else default
    except ValueError:
        raise SpecError(f"{where}: {key} must be a number, got {value!r}") from None
    if number < minimum:
        raise SpecError(f"{where}: {key} must be at least {minimum:g}, got {number:g}")
    return number


def _served_judge(name: str, fields: Mapping[str, object], where: str) -> JudgeModel:
    unknown = sorted(set(fields) - set(_SERVED_OPTIONS))
    if unknown:
        raise SpecError(
            f"{where}: a served judge (server=) has no option {', '.join(unknown)}; use {', '.join(_SERVED_OPTIONS)}"
        )
    server = str(fields["server"]).strip()
    if not server.startswith(("http://", "https://")):
        raise SpecError(f"{where}: server must be an http:// or https:// address, got {server!r}")
    chat_template = str(fields.get("chat_template") or "").strip()
    if not chat_template:
        raise SpecError(
            f"{where}: chat_template= is missing: a local tokenizer folder or .gguf file of the served model "
            "(the prompt is rendered here, as the in-process judge renders it), embedded, or server "
            "(the server's own chat template)"
        )
    mode = str(fields.get("mode", "auto"))
    if mode not in SERVED_MODES:
        raise SpecError(f"{where}: mode must be one of {', '.join(SERVED_MODES)}, got {mode!r}")
    endpoint = ServedEndpoint(
        server=server,
        served_model=str(fields.get("served_model") or "").strip(),
        chat_template=chat_template,
        api_key_file=str(fields.get("api_key_file") or "").strip(),
        concurrency=to_int(where, "concurrency", str(fields.get("concurrency", 8))),
        rate=_number(where, "rate", fields.get("rate"), 0.0),
        top_logprobs=to_int(where, "top_logprobs", str(fields.get("top_logprobs", 20))),
        mode=mode,
        timeout=_number(where, "timeout", fields.get("timeout"), 60.0, minimum=0.1),
        retries=to_int(where, "retries", str(fields.get("retries", 6)), minimum=0),
    )
    label = endpoint.served_model or endpoint.base_url.split("//", 1)[-1]
    judge_name = safe_name(name) if name else safe_name(label.rsplit("/", 1)[-1])
    return JudgeModel(judge_name, endpoint.base_url, "server", "float32", endpoint.concurrency, served=endpoint)


def _judge(name: str, fields: Mapping[str, object], where: str) -> JudgeModel:
    if "server" in fields:
        return _served_judge(name, fields, where)
    unknown = sorted(set(fields) - set(_OPTIONS))
    if unknown:
        raise SpecError(
            f"{where}: unknown option(s) {', '.join(unknown)}; use {', '.join(_OPTIONS)} "
            f"(or server= and {', '.join(_SERVED_OPTIONS[1:])} for a served judge)"
        )
    model = str(fields.get("model") or "").strip()
    if not model:
        raise SpecError(f"{where}: model= is missing (embedded, or a local folder)")
    dtype = str(fields.get("dtype", "float32"))
    if dtype not in DTYPES:
        raise SpecError(f"{where}: dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    device = str(fields.get("device", "cpu"))
    batch = fields.get("batch_size", 8 if device == "cpu" else 16)
    batch_size = to_int(where, "batch_size", str(batch))
    return JudgeModel(safe_name(name) if name else default_name(model), model, device, dtype, batch_size)


def parse_models(text: str) -> list[JudgeModel]:
    """Parse ``PARAPLUIE_MODELS`` (compact or JSON); names must be distinct."""
    stripped = text.strip()
    judges: list[JudgeModel] = []
    if stripped.startswith(("[", "{")):  # a compact entry starts with its name
        try:
            data = json.loads(stripped)
        except ValueError as error:
            raise SpecError(f"not valid JSON: {error}") from None
        items = data if isinstance(data, list) else [data]
        for index, item in enumerate(items):
            if not isinstance(item, dict):
                raise SpecError(f"entry {index}: expected an object with name and model")
            fields = {key: value for key, value in item.items() if key != "name"}
            judges.append(_judge(str(item.get("name") or ""), fields, f"entry {index}"))
    else:
        for item in split_list(stripped):
            spec: Spec = parse(item)
            judges.append(_judge(spec.name, dict(spec.options), str(spec)))
    names = [judge.name for judge in judges]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise SpecError(f"model name(s) given twice: {', '.join(twice)}")
    return judges


def configured_models() -> list[JudgeModel]:
    """The judge models of the installation (``PARAPLUIE_MODELS``), in their order (the first is
    the default; none configured: the embedded SmolLM2), then the tuned judges of
    ``PARAPLUIE_TUNED_DIR``."""
    from scoring.metrics import environment

    installed = environment.current()
    judges = list(installed.judge_models) or [JudgeModel(default_name("embedded"))]
    if installed.tuned_dir is None:
        return judges
    return judges + tuned_models(installed.tuned_dir, judges)


def as_judge_models(configured: Sequence[object]) -> list[JudgeModel]:
    """Judge models from a setting's entries: models, compact or JSON text, or plain dicts (tests)."""
    judges: list[JudgeModel] = []
    for item in configured:
        if isinstance(item, JudgeModel):
            judges.append(item)
        elif isinstance(item, Mapping):
            judges.append(_judge(str(item.get("name") or ""), {k: v for k, v in item.items() if k != "name"}, "entry"))
        else:
            judges.extend(parse_models(str(item)))
    return judges


def tuned_models(root: str | Path, configured: Sequence[JudgeModel]) -> list[JudgeModel]:
    """A judge model for each tuned judge under ``root``, run like the base model it was tuned from
    (the first configured model's settings when that one is not configured here)."""
    by_name = {judge.name: judge for judge in configured}
    found = []
    for folder in tuned.find_bundles(root):
        try:
            manifest = tuned.read_manifest(folder)
        except MetricUnavailable:
            continue  # the status page's unavailable metrics say why, when one is asked for
        name = safe_name(manifest.name)
        if name in by_name:
            continue
        base = by_name.get(manifest.base_name) or (configured[0] if configured else JudgeModel("base"))
        judge = JudgeModel(
            name, str(folder), base.device, base.dtype, base.batch_size, manifest.template, manifest.base_name
        )
        by_name[name] = judge
        found.append(judge)
    return found


def tuned_state() -> tuple[tuple[str, int], ...]:
    """What changes when a tuned judge appears or goes (cheap: one folder listing)."""
    from scoring.metrics import environment

    tuned_dir = environment.current().tuned_dir
    return () if tuned_dir is None else tuned.state(tuned_dir)


def find_model(name_or_location: str) -> JudgeModel:
    """The configured model of that name; a location (``embedded``, a folder) not configured gets
    a model of its own with the default device settings."""
    judges = configured_models()
    for judge in judges:
        if judge.name == name_or_location:
            return judge
    for judge in judges:
        if judge.model == name_or_location:
            return judge
    if name_or_location == "embedded" or "/" in name_or_location or Path(name_or_location).exists():
        base = judges[0] if judges else JudgeModel("smollm2")
        return JudgeModel(default_name(name_or_location), name_or_location, base.device, base.dtype, base.batch_size)
    known = ", ".join(judge.name for judge in judges)
    raise SpecError(f"unknown judge model {name_or_location!r}; configured models (PARAPLUIE_MODELS): {known}")
