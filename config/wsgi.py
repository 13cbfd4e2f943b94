import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

application = get_wsgi_application()

from config.checks import refuse_unsafe_start  # noqa: E402  (as in config/asgi.py)

refuse_unsafe_start()
