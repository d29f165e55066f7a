"""A served judge whose server is down or hangs: the web process asks it once per back-off, briefly.

Two real dead peers, no mock: a loopback port nobody listens on (connection refused), and a
socket written here that accepts connections and never answers (a hung server). The probes that
really went out are counted twice: by the served module (``unreachable.attempts``) and, for the
hung server, by the connections the socket accepted. No timing is asserted.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest
from django.test import Client
from django.urls import reverse

from scoring.metrics.served import forget_connections, unreachable
from scoring.pipeline import configs
from tests.builders import make_campaign, make_pair, make_staff
from tests.served_support import free_port
from tests.test_campaign_http import current_pair_id, post_answer, start

pytestmark = pytest.mark.django_db


class HungServer:
    """Accepts every connection on a loopback port and never answers (counts the connections)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = int(self.sock.getsockname()[1])
        self.accepted: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.sock.accept()
            except OSError:
                return
            self.accepted.append(connection)  # kept open, never read nor answered

    def close(self) -> None:
        self.sock.close()
        for connection in self.accepted:
            connection.close()


class ListsThenHangs(HungServer):
    """Answers ``GET /v1/models`` (one model) and never answers anything else (counts those)."""

    def __init__(self) -> None:
        self.unanswered = 0
        super().__init__()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.sock.accept()
            except OSError:
                return
            self.accepted.append(connection)
            request = connection.recv(65536)
            if request.startswith(b"GET /v1/models"):
                body = b'{"object": "list", "data": [{"id": "smollm2", "object": "model"}]}'
                head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
                connection.sendall(head + b"Content-Length: %d\r\n\r\n" % len(body) + body)
                connection.close()
            else:
                self.unanswered += 1  # a completion: read, never answered


@pytest.fixture
def lists_then_hangs() -> Iterator[ListsThenHangs]:
    server = ListsThenHangs()
    yield server
    server.close()


@pytest.fixture
def hung() -> Iterator[HungServer]:
    server = HungServer()
    yield server
    server.close()


@pytest.fixture(autouse=True)
def fresh_probes() -> Iterator[None]:
    forget_connections()
    yield
    forget_connections()


def serve_judge_at(settings: pytest.FixtureRequest, url: str, **options: object) -> None:
    settings.PARAPLUIE_MODELS = f"served[server={url},chat_template=embedded]"  # type: ignore[attr-defined]
    settings.PARAEVAL_METRICS = ["bleu", "parapluie_direct"]  # type: ignore[attr-defined]
    settings.PARAEVAL_SERVED_PROBE_TIMEOUT = 0.3  # type: ignore[attr-defined]
    for name, value in options.items():
        setattr(settings, name, value)


def answer_pairs(count: int) -> int:
    """A volunteer answers ``count`` pairs; the enabled rows are rebuilt before each answer (as
    after the minute sweep or the rows' cache expiring). Returns the answers stored."""
    campaign = make_campaign(quota=count)
    for _ in range(count):
        make_pair(campaign)
    client = Client()
    volunteer = start(client, campaign)
    for _ in range(count):
        configs.forget_enabled()
        response = post_answer(client, volunteer, current_pair_id(client, volunteer))
        assert response.status_code == 302
    return volunteer.judgements.count()


def test_a_refused_server_is_probed_once_per_back_off_not_per_answer_or_page(settings) -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    serve_judge_at(settings, url)
    assert answer_pairs(4) == 4
    staff = Client()
    staff.force_login(make_staff())
    for _ in range(3):
        page = staff.get(reverse("staff:status")).content.decode()
    assert "served judge at " + url in page
    assert unreachable.attempts == {url: 1}
    metrics, unavailable = configs.build_enabled()
    assert [metric.name for metric in metrics] == ["bleu"]
    assert [item.retry for item in unavailable] == [True]
    assert "asked again in" in unavailable[0].reason


def test_without_a_back_off_every_build_asks_again(settings) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    serve_judge_at(settings, url, PARAEVAL_SERVED_RETRY_AFTER=0.0)
    for _ in range(3):
        configs.build_enabled()
    assert unreachable.attempts == {url: 3}


def test_a_hung_server_is_asked_once_without_retry_and_answers_still_go_through(settings, hung: HungServer) -> None:
    url = f"http://127.0.0.1:{hung.port}"
    serve_judge_at(settings, url)
    assert answer_pairs(3) == 3
    staff = Client()
    staff.force_login(make_staff())
    for _ in range(2):
        assert staff.get(reverse("staff:status")).status_code == 200
    assert unreachable.attempts == {url: 1}
    assert len(hung.accepted) == 1  # one connection: no retry of the timed-out probe
    _, unavailable = configs.build_enabled()
    assert "timed out" in unavailable[0].reason.lower()


def test_a_server_that_lists_its_model_but_hangs_on_completions_costs_one_probe_request(
    settings, lists_then_hangs: ListsThenHangs
) -> None:
    url = f"http://127.0.0.1:{lists_then_hangs.port}"
    serve_judge_at(settings, url)
    for _ in range(3):
        metrics, unavailable = configs.build_enabled()
    assert [metric.name for metric in metrics] == ["bleu"]
    reason = unavailable[0].reason
    assert reason.startswith(f"ServerUnreachable: served judge at {url}: {url}/v1/completions did not answer: ")
    assert "Read timed out. (read timeout=0.3)" in reason and reason.endswith("(asked again in 60 s)")
    # /v1/models once, then one completion left unanswered: the probe stopped there, and the
    # back-off kept the two later builds from asking again.
    assert unreachable.attempts == {url: 2}
    assert lists_then_hangs.unanswered == 1
