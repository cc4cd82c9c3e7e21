"""Running an evaluation: the :class:`~.session.Session` (validate, open the run, run every
trial, summarise), the concurrent :mod:`.runner`, the stop signals (:mod:`.signals`) and
finishing a run (:mod:`.finish`)."""
