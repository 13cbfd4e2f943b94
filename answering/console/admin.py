"""The operations console: the escalation queue, the trace viewer with feedback triage, and
the dashboard. Staff see their own tenants' rows read within their audiences (TenantScopedAdmin,
tenants/staff.py: an escalation follows its trace); every write goes through
answering/console/escalations.py."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from answering.console import articles, escalations, notifications, parts, triage
from answering.console.answer_mode import answer_mode_view
from answering.console.dashboard_view import dashboard_view
from answering.console import handoff as console_handoff
from answering.console.stats import answer_stats
from answering.handoff.config import NO_MAIL_SERVER_TEXT, mail_sends
from answering.handoff.links import followup_path
from answering.models import Escalation, Trace
from corpus.sources.jobs import UploadRejected
from tenants.admin import TenantScopedAdmin
from tenants.staff import staff_access

# Triage reads every selected trace's cited documents; the filter looks at this many recent ones.
TRIAGE_FILTER_LIMIT = 2000


ARTICLE_CHECKBOX = gettext_lazy("Also draft a knowledge-base article from it (written apart from this reply; internal "
                                 "until a member holding its audience publishes it)")


class ReplyForm(forms.Form):
    body = forms.CharField(widget=forms.Textarea(attrs={"rows": 6, "cols": 80}), max_length=escalations.MAX_NOTE_CHARS,
                           help_text=gettext_lazy("Shown on the asker's follow-up page, and emailed when they left an address."))
    resolve = forms.BooleanField(required=False, label=gettext_lazy("Resolve with this reply"))
    to_document = forms.BooleanField(required=False, label=ARTICLE_CHECKBOX)


class ResolveForm(forms.Form):
    note = forms.CharField(widget=forms.Textarea(attrs={"rows": 5, "cols": 80}), required=False,
                           max_length=escalations.MAX_NOTE_CHARS,
                           help_text=gettext_lazy("What the customer should have been told (kept on the escalation)."))
    to_document = forms.BooleanField(required=False, label=ARTICLE_CHECKBOX)


class ArticleForm(forms.Form):
    """The article, apart from the personal reply: what any reader of its audience is told."""

    question = forms.CharField(widget=forms.Textarea(attrs={"rows": 3, "cols": 80}), label=gettext_lazy("Question"),
                               max_length=articles.MAX_QUESTION_CHARS,
                               help_text=gettext_lazy("The question as the next reader would ask it."))
    answer = forms.CharField(widget=forms.Textarea(attrs={"rows": 12, "cols": 80}), label=gettext_lazy("Answer"),
                             max_length=escalations.MAX_NOTE_CHARS,
                             help_text=gettext_lazy("No greeting, no sign-off, no name: the next reader is someone else."))
    audience = forms.ChoiceField(label=gettext_lazy("Audience"),
                                 help_text=gettext_lazy("Who may read the article once published: only audiences you "
                                                        "hold."))


def _form_errors(form: forms.Form) -> str:
    return "; ".join(str(e) for errs in form.errors.values() for e in errs)


@admin.register(Escalation)
class EscalationAdmin(TenantScopedAdmin):
    audience_field, audience_key = "trace__audiences", "slug"
    list_display = ["id", "tenant", "short_question", "reason", "status", "assignee", "age", "overdue",
                    "asker_waiting", "knowledge"]
    change_list_template = "admin/answering/escalation/change_list.html"
    list_filter = ["status", "reason", "tenant"]
    search_fields = ["question", "conversation_id"]
    list_select_related = ["tenant", "assignee", "knowledge_job"]
    ordering = ["created_at"]  # the queue is worked oldest first
    fieldsets = [
        (gettext_lazy("Question"), {"fields": ["tenant", "conversation_display", "created_at", "contact_email", "followup_link"]}),
        (gettext_lazy("Thread"), {"fields": ["thread_display"]}),
        (gettext_lazy("Why it escalated"), {"fields": ["reason", "detail", "trace_link", "candidates_display"]}),
        (gettext_lazy("Work"), {"fields": ["status", "assignee", "claimed_at", "first_reply_at", "resolved_at", "resolution_note",
                             "knowledge"]}),
        (gettext_lazy("Notifications"), {"fields": ["notifications_display"]}),
    ]
    readonly_fields = ["tenant", "conversation_display", "created_at", "contact_email", "followup_link",
                       "thread_display", "reason", "detail", "trace_link", "candidates_display", "status", "assignee",
                       "claimed_at", "first_reply_at", "resolved_at", "resolution_note", "knowledge",
                       "notifications_display"]
    actions = ["claim", "mark_resolved", "erase_asker"]
    change_form_template = "admin/answering/escalation/change_form.html"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # escalations come from the pipeline's one exit

    def has_delete_permission(self, request: HttpRequest, obj: Escalation | None = None) -> bool:
        return False  # the queue is history too; resolve instead

    @admin.display(description=gettext_lazy("question"))
    def short_question(self, obj: Escalation) -> str:
        return obj.question[:80]

    def get_list_display(self, request: HttpRequest) -> Any:
        # The tenant column only when there is more than one tenant to tell apart: the queue fits 1280 px.
        access = staff_access(request)
        shown = list(super().get_list_display(request))
        return shown if access.superuser or len(access.tenant_ids()) > 1 else [f for f in shown if f != "tenant"]

    @admin.display(description=gettext_lazy("question and history"))
    def conversation_display(self, obj: Escalation) -> str:
        return parts.history_html(question=obj.question, history=obj.history)

    @admin.display(description=gettext_lazy("age"))
    def age(self, obj: Escalation) -> str:
        return console_handoff.age_text(since=obj.created_at)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Escalation]:
        return console_handoff.with_last_message_kind(super().get_queryset(request))

    @admin.display(description=gettext_lazy("asker waiting"), boolean=True)
    def asker_waiting(self, obj: Escalation) -> bool:
        # An asker's message after a reply (or after resolution) waits for an agent.
        return getattr(obj, "last_message_kind", None) == "asker"

    @admin.display(description=gettext_lazy("overdue"), boolean=True)
    def overdue(self, obj: Escalation) -> bool:
        return console_handoff.is_overdue(escalation=obj)

    @admin.display(description=gettext_lazy("follow-up page"))
    def followup_link(self, obj: Escalation) -> str:
        url = followup_path(tenant_slug=obj.tenant.slug, public_id=obj.public_id)
        return format_html('<a href="{}" rel="noreferrer">{}</a>', url, _("the asker's page"))

    @admin.display(description=gettext_lazy("messages"))
    def thread_display(self, obj: Escalation) -> str:
        return console_handoff.thread_html(escalation=obj)

    @admin.display(description=gettext_lazy("email"))
    def notifications_display(self, obj: Escalation) -> str:
        return notifications.notifications_html(escalation=obj)

    @admin.display(description=gettext_lazy("trace"))
    def trace_link(self, obj: Escalation) -> str:
        url = reverse("admin:answering_trace_change", args=[obj.trace_id])
        return format_html('<a href="{}">{}</a>', url, _("trace #%(id)s") % {"id": obj.trace_id})

    @admin.display(description=gettext_lazy("what retrieval found"))
    def candidates_display(self, obj: Escalation) -> str:
        return parts.escalation_candidates_html(escalation=obj)

    @admin.display(description=gettext_lazy("article"))
    def knowledge(self, obj: Escalation) -> str:
        job = obj.knowledge_job
        if job is not None:
            url = reverse("admin:corpus_ingestjob_change", args=[job.pk])
            return format_html('<a href="{}">{}</a>', url, _("article %(slug)s published (%(status)s: ingest job #%(job)s)")
                               % {"slug": escalations.ticket_slug(obj), "status": job.status, "job": job.pk})
        if obj.article_audience:
            url = reverse("admin:answering_escalation_article", args=[obj.pk])
            return format_html('<a href="{}">{}</a>', url, _("draft article (%(audience)s), not published")
                               % {"audience": obj.article_audience})
        return "—"

    # -- list actions ------------------------------------------------------------------
    @admin.action(description=gettext_lazy("Claim selected escalations"))
    def claim(self, request: HttpRequest, queryset: QuerySet[Escalation]) -> None:
        self._report(request, _("%(count)d escalation(s) claimed."), *escalations.escalations_claim(escalations=list(queryset),
                                                                         user=request.user))

    @admin.action(description=gettext_lazy("Resolve selected escalations (no note)"))
    def mark_resolved(self, request: HttpRequest, queryset: QuerySet[Escalation]) -> None:
        self._report(request, _("%(count)d escalation(s) resolved."), *escalations.escalations_resolve(escalations=list(queryset),
                                                                           user=request.user))

    @admin.action(description=gettext_lazy("Erase the askers' data (questions, messages, contact) of the selected "
                                           "escalations"))
    def erase_asker(self, request: HttpRequest, queryset: QuerySet[Escalation]) -> None:
        for line in console_handoff.erase_selected(escalations=list(queryset), access=staff_access(request)):
            self.message_user(request, line)

    def _report(self, request: HttpRequest, done_text: str, done: int, refused: list[str]) -> None:
        self.message_user(request, done_text % {"count": done})
        for reason in refused:
            self.message_user(request, reason, messages.WARNING)

    # -- change page buttons -------------------------------------------------------------
    def get_urls(self) -> list[Any]:
        wrap = self.admin_site.admin_view
        return [
            path("<path:object_id>/claim/", wrap(require_POST(self.claim_view)), name="answering_escalation_claim"),
            path("<path:object_id>/resolve/", wrap(require_POST(self.resolve_view)),
                 name="answering_escalation_resolve"),
            path("<path:object_id>/reply/", wrap(require_POST(self.reply_view)), name="answering_escalation_reply"),
            path("<path:object_id>/article/", wrap(self.article_view), name="answering_escalation_article"),
        ] + super().get_urls()

    def _editable(self, request: HttpRequest, object_id: str) -> Escalation:
        obj = self.get_object(request, object_id)
        if obj is None:
            raise Http404  # another tenant's escalation does not exist, as far as this user knows
        if not self.has_change_permission(request, obj):
            raise PermissionDenied
        return obj

    def _back(self, obj: Escalation) -> HttpResponseRedirect:
        return HttpResponseRedirect(reverse("admin:answering_escalation_change", args=[obj.pk]))

    def claim_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        obj = self._editable(request, object_id)
        try:
            escalations.escalation_claim(escalation=obj, user=request.user)
            self.message_user(request, _("You claimed escalation #%(id)s.") % {"id": obj.pk})
        except escalations.EscalationConflict as exc:
            self.message_user(request, str(exc), messages.ERROR)
        return self._back(obj)

    def resolve_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        obj = self._editable(request, object_id)
        form = ResolveForm(request.POST)
        if not form.is_valid():
            self.message_user(request, _form_errors(form), messages.ERROR)
            return self._back(obj)
        try:
            obj = escalations.escalation_resolve(escalation=obj, user=request.user, note=form.cleaned_data["note"])
            self.message_user(request, _("Escalation #%(id)s resolved.") % {"id": obj.pk})
        except (escalations.EscalationConflict, ValueError) as exc:
            self.message_user(request, str(exc), messages.ERROR)
            return self._back(obj)
        return self._after_resolve(request, obj, form.cleaned_data["to_document"])

    def reply_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        obj = self._editable(request, object_id)
        form = ReplyForm(request.POST)
        if not form.is_valid():
            self.message_user(request, _form_errors(form), messages.ERROR)
            return self._back(obj)
        data = form.cleaned_data
        try:
            obj = escalations.escalation_reply(escalation=obj, user=request.user, body=data["body"],
                                               resolve=data["resolve"])
        except (escalations.EscalationConflict, ValueError) as exc:
            self.message_user(request, str(exc), messages.ERROR)
            return self._back(obj)
        delivery = notifications.reply_delivery_text(escalation=obj)
        self.message_user(request, _("Reply posted on the follow-up page; %(delivery)s") % {"delivery": delivery}
                                   + (" " + _("Escalation resolved.") if data["resolve"] else ""))
        return self._after_resolve(request, obj, data["resolve"] and data["to_document"])

    def _after_resolve(self, request: HttpRequest, obj: Escalation, draft: bool) -> HttpResponse:
        """With the knowledge-base box ticked, on to the article draft (never the reply itself)."""
        if not draft:
            return self._back(obj)
        obj = articles.article_draft_start(escalation=obj, user=request.user)
        if articles.article_may_edit(escalation=obj, user=request.user):
            return HttpResponseRedirect(reverse("admin:answering_escalation_article", args=[obj.pk]))
        self.message_user(request, _("Draft article saved for audience %(audience)s: a member holding it edits and "
                                     "publishes it.") % {"audience": obj.article_audience}, messages.WARNING)
        return self._back(obj)

    def article_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """The draft article of a resolved escalation: edit, save, publish (a member holding its audience)."""
        obj = self._editable(request, object_id)
        if obj.status != Escalation.Status.RESOLVED:
            self.message_user(request, _("Resolve the escalation first; the article is written from its resolution."),
                              messages.ERROR)
            return self._back(obj)
        if request.method == "POST" and request.POST.get("action") == "start":
            obj = articles.article_draft_start(escalation=obj, user=request.user)
        if not obj.article_audience:
            self.message_user(request, _("No draft article yet: draft one from this escalation."), messages.WARNING)
            return self._back(obj)
        if not articles.article_may_edit(escalation=obj, user=request.user):
            raise PermissionDenied  # the draft's audience is not one this member holds
        held = sorted(staff_access(request).audience_slugs(obj.tenant_id))
        form = ArticleForm(request.POST if request.method == "POST" and "question" in request.POST else None,
                           initial={"question": obj.article_question, "answer": obj.article_answer,
                                    "audience": obj.article_audience})
        audience_field = form.fields["audience"]
        assert isinstance(audience_field, forms.ChoiceField)  # declared so above
        audience_field.choices = [(s, s) for s in held]
        if form.is_bound:
            if request.POST.get("audience") not in held:
                raise PermissionDenied  # a forged audience: only one the member holds
            if form.is_valid():
                data = form.cleaned_data
                try:
                    if request.POST.get("action") == "publish":
                        job = articles.article_publish(escalation=obj, user=request.user, question=data["question"],
                                                       answer=data["answer"], audience=data["audience"])
                        self.message_user(request, _("Article %(slug)s published to %(audience)s (ingest job "
                                                     "#%(job)s); it is a document like any other.")
                                          % {"slug": escalations.ticket_slug(obj), "audience": job.audience,
                                             "job": job.pk})
                        return self._back(obj)
                    articles.article_draft_save(escalation=obj, user=request.user, question=data["question"],
                                                answer=data["answer"], audience=data["audience"])
                    self.message_user(request, _("Draft saved, not published."))
                    return HttpResponseRedirect(reverse("admin:answering_escalation_article", args=[obj.pk]))
                except articles.ArticleRefused as exc:
                    raise PermissionDenied from exc
                except (escalations.EscalationConflict, ValueError, UploadRejected) as exc:
                    form.add_error(None, str(exc))
        context = {**self.admin_site.each_context(request),
                   "title": _("Knowledge-base article from escalation #%(id)s") % {"id": obj.pk},
                   "opts": self.opts, "escalation": obj, "form": form,
                   "published": obj.knowledge_job_id is not None}
        return TemplateResponse(request, "admin/answering/escalation/article.html", context)

    def change_view(self, request: HttpRequest, object_id: str, form_url: str = "",
                    extra_context: dict[str, Any] | None = None) -> Any:
        obj = self.get_object(request, object_id)
        context = {**(extra_context or {}), "show_save": False, "show_save_and_continue": False,
                   "show_save_and_add_another": False, "show_delete": False}
        if obj is not None:
            context.update(escalation=obj, can_work=self.has_change_permission(request, obj),
                           article_editable=articles.article_may_edit(escalation=obj, user=request.user),
                           article_checkbox=ARTICLE_CHECKBOX, mail_sends=mail_sends(),
                           no_mail_server=NO_MAIL_SERVER_TEXT)
        return super().change_view(request, object_id, form_url, context)


class TriageFilter(admin.SimpleListFilter):
    title = gettext_lazy("feedback triage")
    parameter_name = "triage"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(c, str(triage.CATEGORY_LABELS[c])) for c in triage.CATEGORIES]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Trace]) -> QuerySet[Trace]:
        if self.value() not in triage.CATEGORIES:
            return queryset
        with_feedback = list(queryset.filter(feedback__isnull=False).order_by("-created_at")[:TRIAGE_FILTER_LIMIT])
        results = triage.triage_traces(traces=with_feedback)
        return queryset.filter(pk__in=[pk for pk, r in results.items() if r.category == self.value()])


@admin.register(Trace)
class TraceAdmin(TenantScopedAdmin):
    audience_field, audience_key = "audiences", "slug"
    list_display = ["id", "tenant", "short_question", "action", "generator", "cache_hit", "latency", "cost_usd",
                    "feedback", "created_at"]
    list_filter = [TriageFilter, "action", "cache_hit", "feedback", "tenant"]
    search_fields = ["question", "conversation_id"]
    list_select_related = ["tenant"]
    fieldsets = [
        (gettext_lazy("Request"), {"fields": ["tenant", "created_at", "conversation_id", "audience_list", "question",
                                "rewritten_query", "history_turns", "action", "escalation_link"]}),
        (gettext_lazy("Answer"), {"fields": ["answer", "citations_display"]}),
        (gettext_lazy("Latency"), {"fields": ["stages_display"]}),
        (gettext_lazy("Retrieval"), {"fields": ["gate_display", "candidates_display"]}),
        (gettext_lazy("Cost and cache"), {"fields": ["cost_display"]}),
        (gettext_lazy("Feedback"), {"fields": ["vote", "feedback_comment", "triage_display"]}),
    ]
    readonly_fields = ["tenant", "created_at", "conversation_id", "audience_list", "question", "rewritten_query",
                       "history_turns", "action", "escalation_link", "answer", "citations_display", "stages_display",
                       "gate_display", "candidates_display", "cost_display", "vote", "feedback_comment",
                       "triage_display"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Trace | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Trace | None = None) -> bool:
        return False

    @admin.display(description=gettext_lazy("question"))
    def short_question(self, obj: Trace) -> str:
        return obj.question[:80]

    @admin.display(description=gettext_lazy("audiences"))
    def audience_list(self, obj: Trace) -> str:
        return ", ".join(obj.audiences or []) or "—"

    @admin.display(description=gettext_lazy("feedback"))
    def vote(self, obj: Trace) -> str:
        votes: dict[int | None, str] = {1: _("voted up"), -1: _("voted down")}
        return votes.get(obj.feedback, "—")

    @admin.display(description=gettext_lazy("latency"))
    def latency(self, obj: Trace) -> str:
        return f"{parts.total_latency_ms(obj):.0f} ms"

    @admin.display(description=gettext_lazy("escalation"))
    def escalation_link(self, obj: Trace) -> str:
        escalation = Escalation.objects.filter(tenant_id=obj.tenant_id, trace_id=obj.pk).values_list("pk", "status").first()
        if escalation is None:
            return "—"
        url = reverse("admin:answering_escalation_change", args=[escalation[0]])
        return format_html('<a href="{}">{}</a>', url, _("escalation #%(id)s (%(status)s)")
                           % {"id": escalation[0], "status": escalation[1]})

    @admin.display(description=gettext_lazy("citations and claim checks"))
    def citations_display(self, obj: Trace) -> str:
        return parts.citations_html(trace=obj)

    @admin.display(description=gettext_lazy("stages"))
    def stages_display(self, obj: Trace) -> str:
        return parts.stages_html(trace=obj)

    @admin.display(description=gettext_lazy("confidence gate"))
    def gate_display(self, obj: Trace) -> str:
        return parts.gate_html(trace=obj)

    @admin.display(description=gettext_lazy("candidates"))
    def candidates_display(self, obj: Trace) -> str:
        retrieval = obj.retrieval or {}
        return parts.candidates_html(candidates=retrieval.get("candidates") or [])

    @admin.display(description=gettext_lazy("cost, tokens, cache"))
    def cost_display(self, obj: Trace) -> str:
        return parts.cost_html(trace=obj)

    @admin.display(description=gettext_lazy("triage"))
    def triage_display(self, obj: Trace) -> str:
        if obj.feedback is None:
            return _("— (no feedback)")
        result = triage.trace_triage(obj)
        return format_html("<strong>{}</strong>: {}", result.label, result.reason)

    def get_urls(self) -> list[Any]:
        view = self.admin_site.admin_view(self.dashboard)
        return [path("dashboard/", view, name="answering_dashboard"),
                path("answer-mode/", self.admin_site.admin_view(self.answer_mode), name="answering_answer_mode"),
                ] + super().get_urls()

    def dashboard(self, request: HttpRequest) -> TemplateResponse:
        if not self.has_view_permission(request):
            raise PermissionDenied
        return dashboard_view(request, admin_site=self.admin_site, access=staff_access(request))

    def answer_mode(self, request: HttpRequest) -> TemplateResponse:
        if not self.has_view_permission(request):
            raise PermissionDenied
        return answer_mode_view(request, admin_site=self.admin_site, access=staff_access(request))

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> Any:
        access = staff_access(request)
        stats = answer_stats(tenant_ids=access.tenant_ids(), audiences=access.slugs_by_tenant())
        return super().changelist_view(request, {**(extra_context or {}), "answer_stats": stats})
