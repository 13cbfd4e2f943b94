"""Row-level security context for signed-in staff.

Staff pages (the admin) read tenant metadata such as document titles through the ORM. The
policies admit rows whose tenant is in `app.staff_tenant_ids`; this middleware runs the
request inside one transaction whose setting names the tenants the user belongs to (all
tenants for a superuser). The setting is transaction-local (docs/decisions/0035): it ends
with the transaction, so a pooled server connection never carries it into another client's
request. It never opens chunk text: that goes through the scope, whose policy ignores it.

A streaming response's body is produced after this returns, outside the transaction and
without the setting; the chat stream sets its own tenant context.
"""

from __future__ import annotations

from collections.abc import Callable

from django.db import transaction
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
            response = self.get_response(request)
            if response.status_code >= 500:
                # The view's exception was turned into this response below us; what it half
                # wrote is not committed on its behalf.
                transaction.set_rollback(True)
            return response
