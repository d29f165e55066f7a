"""A served judge's entry in PARAPLUIE_MODELS, and the chat template read from a model's files.

No server here (tests/test_served_judge.py has one): what the setting accepts and refuses, word
for word, and the GGUF metadata reader against the ``gguf`` package's.
"""

from __future__ import annotations

import pytest

from scoring.metrics.chat_templates import embedded_gguf, load_chat_template, read_gguf_metadata
from scoring.metrics.judges import ServedEndpoint, parse_models
from scoring.metrics.specs import SpecError


def test_a_served_entry_gives_a_judge_with_its_own_queue_and_endpoint() -> None:
    (judge,) = parse_models(
        "mistral-served[server=http://vllm:8000/v1/,served_model=Mistral-7B-Instruct-v0.2,"
        "chat_template=/models/Mistral-7B-Instruct-v0.2,api_key_file=/run/secrets/key,concurrency=32,rate=50,"
        "top_logprobs=10,mode=top-k,timeout=30,retries=3]"
    )
    assert (judge.name, judge.queue, judge.is_served, judge.model) == (
        "mistral-served",
        "llm.mistral-served",
        True,
        "http://vllm:8000",
    )
    assert judge.served == ServedEndpoint(
        server="http://vllm:8000/v1/",
        served_model="Mistral-7B-Instruct-v0.2",
        chat_template="/models/Mistral-7B-Instruct-v0.2",
        api_key_file="/run/secrets/key",
        concurrency=32,
        rate=50.0,
        top_logprobs=10,
        mode="top-k",
        timeout=30.0,
        retries=3,
    )
    assert judge.served.base_url == "http://vllm:8000"


def test_the_json_form_and_the_defaults() -> None:
    local, served = parse_models(
        '[{"name": "smollm2", "model": "embedded"},'
        ' {"server": "http://127.0.0.1:8080", "served_model": "org/SmolLM2-Served", "chat_template": "embedded"}]'
    )
    assert not local.is_served
    assert (served.name, served.queue) == ("smollm2-served", "llm.smollm2-served")  # named after the served model
    assert served.served is not None
    assert (served.served.concurrency, served.served.rate, served.served.top_logprobs) == (8, 0.0, 20)
    assert (served.served.mode, served.served.timeout, served.served.retries) == ("auto", 60.0, 6)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            "s[server=http://h:1]",
            "s[server=http://h:1]: chat_template= is missing: a local tokenizer folder or .gguf file of the "
            "served model (the prompt is rendered here, as the in-process judge renders it), embedded, or server "
            "(the server's own chat template)",
        ),
        ("s[server=h:1,chat_template=embedded]", "server must be an http:// or https:// address, got 'h:1'"),
        ("s[server=http://h:1,chat_template=embedded,mode=fast]", "mode must be one of auto, top-k, exact, got 'fast'"),
        ("s[server=http://h:1,chat_template=embedded,concurrency=0]", "concurrency must be at least 1, got 0"),
        ("s[server=http://h:1,chat_template=embedded,rate=-1]", "rate must be at least 0, got -1"),
        (
            "s[server=http://h:1,chat_template=embedded,device=cuda]",
            "a served judge (server=) has no option device; use server, served_model, chat_template, api_key_file, "
            "concurrency, rate, top_logprobs, mode, timeout, retries",
        ),
    ],
)
def test_a_bad_served_entry_is_refused_naming_what_is_wrong(entry: str, message: str) -> None:
    with pytest.raises(SpecError) as refused:
        parse_models(entry)
    assert message in str(refused.value)


def test_a_bad_entry_stops_the_checks_with_its_reason(settings) -> None:
    from django.core.management import call_command
    from django.core.management.base import SystemCheckError

    settings.PARAPLUIE_MODELS = "s[server=http://h:1,chat_template=embedded,mode=fast]"
    with pytest.raises(SystemCheckError) as failed:
        call_command("check")
    assert "PARAPLUIE_MODELS: s[server=http://h:1,chat_template=embedded,mode=fast]: mode must be one of" in str(
        failed.value
    )


def test_the_gguf_metadata_reader_agrees_with_the_gguf_package() -> None:
    from gguf import GGUFReader

    ours = read_gguf_metadata(embedded_gguf())
    theirs = GGUFReader(str(embedded_gguf())).fields
    assert set(ours) == {key for key in theirs if not key.startswith("GGUF.")}
    for key in ours:
        assert ours[key] == theirs[key].contents(), key


def test_the_embedded_chat_template_and_its_special_tokens() -> None:
    from scoring.metrics import chat_templates, lm

    assert (chat_templates.EMBEDDED_MODULE, chat_templates.EMBEDDED_FILE) == (lm.EMBEDDED_MODULE, lm.EMBEDDED_FILE)
    template = load_chat_template("embedded")
    assert template.special_tokens == {
        "bos_token": "<|im_start|>",
        "eos_token": "<|im_end|>",
        "unk_token": "<|endoftext|>",
        "pad_token": "<|im_end|>",
    }
    assert template.render([{"role": "user", "content": "Same meaning?"}]) == (
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
        "<|im_start|>user\nSame meaning?<|im_end|>\n<|im_start|>assistant\n"
    )


@pytest.mark.model
def test_every_shipped_template_renders_as_transformers_renders_it_from_a_folder_and_from_the_gguf(tmp_path) -> None:
    """The served judge's prompt is the in-process judge's, byte for byte (transformers' own rendering)."""
    from scoring.metrics.lm import load_tokenizer
    from scoring.metrics.parapluie_engine import render
    from scoring.metrics.templates import load_templates

    tokenizer = load_tokenizer("embedded")
    tokenizer.tokenizer.save_pretrained(tmp_path / "tokenizer")  # a tokenizer folder, as a model ships one
    sources = [load_chat_template("embedded"), load_chat_template(str(tmp_path / "tokenizer"))]
    pair = ("Le chat « dort » {vraiment}.", 'The "cat" sleeps — now.')
    for template in load_templates().values():
        messages = template.question(*pair)
        expected = render(tokenizer, messages)
        for source in sources:
            assert source.render(messages) == expected, (template.name, source.source)


def test_a_served_judge_is_neither_tuned_nor_asked_for_candidates(settings) -> None:
    from scoring.tuning.service import TuningRequestError, base_judge
    from staff.views.bring import GenerateForm

    settings.PARAPLUIE_MODELS = parse_models(
        "smollm2[model=embedded]; laptop[server=http://127.0.0.1:8080,chat_template=embedded]"
    )
    with pytest.raises(TuningRequestError) as refused:
        base_judge("laptop")
    assert str(refused.value) == (
        "judge model 'laptop' is served by http://127.0.0.1:8080: its weights are not here to tune; "
        "tune a judge model that runs in a worker"
    )
    assert base_judge(None).name == "smollm2"
    assert [name for name, _ in GenerateForm().fields["models"].choices] == ["smollm2"]
