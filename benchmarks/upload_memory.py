"""Peak memory of the web process receiving a large pair file on the staff upload page.

Generates a CSV of ``--megabytes`` (default 200) in a temporary folder, starts a real server
(gunicorn, one sync worker, SQLite and a data folder in the temporary folder), logs in as staff
with curl, uploads the file with ``curl -F`` (multipart, as a browser sends it), then opens the
preview page. Reports the worker's peak resident memory (``VmHWM``) before the upload (Django
loaded, the upload page served) and after the upload and the preview, the growth, and the
growth as a ratio to the file's size: a handler that held the file in memory would show a
ratio near 1 (or more); one that streams it to disk, near 0.

    .venv/bin/python benchmarks/upload_memory.py
    .venv/bin/python benchmarks/upload_memory.py --megabytes 20
"""

from __future__ import annotations

import argparse
import os
import random
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MIB = 1024 * 1024
WORDS = [
    "the",
    "a",
    "cat",
    "dog",
    "house",
    "river",
    "city",
    "market",
    "council",
    "minister",
    "report",
    "said",
    "would",
    "could",
    "after",
    "before",
]
PASSWORD = "bench-upload-password"


def write_csv(path: Path, megabytes: int) -> int:
    """A CSV of pairs of about ``megabytes`` MiB; its size in bytes."""
    rng = random.Random(20240611)
    target = megabytes * MIB
    written = 0
    number = 0
    with path.open("w", encoding="utf-8") as handle:
        handle.write("id,sentence_a,sentence_b,quality\n")
        while written < target:
            lines = []
            for _ in range(1000):
                number += 1
                first = " ".join(rng.choices(WORDS, k=18))
                second = " ".join(rng.choices(WORDS, k=18))
                lines.append(f"p{number},{first}.,{second}.,{number % 2}\n")
            block = "".join(lines)
            handle.write(block)
            written += len(block)
    return path.stat().st_size


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def peak_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    match = re.search(r"VmHWM:\s+(\d+) kB", status)
    assert match, status
    return int(match.group(1))


def worker_pid(master: int) -> int:
    for _ in range(200):
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                if int(fields[1]) == master:
                    return int(entry.name)
        time.sleep(0.1)
    raise RuntimeError("gunicorn started no worker")


def curl(*args: str) -> str:
    result = subprocess.run(["curl", "-s", "-S", *args], capture_output=True, text=True, check=True)
    return result.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megabytes", type=int, default=200)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="paraeval-upload-bench-") as folder:
        base = Path(folder)
        env = {key: value for key, value in os.environ.items() if key not in {"DATABASE_URL", "REDIS_URL"}}
        env.update(
            DJANGO_SETTINGS_MODULE="paraeval.settings",
            SECRET_KEY="upload-benchmark-key",
            DEBUG="1",
            PARAEVAL_DATA_DIR=str(base / "data"),
            ALLOWED_HOSTS="127.0.0.1",
            PARAEVAL_LOGIN_FAILURE_LIMIT="1000",
        )
        python = sys.executable
        subprocess.run([python, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)
        # A superuser: a campaign of no team is visible to superusers only (annotate/teams.py).
        setup = (
            "from django.contrib.auth import get_user_model; from annotate.models import Campaign;"
            f"get_user_model().objects.create_user('bench', password='{PASSWORD}', is_staff=True, is_superuser=True);"
            "Campaign.objects.create(slug='bench', name='Bench')"
        )
        subprocess.run([python, "manage.py", "shell", "-v", "0", "-c", setup], cwd=ROOT, env=env, check=True)
        csv_path = base / "pairs.csv"
        size = write_csv(csv_path, arguments.megabytes)
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        server = subprocess.Popen(
            [str(Path(python).parent / "gunicorn"), "paraeval.wsgi", "-w", "1", "-b", f"127.0.0.1:{port}", "-t", "600"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            worker = worker_pid(server.pid)
            jar = str(base / "cookies")
            for _ in range(100):
                try:
                    page = curl("-c", jar, f"{url}/admin/login/")
                    break
                except subprocess.CalledProcessError:
                    time.sleep(0.2)
            token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
            assert token, page[:500]
            curl(
                "-b", jar, "-c", jar, "-e", f"{url}/admin/login/", "-o", "/dev/null",
                "--data-urlencode", f"csrfmiddlewaretoken={token.group(1)}",
                "--data-urlencode", "username=bench", "--data-urlencode", f"password={PASSWORD}",
                f"{url}/admin/login/?next=/staff/",
            )  # fmt: skip
            form = curl("-b", jar, "-c", jar, f"{url}/staff/campaigns/bench/upload/")
            token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form)
            assert token, form[:500]
            before = peak_kib(worker)
            started = time.perf_counter()
            headers = curl(
                "-b", jar, "-c", jar, "-e", f"{url}/staff/campaigns/bench/upload/", "-D", "-", "-o", "/dev/null",
                "-F", f"csrfmiddlewaretoken={token.group(1)}", "-F", "format=auto",
                "-F", f"file=@{csv_path};type=text/csv", f"{url}/staff/campaigns/bench/upload/",
            )  # fmt: skip
            seconds = time.perf_counter() - started
            location = re.search(r"^location: (\S+)", headers, re.IGNORECASE | re.MULTILINE)
            assert location, headers
            preview = curl(
                "-b", jar, f"{url}{location.group(1)}" if location.group(1).startswith("/") else location.group(1)
            )
            assert "The first rows, as they will be stored" in preview, preview[:2000]
            after = peak_kib(worker)
            stored = list((base / "data" / "uploads").glob("*.upload"))
            assert len(stored) == 1 and stored[0].stat().st_size == size, stored
        finally:
            server.terminate()
            server.wait(timeout=30)
    growth = (after - before) * 1024
    print(f"file: {size / MIB:,.1f} MiB uploaded in {seconds:.1f} s ({size / MIB / seconds:,.0f} MiB/s)")
    print(f"web worker peak RSS before the upload: {before / 1024:,.1f} MiB")
    print(f"web worker peak RSS after the upload and the preview: {after / 1024:,.1f} MiB")
    print(f"growth: {growth / MIB:,.1f} MiB = {growth / size:.3f} x the file's size")


if __name__ == "__main__":
    main()
