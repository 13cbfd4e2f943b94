from django.contrib import admin
from django.urls import path

from config import health

admin.site.site_header = "Answerdesk console"
admin.site.site_title = "Answerdesk"
admin.site.index_title = "Support operations"

urlpatterns = [
    path("health", health.health, name="health"),
    path("admin/", admin.site.urls),
]
