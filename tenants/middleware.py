"""Row-level security context for signed-in staff.

Staff pages (the admin) read tenant metadata such as document titles through the ORM. The
`corpus_document` policy admits rows whose tenant is in `app.staff_tenant_ids`; this
middleware sets it to the tenants the user belongs to (all tenants for a superuser) and
clears it when the response is done. It never opens chunk text: that goes through the
scope, whose policy ignores this setting.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from tenants.rls import staff_tenant_ids, staff_tenant_context


class TenantRowSecurityMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated or not user.is_staff:
            return self.get_response(request)
        with staff_tenant_context(staff_tenant_ids(user)):
            return self.get_response(request)
