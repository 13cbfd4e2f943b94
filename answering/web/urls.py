"""The customer chat page, one per tenant: /t/<tenant>/."""

from __future__ import annotations

from django.urls import URLPattern

app_name = "chat"
urlpatterns: list[URLPattern] = []
