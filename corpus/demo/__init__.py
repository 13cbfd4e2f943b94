"""The demo corpus: facts declared in Python, prose rendered from deterministic templates.

spec*.py declare what the corpus says, templates.py/phrasebook.py say it in prose, and
generate.py writes corpus/demo/output/ (committed) and checks every declared fact is there.
"""
