"""The volunteer pages in French (Django's translation machinery), and the language switch."""

from __future__ import annotations

import re
from pathlib import Path

import polib
import pytest
from django.test import Client
from django.utils import translation
from django.utils.html import escape

from annotate.guidelines import EXAMPLES_FR, INTRODUCTION_FR
from annotate.models import Campaign, Volunteer
from tests.builders import make_campaign, make_pair, make_training_pairs

pytestmark = pytest.mark.django_db

PO_FILE = Path(__file__).resolve().parent.parent / "locale" / "fr" / "LC_MESSAGES" / "django.po"
BUTTONS = ["Très différentes", "Légèrement similaires", "Plutôt similaires", "Même sens", "Je ne sais pas"]


def french_campaign() -> Campaign:
    campaign = make_campaign(slug="etude", name="Étude de paraphrases", language="fr", quota=3)
    make_training_pairs(campaign, 1)
    make_pair(campaign, source="Le musée ouvre à neuf heures.", hypothesis="Le musée ferme à neuf heures.")
    make_pair(campaign)
    return campaign


def start(client: Client, slug: str) -> Volunteer:
    response = client.post(f"/c/{slug}/", {"consent": "on", "english_level": "native"})
    return Volunteer.objects.get(token=response.url.split("/")[2])


def answer_texts(page: str) -> list[str]:
    return re.findall(r'<span class="answer-text">(.*?)</span>', page)


def test_a_french_campaign_speaks_french_from_welcome_to_the_end() -> None:
    french_campaign()
    client = Client()
    welcome = client.get("/c/etude/")
    page = welcome.content.decode()
    assert welcome["Content-Language"] == "fr"
    assert '<html lang="fr">' in page
    assert "Votre tâche" in page and "Comment évaluez-vous votre niveau de français ?" in page
    assert "Vous commencez par <strong>1 paire d&#x27;entraînement</strong>" in page or (
        "Vous commencez par <strong>1 paire d'entraînement</strong>" in page
    )
    assert "Puis <strong>2 paires</strong> à juger, 3 en tout" in page
    for level in ("Faible", "Bon", "Avancé", "Langue maternelle"):
        assert f"<span>{level}</span>" in page
    assert ">Commencer</button>" in page
    # A refusal names what is missing, in French.
    refused = client.post("/c/etude/", {"english_level": "good"}).content.decode()
    assert "Veuillez cocher la case de consentement pour commencer." in refused

    volunteer = start(client, "etude")
    step = client.get(f"/v/{volunteer.token}/guidelines/").content.decode()
    assert escape(INTRODUCTION_FR) in step and "Commencer l'entraînement</button>" in step
    for example in EXAMPLES_FR:
        assert escape(example.explanation) in step
    assert '<p class="sentence-text" lang="fr">' in step
    client.post(f"/v/{volunteer.token}/guidelines/")

    pair_page = client.get(f"/v/{volunteer.token}/").content.decode()
    assert "Paire 1 sur 3" in pair_page and "Entraînement 1 sur 1" in pair_page
    assert "Dans quelle mesure ces deux phrases partagent-elles un sens commun ?" in pair_page
    # The paper's order and colours: same buttons, same classes, Don't know light blue last.
    assert answer_texts(pair_page) == BUTTONS
    assert re.findall(r'value="(\w+)"\s+class="answer( answer--dont-know)?"', pair_page)[-1] == (
        "dont_know",
        " answer--dont-know",
    )
    item = int(re.search(r'name="pair" value="(\d+)"', pair_page).group(1))
    feedback = client.get(client.post(f"/v/{volunteer.token}/answer/", {"pair": item, "label": "dont_know"}).url)
    assert "Votre réponse" in feedback.content.decode() and "Réponse attendue" in feedback.content.decode()
    done_page = client.get(client.get(f"/v/{volunteer.token}/").url).content.decode()
    assert "<h1>L'entraînement est terminé</h1>" in done_page and "vos réponses comptent" in done_page


def test_the_volunteer_can_switch_the_language_and_the_level_question_keeps_the_campaigns() -> None:
    french_campaign()
    client = Client()
    switched = client.post("/i18n/setlang/", {"language": "en", "next": "/c/etude/"})
    assert switched.url == "/c/etude/"
    page = client.get("/c/etude/").content.decode()
    assert "Your task" in page
    assert "How would you rate your French?" in page  # the pairs are French
    english = make_campaign(slug="study", language="en")
    make_pair(english)
    client.post("/i18n/setlang/", {"language": "fr", "next": "/c/study/"})
    page = client.get("/c/study/").content.decode()
    assert "Comment évaluez-vous votre niveau d&#x27;anglais ?" in page
    # The switch is on every volunteer page, the current language marked.
    switch = re.findall(
        r'name="language" value="(\w+)" lang="\w+"\s+class="language-option"( aria-current="true")?', page
    )
    assert switch == [("en", ""), ("fr", ' aria-current="true"')]


def test_every_message_has_its_french_translation_compiled() -> None:
    """The committed .mo file carries every entry of the .po file (compilemessages was run)."""
    catalogue = polib.pofile(str(PO_FILE))
    volunteer_entries = [
        entry
        for entry in catalogue
        if any(path.startswith(("annotate/", "templates/annotate/")) for path, _ in entry.occurrences)
    ]
    assert len(volunteer_entries) > 90
    with translation.override("fr"):
        for entry in volunteer_entries:
            if entry.msgid_plural:
                assert entry.msgstr_plural[0] and entry.msgstr_plural[1], entry.msgid
                assert translation.ngettext(entry.msgid, entry.msgid_plural, 2) == entry.msgstr_plural[1]
            else:
                assert entry.msgstr, f"untranslated: {entry.msgid}"
                assert translation.gettext(entry.msgid) == entry.msgstr, entry.msgid
