from django.apps import AppConfig


class CachelayerConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "cachelayer"

    def ready(self) -> None:
        # The cache forgets entries built on chunks an ingest retired (corpus/ingest/hooks.py).
        from cachelayer.service import invalidate_chunks
        from corpus.ingest.hooks import chunk_listener_register

        chunk_listener_register(invalidate_chunks)
