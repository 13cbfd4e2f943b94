"""The demo corpus, as data: two tenants' documents (<tenant>/), what they are declared to say
(facts/<tenant>.yaml, read by declared.py), and the loader (load.py)."""
