"""The customer chat page, one per tenant: /t/<tenant>/."""

from __future__ import annotations

from django.urls import URLPattern, path

from answering.chat import embed, followup, views

app_name = "chat"
urlpatterns: list[URLPattern] = [
    path("", views.chat_page, name="page"),
    path("ask", views.chat_ask, name="ask"),
    path("stream", views.chat_stream, name="stream"),
    path("feedback", views.chat_feedback, name="feedback"),
    path("person", views.chat_person, name="person"),
    # The embedded chat (answering/chat/embed.py, docs/decisions/0054): framable by the tenant's origins, cookie-free.
    path("embed/", embed.embed_page, name="embed"),
    path("embed/ask", embed.embed_ask, name="embed_ask"),
    path("embed/stream", embed.embed_stream, name="embed_stream"),
    path("embed/feedback", embed.embed_feedback, name="embed_feedback"),
    path("embed/person", embed.embed_person, name="embed_person"),
    path("embed/f/<str:public_id>/contact", embed.embed_followup_contact, name="embed_followup_contact"),
    path("f/<str:public_id>/", followup.followup_page, name="followup"),
    path("f/<str:public_id>/status", followup.followup_status, name="followup_status"),
    path("f/<str:public_id>/message", followup.followup_message, name="followup_message"),
    path("f/<str:public_id>/contact", followup.followup_contact, name="followup_contact"),
]
