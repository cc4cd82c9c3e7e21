"""What a judgment is, in general: :class:`~.score.Score` and its statuses, the
:class:`~.spec.Scorer` object and the :class:`~.spec.ScorerSpec` that ``run.json`` records,
applying a set of scorers to a trial (:mod:`.apply`) and the scores that cannot be given
when content was not recorded (:mod:`.unrecorded`). The built-in scorers are in
:mod:`agenteval.scorers`, one layer up."""
