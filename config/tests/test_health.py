from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.db import connections
from django.test import Client

from config import embedded_db

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.django_db
def test_health_reports_versions_and_model(client: Client) -> None:
    response = client.get("/health")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"]["reachable"] is True
    assert body["database"]["server_version"].split(".")[0] >= "15"
    assert body["database"]["pgvector_version"].startswith("0.8")
    assert body["embedding"] == {"model": "all-MiniLM-L6-v2", "dimension": 384}


@pytest.mark.skipif(bool(os.environ.get("DATABASE_URL")), reason="stops the embedded server")
def test_health_is_503_while_the_database_is_down_and_recovers(django_db_setup: Any, django_db_blocker: Any) -> None:
    pgdata = Path(os.environ["ANSWERDESK_PGDATA"])
    client = Client()
    with django_db_blocker.unblock():
        connections.close_all()
        assert embedded_db.stop(pgdata)
        try:
            down = client.get("/health")
            assert down.status_code == 503
            assert down.json()["database"]["reachable"] is False
        finally:
            embedded_db.ensure_running(pgdata)
        up = client.get("/health")
        assert up.status_code == 200, up.content


def test_check_deploy_passes_with_production_settings() -> None:
    env = {
        **os.environ,
        "DEBUG": "0",
        "SECRET_KEY": "x" * 20 + "-production-like-secret-" + "y" * 30,
        "ALLOWED_HOSTS": "answers.example.com",
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_production_refuses_the_development_secret() -> None:
    env = {**os.environ, "DEBUG": "0", "ALLOWED_HOSTS": "answers.example.com"}
    env.pop("SECRET_KEY", None)
    result = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr
