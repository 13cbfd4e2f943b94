import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

application = get_asgi_application()

# uvicorn runs no system checks; a connection that row-level security does not bind stops here.
from config.checks import refuse_unsafe_start  # noqa: E402  (needs the apps loaded above)

refuse_unsafe_start()
