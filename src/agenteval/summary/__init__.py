"""The numbers of a run, computed once: the streaming fold behind every summary
(:mod:`.accumulator`, :mod:`.contribution`), the :class:`~.model.Summary` model, statistics
(:mod:`.stats`, :mod:`.distributions`), per-case aggregates over repeats (:mod:`.percase`),
what a summary reads besides the trials (:mod:`.sources`), the live summary of a run being
written (:mod:`.live`) and summarising a run directory (:mod:`.compute`)."""
