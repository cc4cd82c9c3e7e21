"""``agenteval view``: a local, read-only web viewer over the runs under a folder.

:func:`agenteval.view.app.make_app` builds the aiohttp application and
:func:`agenteval.view.app.start` serves it; :mod:`agenteval.view.catalog` finds and reads
the runs, :mod:`agenteval.view.index` indexes a run's trials for paging and filtering, and
:mod:`agenteval.view.pages` computes what each page shows. See docs/view.md.

Importing this package imports nothing heavy: :mod:`agenteval.frames` uses the catalog
without the web server.
"""
