"""The customer chat page, one per tenant: /t/<tenant>/."""

from __future__ import annotations

from django.urls import URLPattern, path

from answering.chat import views

app_name = "chat"
urlpatterns: list[URLPattern] = [
    path("", views.chat_page, name="page"),
    path("ask", views.chat_ask, name="ask"),
    path("stream", views.chat_stream, name="stream"),
    path("feedback", views.chat_feedback, name="feedback"),
]
