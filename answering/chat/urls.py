"""The customer chat page, one per tenant: /t/<tenant>/."""

from __future__ import annotations

from django.urls import URLPattern, path

from answering.chat import followup, views

app_name = "chat"
urlpatterns: list[URLPattern] = [
    path("", views.chat_page, name="page"),
    path("ask", views.chat_ask, name="ask"),
    path("stream", views.chat_stream, name="stream"),
    path("feedback", views.chat_feedback, name="feedback"),
    path("f/<str:public_id>/", followup.followup_page, name="followup"),
    path("f/<str:public_id>/status", followup.followup_status, name="followup_status"),
    path("f/<str:public_id>/message", followup.followup_message, name="followup_message"),
    path("f/<str:public_id>/contact", followup.followup_contact, name="followup_contact"),
]
