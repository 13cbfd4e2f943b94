from django.contrib import admin
from django.urls import include, path
from django.utils.translation import gettext_lazy

from answering.chat import embed, front
from config import health
from config.api import api, openai_api
from tenants.loginlimits import login_rate_limited

admin.site.site_header = gettext_lazy("Answerdesk console")
admin.site.site_title = "Answerdesk"
admin.site.index_title = gettext_lazy("Support operations")

urlpatterns = [
    path("", front.front_door, name="front_door"),
    path("embed.js", embed.embed_script, name="embed_script"),
    path("health", health.health, name="health"),
    # Ahead of the admin's own login URL, which it shadows: same view, with attempt limits.
    path("admin/login/", login_rate_limited(admin.site.login)),
    path("admin/", admin.site.urls),
    # Django's set_language: the console's language switch stores a member's choice in the
    # language cookie, which LocaleMiddleware reads before Accept-Language (0110).
    path("i18n/", include("django.conf.urls.i18n")),
    path("api/v1/openai/", openai_api.urls),
    path("api/v1/", api.urls),
    path("t/<slug:tenant_slug>/", include("answering.chat.urls")),
]
